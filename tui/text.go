package tui

import (
	"github.com/foliodev/folio/internal/termtext"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// trimRight removes trailing spaces from a styled line, along with the style
// sequences wrapped around them, and closes any style left open.
func trimRight(s string) string {
	if !strings.Contains(s, "\x1b") {
		return strings.TrimRight(s, " ")
	}
	end := len(s)
	for end > 0 {
		switch {
		case s[end-1] == ' ':
			end--
		case s[end-1] == 'm':
			i := strings.LastIndex(s[:end], "\x1b[")
			if i < 0 || !isSGRParams(s[i+2:end-1]) {
				return closeStyle(s[:end])
			}
			end = i
		default:
			return closeStyle(s[:end])
		}
	}
	return ""
}

func isSGRParams(p string) bool {
	for i := 0; i < len(p); i++ {
		if (p[i] < '0' || p[i] > '9') && p[i] != ';' && p[i] != ':' {
			return false
		}
	}
	return true
}

// closeStyle appends a reset when s contains any escape sequence, so a
// painted line never leaks its style into the next one.
func closeStyle(s string) string {
	if strings.Contains(s, "\x1b[") && !strings.HasSuffix(s, "\x1b[m") && !strings.HasSuffix(s, "\x1b[0m") {
		return s + "\x1b[m"
	}
	return s
}

// clamp makes every line fit width columns: longer lines are broken hard
// (never cut, so no text is lost).
func clamp(lines []string, width int) []string {
	var out []string
	for i, l := range lines {
		if ansi.StringWidth(l) <= width {
			if out != nil {
				out = append(out, l)
			}
			continue
		}
		if out == nil {
			out = append(make([]string, 0, len(lines)+4), lines[:i]...)
		}
		for _, w := range strings.Split(ansi.Hardwrap(l, width, true), "\n") {
			out = append(out, closeStyle(w))
		}
	}
	if out == nil {
		return lines
	}
	return out
}

// trimBlank removes blank lines at both ends.
func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(ansi.Strip(lines[0])) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(ansi.Strip(lines[len(lines)-1])) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// truncate cuts a styled single line to width columns, ending with "…".
func truncate(s string, width int) string {
	if ansi.StringWidth(s) <= width {
		return s
	}
	return closeStyle(ansi.Truncate(s, width, "…"))
}

// The text rules shared with folio log show's plain painter (termtext).
var (
	sanitize   = termtext.Sanitize
	wrap       = termtext.Wrap
	wrapIndent = termtext.WrapIndent
)
