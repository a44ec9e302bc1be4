package tui

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/foliodev/folio/transcript"
)

// report paints a structured report: its label, then its rows indented
// under it, then its note.
func (p *Painter) report(r transcript.Report, width int) []string {
	s := p.pal
	out := []string{s.bold.Render(truncate(sanitize(r.Label), width))}
	out = append(out, p.rows(r.Rows, width, "  ")...)
	if r.Note != "" {
		out = append(out, styleAll(wrapIndent(sanitize(r.Note), width, "  ", "  "), s.faint)...)
	}
	return out
}

func (p *Painter) rows(rows []transcript.ReportRow, width int, indent string) []string {
	s := p.pal
	// Field labels line up within each run of consecutive fields or meters.
	labelW := 0
	for _, r := range rows {
		if r.Kind == transcript.RowField || r.Kind == transcript.RowMeter {
			labelW = max(labelW, textWidth(oneLine(r.Label)))
		}
	}
	labelW = min(labelW, max(width/3, 8))
	pad := func(l string) string {
		l = truncate(oneLine(l), labelW)
		return l + strings.Repeat(" ", labelW-textWidth(l))
	}
	var out []string
	for _, r := range rows {
		switch r.Kind {
		case transcript.RowField:
			first := indent + pad(r.Label) + "  "
			rest := strings.Repeat(" ", textWidth(first))
			lines := wrapIndent(sanitize(r.Value), width, first, rest)
			for i, l := range lines {
				if i == 0 {
					lines[i] = s.dim.Render(first) + l[len(first):]
				}
			}
			out = append(out, lines...)
		case transcript.RowItem:
			glyph, st := "•", styleFn(s.text)
			if r.Tone != "" {
				_, st = p.tone(r.Tone)
			}
			out = append(out, styleAll(wrapIndent(sanitize(r.Text), width, indent+glyph+" ", indent+"  "), st)...)
		case transcript.RowText:
			st := styleFn(s.text)
			if r.Tone != "" {
				_, st = p.tone(r.Tone)
			}
			out = append(out, styleAll(wrapIndent(sanitize(r.Text), width, indent, indent), st)...)
		case transcript.RowMeter:
			out = append(out, p.meter(r, width, indent+pad(r.Label)+"  "))
		case transcript.RowGroup:
			out = append(out, s.bold.Render(truncate(indent+oneLine(r.Label), width)))
			out = append(out, p.rows(r.Rows, width, indent+"  ")...)
		case transcript.RowGap:
			out = append(out, "")
		}
	}
	return out
}

// meter paints "label  [█████░░░░░] 5/10 unit".
func (p *Painter) meter(r transcript.ReportRow, width int, label string) string {
	s := p.pal
	frac := 0.0
	if r.Max > 0 && !math.IsNaN(r.Amount) {
		frac = math.Max(0, math.Min(1, r.Amount/r.Max))
	}
	amount := num(r.Amount) + "/" + num(r.Max)
	if r.Unit != "" {
		amount += " " + oneLine(r.Unit)
	}
	barW := min(20, width-textWidth(label)-textWidth(amount)-3)
	if barW < 4 {
		return truncate(s.dim.Render(label)+amount+fmt.Sprintf(" (%d%%)", int(math.Round(frac*100))), width)
	}
	on := int(math.Round(frac * float64(barW)))
	bar := s.meterOn.Render(strings.Repeat("█", on)) + s.meterOff.Render(strings.Repeat("░", barW-on))
	return s.dim.Render(label) + bar + " " + amount
}

func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}
