package tui

import (
	"fmt"
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"

	"github.com/foliodev/folio/receipt"
	"github.com/foliodev/folio/transcript"
)

// Adapter shows one tool-presentation schema (at one version) in the
// terminal. It owns the payload format; nothing else in folio looks inside
// a payload. Render returns plain or styled lines no wider than width,
// styled for th (the painter downsamples colors afterwards, so an adapter
// need only choose between dark and light). An error (a payload it cannot
// read) makes the painter fall back to the bounded host metadata.
type Adapter interface {
	Render(p *transcript.Presentation, width int, th Theme) ([]string, error)
}

// AdapterFunc adapts a function to the Adapter interface.
type AdapterFunc func(p *transcript.Presentation, width int, th Theme) ([]string, error)

// Render calls f.
func (f AdapterFunc) Render(p *transcript.Presentation, width int, th Theme) ([]string, error) {
	return f(p, width, th)
}

// Registry maps a presentation schema name and version to its adapter. It is
// safe for concurrent use. Register adapters before painting: painted lines
// are cached, and a later registration does not repaint them.
type Registry struct {
	mu sync.RWMutex
	m  map[adapterKey]Adapter
}

type adapterKey struct {
	schema  string
	version int64
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{m: map[adapterKey]Adapter{}} }

// Register adds the adapter for schema at version. A second adapter for the
// same pair is refused with ErrAdapterExists.
func (r *Registry) Register(schema string, version int64, a Adapter) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := adapterKey{schema, version}
	if _, dup := r.m[k]; dup {
		return fmt.Errorf("%w: %s v%d", ErrAdapterExists, schema, version)
	}
	r.m[k] = a
	return nil
}

