// Package termtext holds the text rules the terminal views and folio log
// show's plain painter share, so the two paint the same lines: what may
// reach a terminal (Sanitize) and how a line wraps (Wrap, WrapIndent).
package termtext

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Sanitize makes text safe to put on a terminal: escape sequences and
// control characters other than newlines are removed, tabs become four
// spaces and carriage returns are dropped. Facts should hold none of these,
// but tool output and older history can.
func Sanitize(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 && r != '\n' || r == 0x7f || (r >= 0x80 && r < 0xa0) }) {
		return s
	}
	s = ansi.Strip(s)
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteByte('\n')
		case r == '\t':
			b.WriteString("    ")
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			// dropped
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Wrap word-wraps styled text to width columns and returns its lines.
// Words longer than the width are broken.
func Wrap(s string, width int) []string {
	if width < 1 {
		width = 1
	}
	if len(s) <= width && !strings.Contains(s, "\n") {
		return []string{s} // a line that fits: ansi.Wrap leaves it as it is
	}
	return strings.Split(ansi.Wrap(s, width, ""), "\n")
}

// WrapIndent wraps s to width with the first line prefixed by first and the
// following lines by rest. Both prefixes must have the same display width.
func WrapIndent(s string, width int, first, rest string) []string {
	pw := ansi.StringWidth(first)
	var out []string
	for para := range strings.SplitSeq(s, "\n") {
		for _, l := range Wrap(para, width-pw) {
			if len(out) == 0 {
				out = append(out, first+l)
			} else {
				out = append(out, rest+l)
			}
		}
	}
	return out
}
