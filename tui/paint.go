package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/foliodev/folio/receipt"
	"github.com/foliodev/folio/transcript"
)

// Painter turns entries into styled terminal lines. Its output is a pure
// function of the entries, the width, which entries are expanded, and the
// painter's configuration (theme, adapters, time zone, view); that is what
// makes painted lines cacheable by entry fingerprint.
//
// A Painter is safe for concurrent use; its configuration never changes
// after NewPainter.
type Painter struct {
	theme    Theme
	pal      *palette
	adapters *Registry
	loc      *time.Location
	classic  bool
	// unattended: nobody can press a key (folio run, folio log show).
	unattended bool
}

// PainterOption configures a Painter.
type PainterOption func(*Painter)

// WithAdapters sets the registry of tool-presentation adapters. Without it
// the built-in adapters (DefaultRegistry) are used.
func WithAdapters(r *Registry) PainterOption { return func(p *Painter) { p.adapters = r } }

// WithLocation sets the time zone of the turn receipt's finish time. The
// default is time.Local.
func WithLocation(loc *time.Location) PainterOption { return func(p *Painter) { p.loc = loc } }

// ForClassic makes the painter paint for the classic view, which also shows
// notices meant only for it (audience "classic").
func ForClassic() PainterOption { return func(p *Painter) { p.classic = true } }

// Unattended paints for output nobody can interact with (folio run, folio
// log show): what a viewer would hide behind a key is shown, and no hint
// names a key.
func Unattended() PainterOption { return func(p *Painter) { p.unattended = true } }

// NewPainter returns a painter for the theme.
func NewPainter(th Theme, opts ...PainterOption) *Painter {
	p := &Painter{theme: th, pal: th.palette(), adapters: DefaultRegistry(), loc: time.Local}
	for _, o := range opts {
		o(p)
	}
	return p
}

// WithTheme returns a painter like p with another theme, for when the
// terminal reports its background color.
func (p *Painter) WithTheme(th Theme) *Painter {
	q := *p
	q.theme, q.pal = th, th.palette()
	return &q
}

// Theme returns the painter's theme.
func (p *Painter) Theme() Theme { return p.theme }

// Run is a run of consecutive entries painted as one block: a reasoning
// fold, a row-packed run of tool receipts, or a single entry. Entries keep
// their identities inside a run; Expanded is per entry.
type Run struct {
	Entries  []transcript.Entry
	Open     []bool // Open[i]: entry i is still streaming or running
	Expanded []bool // Expanded[i]: the person asked to see entry i in full
}

// Paint paints a run at width columns. Every returned line fits the width.
// The block separator (a blank line) is not included.
func (p *Painter) Paint(r Run, width int) []string {
	if width < 4 {
		width = 4
	}
	if len(r.Entries) == 0 {
		return nil
	}
	var lines []string
	switch r.Entries[0].Content.(type) {
	case transcript.Reasoning:
		lines = p.reasoning(r, width)
	case transcript.Tool:
		lines = p.tools(r, width)
	default:
		lines = p.entry(r.Entries[0], width, at(r.Open, 0), at(r.Expanded, 0))
	}
	lines = clamp(lines, width)
	for i, l := range lines {
		lines[i] = p.theme.finish(l)
	}
	return lines
}

// PaintEntry paints a single entry, as Paint does for a run of one.
func (p *Painter) PaintEntry(e transcript.Entry, width int, expanded bool) []string {
	return p.Paint(Run{Entries: []transcript.Entry{e}, Expanded: []bool{expanded}}, width)
}

func at(b []bool, i int) bool { return i < len(b) && b[i] }

// family says which entries fold or pack together with their neighbours.
func family(c transcript.Content) transcript.Kind {
	switch c.(type) {
	case transcript.Reasoning:
		return transcript.KindReasoning
	case transcript.Tool:
		return transcript.KindTool
	}
	return ""
}