// Lookup returns the adapter for schema at version.
func (r *Registry) Lookup(schema string, version int64) (Adapter, bool) {
	if r == nil {
		return nil, false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	a, ok := r.m[adapterKey{schema, version}]
	return a, ok
}

// Presentation lines shown for one tool: collapsed, a short tail; expanded,
// more, but still bounded so one tool cannot flood the view.
const (
	presentationLinesCollapsed = 12
	presentationLinesExpanded  = 400
	packCellMax                = 40 // widest receipt that may share a row
	packGap                    = "   "
)

// tools paints a run of consecutive tool entries. Short receipts (no
// presentation, no detail, nothing expanded, status ok) are packed several
// to a row when they fit the width; the others take their own rows with
// their details and presentations below them.
func (p *Painter) tools(r Run, width int) []string {
	var out []string
	var row []string
	rowW := 0
	flush := func() {
		if len(row) > 0 {
			out = append(out, strings.Join(row, packGap))
			row, rowW = nil, 0
		}
	}
	for i, e := range r.Entries {
		c := e.Content.(transcript.Tool)
		open, expanded := at(r.Open, i), at(r.Expanded, i)
		plain, w := p.receiptText(c, open)
		if !expanded && packable(c) && w <= min(packCellMax, width) {
			if len(row) > 0 && rowW+len(packGap)+w > width {
				flush()
			}
			if len(row) > 0 {
				rowW += len(packGap)
			}
			row = append(row, p.styleReceipt(c, open, plain))
			rowW += w
			continue
		}
		flush()
		out = append(out, p.styleReceipt(c, open, truncate(plain, width)))
		out = append(out, p.toolBody(c, width, expanded, open)...)
	}
	flush()
	return out
}

// packable reports whether a receipt has nothing to show beyond its line.
func packable(c transcript.Tool) bool {
	rc := c.Receipt
	return c.Presentation == nil && len(c.Supplementals) == 0 && rc.Status == transcript.ToolOK && rc.Detail == "" &&
		rc.OutputPreview == "" && rc.DiffPreview == nil && rc.DiffText == "" && rc.Reason == "" && rc.NotDone == ""
}

// receiptText is the unstyled receipt line: status glyph, tool, summary and
// duration.
func (p *Painter) receiptText(c transcript.Tool, open bool) (string, int) {
	rc := c.Receipt
	var b strings.Builder
	switch {
	case open:
		b.WriteString("◌ ")
	case rc.Status == transcript.ToolOK:
		b.WriteString("✓ ")
	case rc.Status == transcript.ToolDenied:
		b.WriteString("⊘ ")
	default:
		b.WriteString("✗ ")
	}
	b.WriteString(oneLine(rc.App))
	// The engine names a call by its tool until it has a summary; say the
	// name once.
	if rc.Summary != "" && oneLine(rc.Summary) != oneLine(rc.App) {
		b.WriteByte(' ')
		b.WriteString(oneLine(rc.Summary))
	}
	if rc.DurationMs != nil && !open {
		b.WriteByte(' ')
		b.WriteString(shortDuration(*rc.DurationMs))
	}
	s := b.String()
	return s, textWidth(s)
}

func (p *Painter) styleReceipt(c transcript.Tool, open bool, plain string) string {
	s := p.pal
	glyph, rest, _ := strings.Cut(plain, " ")
	gs := s.ok
	switch {
	case open:
		gs = s.info
	case c.Receipt.Status == transcript.ToolDenied:
		gs = s.warn
	case c.Receipt.Status != transcript.ToolOK:
		gs = s.bad
	}
	app, summary, _ := strings.Cut(rest, " ")
	out := gs.Render(glyph) + " " + s.bold.Render(app)
	if summary != "" {
		out += " " + s.dim.Render(summary)
	}
	return out
}

// oneLine flattens text for a single-line receipt.
func oneLine(s string) string {
	return strings.Join(strings.Fields(sanitize(s)), " ")
}

// toolBody is what a tool shows under its receipt line: why it failed, its
// presentation (through an adapter, or host metadata), and when expanded,
// its arguments, detail, output and diff.
func (p *Painter) toolBody(c transcript.Tool, width int, expanded, open bool) []string {
	s := p.pal
	rc := c.Receipt
	var out []string
	if rc.Reason != "" {
		out = append(out, styleAll(wrapIndent(sanitize(reasonText(rc.Reason)), width, "  ", "  "), s.bad)...)
	}
	// What a settled call left undone (Jazz writes it in words); an open
	// call's placeholder says so only until it settles.
	if rc.NotDone != "" && !open {
		out = append(out, styleAll(wrapIndent("not done: "+sanitize(string(rc.NotDone)), width, "  ", "  "), s.dim)...)
	}
	if c.Presentation != nil {
		out = append(out, p.presentation(c.Presentation, c.Receipt.Summary, width, expanded)...)
	} else if rc.DiffPreview != nil && !expanded {
		out = append(out, diffLines(rc.DiffPreview.Lines, rc.DiffPreview.HiddenLines, width, s)...)
	} else if rc.OutputPreview != "" && !expanded {
		out = append(out, tail(styleAll(wrapIndent(sanitize(rc.OutputPreview), width, "  ", "  "), s.dim), presentationLinesCollapsed, s)...)
	}
	// Supplemental items (retained ones, and while the call is open its
	// ephemeral ones too) each show under the primary.
	for i := range c.Supplementals {
		out = append(out, p.presentation(&c.Supplementals[i].Presentation, "", width, expanded)...)
	}
	if !expanded {
		return out
	}
	if rc.Args != "" {
		out = append(out, styleAll(wrapIndent("args: "+sanitize(rc.Args), width, "  ", "  "), s.faint)...)
	}
	if rc.Detail != "" {
		out = append(out, styleAll(wrapIndent(sanitize(rc.Detail), width, "  ", "  "), s.dim)...)
	}
	if rc.OutputPreview != "" && c.Presentation == nil {
		out = append(out, styleAll(wrapIndent(sanitize(rc.OutputPreview), width, "  ", "  "), s.dim)...)
	}
	switch {
	case rc.DiffText != "":
		out = append(out, diffLines(strings.Split(sanitize(rc.DiffText), "\n"), 0, width, s)...)
	case rc.DiffPreview != nil && c.Presentation == nil:
		out = append(out, diffLines(rc.DiffPreview.Lines, rc.DiffPreview.HiddenLines, width, s)...)
	}
	if rc.ClassifiedRisk != "" {
		out = append(out, s.faint.Render(truncate("  risk: "+oneLine(rc.ClassifiedRisk), width)))
	}
	return out
}

// presentation shows one of a tool's presentations (its primary or a
// supplemental item) through its adapter, bounded in lines; with no
// adapter, or one that cannot read the payload, it shows host metadata
// only. The payload itself is never printed. summary is the receipt's, for
// the primary.
func (p *Painter) presentation(pr *transcript.Presentation, summary string, width int, expanded bool) []string {
	s := p.pal
	if a, ok := p.adapters.Lookup(pr.Schema, pr.Version); ok {
		lines, err := a.Render(pr, width-2, p.theme)
		if err == nil {
			// The receipt line already says what the adapter's first
			// line would (the shell tool's "$ command"): say it once.
			if len(lines) > 0 && summary != "" && strings.TrimSpace(ansi.Strip(lines[0])) == oneLine(summary) {
				lines = lines[1:]
			}
			for i, l := range lines {
				lines[i] = "  " + l
			}
			limit := presentationLinesCollapsed
			if expanded {
				limit = presentationLinesExpanded
			}
			return tail(clamp(lines, width), limit, s)
		}
	}
	return styleAll(wrapIndent(PresentationSummary(pr), width, "  ", "    "), s.faint)
}

// PresentationSummary is the bounded fallback for a presentation no
// adapter draws (here and in folio log show): its size and any artifact,
// never the payload, and none of the schema names and revisions that mean
// nothing to a reader.
func PresentationSummary(pr *transcript.Presentation) string {
	var parts []string
	if n := len(pr.Payload); n > 0 {
		parts = append(parts, byteSize(int64(n))+" of details not shown here")
	}
	if a := pr.Artifact; a != nil {
		st := "partial"
		if a.Final {
			st = "final"
		}
		if !a.Available {
			st += ", unavailable"
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s)", oneLine(a.ContentType), byteSize(a.CommittedBytes), st))
	}
	if len(parts) == 0 {
		parts = append(parts, "details not shown here")
	}
	return "⧉ " + strings.Join(parts, " · ")
}

func byteSize(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1024*1024))
}

