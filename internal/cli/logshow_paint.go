package cli

import (
	"fmt"
	"github.com/foliodev/folio/internal/termtext"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/foliodev/folio/receipt"
	"github.com/foliodev/folio/transcript"
	"github.com/foliodev/folio/tui"
)

// The plain form's painting of the runs most of a conversation is made of
// (prompts, settled tool rows, reasoning folds, turn receipts, notices,
// the header), line for line what tui.Painter paints for them in its plain
// theme, without styling each line only to strip the styles again, which
// is most of what the painter costs. Any other run, or one this does not
// know how to paint exactly (an open entry, a tool presentation an adapter
// draws), is painted by tui.Painter. TestPlainRunsPaintAsThePainter holds
// the two to the same lines.

// quickRun paints run r of the plain form, or returns ok false for the
// painter to paint it.
func (pp *plainPainter) quickRun(r tui.Run) (lines []string, ok bool) {
	width := max(pp.width, 4)
	for _, o := range r.Open {
		if o {
			return nil, false
		}
	}
	switch c := r.Entries[0].Content.(type) {
	case transcript.User:
		lines = wrapIndent(sanitize(c.Text), width, "› ", "  ")
	case transcript.Steering:
		lines = wrapIndent(sanitize(c.Text), width, "↳ ", "  ")
	case transcript.Notice:
		lines = wrapIndent(sanitize(c.Text), width, toneGlyph(c.Tone)+" ", "  ")
	case transcript.TurnReceipt:
		lines = wrap(receipt.Line(c, pp.loc), width)
	case transcript.Header:
		parts := []string{sanitize(c.Name)}
		if c.Provider != "" {
			parts = append(parts, sanitize(c.Provider))
		}
		if c.Model != "" {
			parts = append(parts, sanitize(c.Model))
		}
		lines = []string{truncate("◆ "+strings.Join(parts, " · "), width)}
	case transcript.Reasoning:
		lines = []string{truncate(reasoningHead(r.Entries), width)}
	case transcript.Tool:
		lines, ok = pp.tools(r.Entries, width)
		if !ok {
			return nil, false
		}
	default:
		return nil, false
	}
	return clampPlain(lines, width), true
}

func toneGlyph(t transcript.Tone) string {
	switch t {
	case transcript.ToneSuccess:
		return "✓"
	case transcript.ToneWarn:
		return "!"
	case transcript.ToneError:
		return "✗"
	case transcript.ToneDebug, transcript.ToneLog:
		return "·"
	}
	return "•"
}

// reasoningHead is a settled reasoning fold's one line.
func reasoningHead(es []transcript.Entry) string {
	var ms float64
	timed := false
	label := "Thought"
	for _, e := range es {
		c := e.Content.(transcript.Reasoning)
		if c.DurationMs != nil {
			ms += *c.DurationMs
			timed = true
		}
		if c.Label != "" {
			label = c.Label
		}
	}
	head := "▸ " + sanitize(label)
	if timed {
		head += " for " + receipt.Duration(ms)
	}
	if n := len(es); n > 1 {
		head += fmt.Sprintf(" · %d steps", n)
	}
	return head
}

// The tool rows' layout (tui/tools.go).
const (
	presentationLines = 12
	packCellMax       = 40
	packGap           = "   "
)

// tools paints a settled run of tool entries: short receipts packed
// several to a row, the others on rows of their own with what they show
// under them.
func (pp *plainPainter) tools(es []transcript.Entry, width int) ([]string, bool) {
	var out, row []string
	rowW := 0
	flush := func() {
		if len(row) > 0 {
			out = append(out, strings.Join(row, packGap))
			row, rowW = row[:0], 0
		}
	}
	for _, e := range es {
		c := e.Content.(transcript.Tool)
		line := receiptText(c)
		w := ansi.StringWidth(line)
		if toolPackable(c) && w <= min(packCellMax, width) {
			if len(row) > 0 && rowW+len(packGap)+w > width {
				flush()
			}
			if len(row) > 0 {
				rowW += len(packGap)
			}
			row = append(row, line)
			rowW += w
			continue
		}
		flush()
		out = append(out, truncate(line, width))
		body, ok := pp.toolBody(c, width)
		if !ok {
			return nil, false
		}
		out = append(out, body...)
	}
	flush()
	return out, true
}