func (p *Painter) entry(e transcript.Entry, width int, open, expanded bool) []string {
	s := p.pal
	switch c := e.Content.(type) {
	case transcript.User:
		return styleAll(wrapIndent(sanitize(c.Text), width, "› ", "  "), s.user)
	case transcript.Agent:
		return p.markdown(c.Markdown, width)
	case transcript.Notice:
		if c.Audience == "classic" && !p.classic {
			return nil
		}
		glyph, st := p.tone(c.Tone)
		return styleAll(wrapIndent(sanitize(c.Text), width, glyph+" ", "  "), st)
	case transcript.ReportContent:
		return p.report(c.Report, width)
	case transcript.Header:
		parts := []string{sanitize(c.Name)}
		if c.Provider != "" {
			parts = append(parts, sanitize(c.Provider))
		}
		if c.Model != "" {
			parts = append(parts, sanitize(c.Model))
		}
		return []string{s.accent.Render(truncate("◆ "+strings.Join(parts, " · "), width))}
	case transcript.TurnReceipt:
		out := styleAll(wrap(receipt.Line(c, p.loc), width), s.dim)
		if expanded {
			for i, st := range c.Steps {
				out = append(out, styleAll(wrapIndent(receipt.StepLine(i+1, st), width, "  ", "  "), s.faint)...)
			}
		}
		return out
	case transcript.Stopped:
		out := []string{s.warn.Render("■ Stopped after " + receipt.Duration(c.Summary.ElapsedMs))}
		for _, d := range c.Summary.Done {
			out = append(out, styleAll(wrapIndent(sanitize(d), width, "  ✓ ", "    "), s.dim)...)
		}
		for _, d := range c.Summary.NotDone {
			out = append(out, styleAll(wrapIndent(sanitize(d), width, "  ○ ", "    "), s.faint)...)
		}
		return out
	case transcript.Expanded:
		return styleAll(wrapIndent(sanitize(c.Text), width, "│ ", "│ "), s.dim)
	case transcript.Failure:
		head := c.Headline
		if head == "" {
			head = c.Reason
		}
		out := styleAll(wrapIndent(sanitize(head), width, "✗ ", "  "), s.bad.Bold(true))
		switch {
		case expanded:
			if c.Detail != "" {
				out = append(out, styleAll(wrapIndent(sanitize(c.Detail), width, "  ", "  "), s.dim)...)
			}
			facts := "reason: " + sanitize(c.Reason)
			if c.Retryable {
				facts += " · retryable"
				if c.RetryAfterMs != nil {
					facts += " after " + receipt.Duration(*c.RetryAfterMs)
				}
			}
			out = append(out, styleAll(wrapIndent(facts, width, "  ", "  "), s.faint)...)
		case c.Detail != "" && p.unattended:
			out = append(out, styleAll(wrapIndent(sanitize(c.Detail), width, "  ", "  "), s.dim)...)
		case c.Detail != "":
			out = append(out, s.faint.Render("  details hidden · expand to show"))
		}
		return out
	case transcript.Steering:
		return styleAll(wrapIndent(sanitize(c.Text), width, "↳ ", "  "), s.user.Bold(false).Italic(true))
	case transcript.Compaction:
		out := []string{s.faint.Render(truncate("⋯ earlier conversation summarized", width))}
		if expanded {
			out = append(out, styleAll(wrapIndent(sanitize(c.Summary), width, "│ ", "│ "), s.dim)...)
		}
		return out
	case transcript.Reasoning, transcript.Tool:
		return p.Paint(Run{Entries: []transcript.Entry{e}, Open: []bool{open}, Expanded: []bool{expanded}}, width)
	}
	// A kind this painter does not know: say so rather than show nothing.
	return []string{s.faint.Render(truncate(fmt.Sprintf("(%s entry)", e.Content.Kind()), width))}
}

// markdown paints a whole answer: its blocks rendered one by one and joined
// by one blank line. A streaming answer is painted the same way, which is
// why settlement never moves text that was already on screen.
func (p *Painter) markdown(src string, width int) []string {
	var out []string
	for _, b := range splitBlocks(src) {
		out = appendBlock(out, renderBlock(b, p.theme, width))
	}
	return out
}

// markdownBlock paints one markdown block as finished lines (clamped to
// the width and downsampled to the theme), the unit the streaming path and
// the classic promotion work in.
func (p *Painter) markdownBlock(src string, width int) []string {
	if width < 4 {
		width = 4
	}
	lines := clamp(renderBlock(src, p.theme, width), width)
	for i, l := range lines {
		lines[i] = p.theme.finish(l)
	}
	return lines
}

// appendBlock joins rendered markdown blocks with one blank line.
func appendBlock(out, block []string) []string {
	if len(block) == 0 {
		return out
	}
	if len(out) > 0 {
		out = append(out, "")
	}
	return append(out, block...)
}

func (p *Painter) tone(t transcript.Tone) (string, styleFn) {
	s := p.pal
	switch t {
	case transcript.ToneSuccess:
		return "✓", s.ok
	case transcript.ToneWarn:
		return "!", s.warn
	case transcript.ToneError:
		return "✗", s.bad
	case transcript.ToneDebug:
		return "·", s.faint
	case transcript.ToneLog:
		return "·", s.dim
	}
	return "•", s.info
}

// reasoning paints a fold over consecutive reasoning steps: one summary
// line for the run, then the text of each step the person expanded.
func (p *Painter) reasoning(r Run, width int) []string {
	s := p.pal
	var ms float64
	var timed, open bool
	label := "Thought"
	for i, e := range r.Entries {
		c := e.Content.(transcript.Reasoning)
		if c.DurationMs != nil {
			ms += *c.DurationMs
			timed = true
		}
		if c.Label != "" {
			label = c.Label
		}
		open = open || at(r.Open, i)
	}
	head := "▸ " + sanitize(label)
	if open {
		head = "▸ Thinking…"
	} else if timed {
		head += " for " + receipt.Duration(ms)
	}
	if n := len(r.Entries); n > 1 {
		head += fmt.Sprintf(" · %d steps", n)
	}
	out := []string{s.dim.Italic(true).Render(truncate(head, width))}
	if open {
		// While thinking, show where the thought is: the last line of the
		// open step, cut to one row.
		last := r.Entries[len(r.Entries)-1].Content.(transcript.Reasoning).Text
		last = strings.TrimSpace(last[strings.LastIndexByte(strings.TrimRight(last, "\n"), '\n')+1:])
		if last != "" && !at(r.Expanded, len(r.Entries)-1) {
			out = append(out, s.faint.Render(truncate("  │ "+oneLine(last), width)))
		}
	}
	for i, e := range r.Entries {
		if !at(r.Expanded, i) {
			continue
		}
		c := e.Content.(transcript.Reasoning)
		sub := fmt.Sprintf("  ▾ step %d", i+1)
		if c.DurationMs != nil {
			sub += " · " + receipt.Duration(*c.DurationMs)
		}
		out = append(out, s.faint.Render(truncate(sub, width)))
		out = append(out, styleAll(wrapIndent(sanitize(c.Text), width, "  │ ", "  │ "), s.dim)...)
	}
	return out
}

// styleFn is a lipgloss style's Render method, so plain functions can stand
// in for styles.
type styleFn interface{ Render(...string) string }

func styleAll(lines []string, st styleFn) []string {
	for i, l := range lines {
		if l != "" {
			lines[i] = st.Render(l)
		}
	}
	return lines
}

// textWidth is the display width of unstyled text.
func textWidth(s string) int { return ansi.StringWidth(s) }