// tail keeps the last limit lines, saying how many were left out above.
func tail(lines []string, limit int, s *palette) []string {
	if len(lines) <= limit {
		return lines
	}
	hidden := len(lines) - limit + 1
	return append([]string{s.faint.Render(fmt.Sprintf("  … %d earlier lines", hidden))}, lines[hidden:]...)
}

// diffLines colors unified-diff lines: additions, removals, hunk headers.
func diffLines(lines []string, hidden int64, width int, s *palette) []string {
	var out []string
	for _, l := range lines {
		l = sanitize(l)
		st := s.dim
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			st = s.bold
		case strings.HasPrefix(l, "+"):
			st = s.ok
		case strings.HasPrefix(l, "-"):
			st = s.bad
		case strings.HasPrefix(l, "@@"):
			st = s.info
		}
		for _, w := range wrap(l, width-2) {
			out = append(out, "  "+st.Render(w))
		}
	}
	if hidden > 0 {
		out = append(out, s.faint.Render(fmt.Sprintf("  … %d more lines", hidden)))
	}
	return out
}

// shortDuration shows tool timings: milliseconds under a second, then the
// receipt's own format.
func shortDuration(ms float64) string {
	if ms >= 0 && ms < 999.5 {
		return fmt.Sprintf("%.0fms", ms)
	}
	return receipt.Duration(ms)
}

// reasonText turns a machine reason key such as "awaiting_approval", which
// the engine writes for clients to match on, into words for a person. Free
// text passes through unchanged.
func reasonText(r string) string {
	for _, c := range r {
		if (c < 'a' || c > 'z') && c != '_' {
			return r
		}
	}
	return strings.ReplaceAll(r, "_", " ")
}
