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
	// Field keys line up within the report.
	keyW := 0
	for _, r := range rows {
		if r.Kind == transcript.RowField {
			keyW = max(keyW, textWidth(oneLine(r.Key)))
		}
	}
	keyW = min(keyW, max(width/3, 8))
	pad := func(l string) string {
		l = truncate(oneLine(l), keyW)
		return l + strings.Repeat(" ", keyW-textWidth(l))
	}
	var out []string
	for _, r := range rows {
		switch r.Kind {
		case transcript.RowField:
			first := indent + pad(r.Key) + "  "
			rest := strings.Repeat(" ", textWidth(first))
			value := r.Value
			if r.Detail != "" {
				value += "  " + r.Detail
			}
			st := p.reportTone(r.Tone)
			lines := wrapIndent(sanitize(value), width, first, rest)
			for i, l := range lines {
				if i == 0 {
					lines[i] = s.dim.Render(first) + st.Render(l[len(first):])
				} else if l != "" {
					lines[i] = st.Render(l)
				}
			}
			out = append(out, lines...)
		case transcript.RowItem:
			text := r.Name
			if r.Detail != "" {
				text += "  " + r.Detail
			}
			out = append(out, styleAll(wrapIndent(sanitize(text), width, indent+marker(r.Marker)+" ", indent+"  "), p.reportTone(r.Tone))...)
		case transcript.RowText:
			out = append(out, styleAll(wrapIndent(sanitize(r.Text), width, indent, indent), p.reportTone(r.Tone))...)
		case transcript.RowMeter:
			out = append(out, p.meter(r, width, indent))
		case transcript.RowGroup:
			label := oneLine(r.Label)
			if r.Count != "" {
				label += " (" + oneLine(r.Count) + ")"
			}
			out = append(out, s.bold.Render(truncate(indent+label, width)))
		case transcript.RowGap:
			out = append(out, "")
		}
	}
	return out
}

// marker is an item row's glyph.
func marker(m transcript.Marker) string {
	switch m {
	case transcript.MarkerCurrent:
		return "▸"
	case transcript.MarkerActive:
		return "●"
	case transcript.MarkerInactive:
		return "○"
	case transcript.MarkerAttention:
		return "!"
	case transcript.MarkerDisabled:
		return "–"
	}
	return "•"
}

// reportTone maps a report row's tone to a style.
func (p *Painter) reportTone(t transcript.ReportTone) styleFn {
	s := p.pal
	switch t {
	case transcript.ReportMuted:
		return styleFn(s.dim)
	case transcript.ReportAccent:
		return styleFn(s.accent)
	case transcript.ReportSuccess:
		return styleFn(s.ok)
	case transcript.ReportWarning:
		return styleFn(s.warn)
	case transcript.ReportError:
		return styleFn(s.bad)
	}
	return styleFn(s.text)
}

// meter paints "[█████░░░░░] 5/10 caption".
func (p *Painter) meter(r transcript.ReportRow, width int, indent string) string {
	s := p.pal
	frac := 0.0
	if r.Total > 0 && !math.IsNaN(r.Used) {
		frac = math.Max(0, math.Min(1, r.Used/r.Total))
	}
	amount := num(r.Used) + "/" + num(r.Total)
	if r.Caption != "" {
		amount += " " + oneLine(r.Caption)
	}
	barW := min(20, width-textWidth(indent)-textWidth(amount)-1)
	if barW < 4 {
		return truncate(indent+amount+fmt.Sprintf(" (%d%%)", int(math.Round(frac*100))), width)
	}
	on := int(math.Round(frac * float64(barW)))
	bar := s.meterOn.Render(strings.Repeat("█", on)) + s.meterOff.Render(strings.Repeat("░", barW-on))
	return indent + bar + " " + amount
}

func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}