func toolPackable(c transcript.Tool) bool {
	rc := c.Receipt
	return c.Presentation == nil && len(c.Supplementals) == 0 && rc.Status == transcript.ToolOK && rc.Detail == "" &&
		rc.OutputPreview == "" && rc.DiffPreview == nil && rc.DiffText == "" && rc.Reason == "" && rc.NotDone == ""
}

// receiptText is a settled tool's receipt line.
func receiptText(c transcript.Tool) string {
	rc := c.Receipt
	var b strings.Builder
	switch rc.Status {
	case transcript.ToolOK:
		b.WriteString("✓ ")
	case transcript.ToolDenied:
		b.WriteString("⊘ ")
	default:
		b.WriteString("✗ ")
	}
	app := oneLine(rc.App)
	b.WriteString(app)
	if rc.Summary != "" {
		if s := oneLine(rc.Summary); s != app {
			b.WriteByte(' ')
			b.WriteString(s)
		}
	}
	if rc.DurationMs != nil {
		b.WriteByte(' ')
		if ms := *rc.DurationMs; ms >= 0 && ms < 999.5 {
			fmt.Fprintf(&b, "%.0fms", ms)
		} else {
			b.WriteString(receipt.Duration(ms))
		}
	}
	return b.String()
}

// toolBody is what a settled, collapsed tool shows under its receipt; ok
// false for a presentation an adapter draws.
func (pp *plainPainter) toolBody(c transcript.Tool, width int) ([]string, bool) {
	rc := c.Receipt
	var out []string
	if rc.Reason != "" {
		out = append(out, wrapIndent(sanitize(reasonText(rc.Reason)), width, "  ", "  ")...)
	}
	if rc.NotDone != "" {
		out = append(out, wrapIndent("not done: "+sanitize(string(rc.NotDone)), width, "  ", "  ")...)
	}
	switch {
	case c.Presentation != nil:
		if pp.drawn(c.Presentation, width) {
			return nil, false
		}
		out = append(out, wrapIndent(tui.PresentationSummary(c.Presentation), width, "  ", "    ")...)
	case rc.DiffPreview != nil:
		return nil, false // the painter's colored diff lines
	case rc.OutputPreview != "":
		out = append(out, tailLines(wrapIndent(sanitize(rc.OutputPreview), width, "  ", "  "), presentationLines)...)
	}
	for i := range c.Supplementals {
		pr := &c.Supplementals[i].Presentation
		if pp.drawn(pr, width) {
			return nil, false
		}
		out = append(out, wrapIndent(tui.PresentationSummary(pr), width, "  ", "    ")...)
	}
	return out, true
}

// drawn reports whether an adapter draws presentation pr (else the
// painter shows its size only).
func (pp *plainPainter) drawn(pr *transcript.Presentation, width int) bool {
	a, ok := pp.adapters.Lookup(pr.Schema, pr.Version)
	if !ok {
		return false
	}
	_, err := a.Render(pr, width-2, tui.PlainTheme)
	return err == nil
}

// tailLines keeps the last limit lines, saying how many were left out.
func tailLines(lines []string, limit int) []string {
	if len(lines) <= limit {
		return lines
	}
	hidden := len(lines) - limit + 1
	return append([]string{fmt.Sprintf("  … %d earlier lines", hidden)}, lines[hidden:]...)
}

func reasonText(r string) string {
	for _, c := range r {
		if (c < 'a' || c > 'z') && c != '_' {
			return r
		}
	}
	return strings.ReplaceAll(r, "_", " ")
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(sanitize(s)), " ")
}

func truncate(s string, width int) string {
	if len(s) <= width || ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, "…")
}

// clampPlain breaks lines wider than width (a line of no more bytes than
// columns fits).
func clampPlain(lines []string, width int) []string {
	var out []string
	for i, l := range lines {
		if len(l) <= width || ansi.StringWidth(l) <= width {
			if out != nil {
				out = append(out, l)
			}
			continue
		}
		if out == nil {
			out = append(make([]string, 0, len(lines)+4), lines[:i]...)
		}
		out = append(out, strings.Split(ansi.Hardwrap(l, width, true), "\n")...)
	}
	if out == nil {
		return lines
	}
	return out
}

// The painter's text rules (termtext), so plain lines equal painted ones.
var (
	sanitize   = termtext.Sanitize
	wrap       = termtext.Wrap
	wrapIndent = termtext.WrapIndent
)
