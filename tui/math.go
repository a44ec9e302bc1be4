package tui

import (
	"strings"
)

// Math in answers is shown as readable text, not typeset: a terminal cannot
// draw fractions. The delimiters \( \), \[ \], $ $ and $$ $$ are removed
// and the formula is shown in code style (so underscores and stars are not
// taken for emphasis). A formula is converted whole or not at all: every
// command in it must be one texText knows (symbols, \frac, \sqrt, accents
// such as \bar, sub- and superscripts, \text and fonts, matrices and other
// row environments); otherwise its TeX source is shown verbatim, since a
// half-converted formula is harder to read than either. \(\frac{1}{T}
// \sum_{t=1}^{T} v_t\) reads 1/T Σₜ₌₁ᵀ vₜ. A block made only of display
// math is shown as a code block, where matrices and \\ rows keep their
// rows. An opener without its closer (a formula still streaming) is left as
// it is.

// mathToText rewrites the math in one markdown block; see above. Fenced
// code inside the block is left alone.
func mathToText(block string) string {
	if !strings.ContainsAny(block, `\$`) {
		return block
	}
	var b strings.Builder
	var fence string
	seg := 0 // start of the current run of prose lines
	pos := 0
	for pos < len(block) {
		end := len(block)
		if nl := strings.IndexByte(block[pos:], '\n'); nl >= 0 {
			end = pos + nl + 1
		}
		line := strings.TrimRight(block[pos:end], "\n")
		switch {
		case fence != "":
			if closesFence(line, fence) {
				fence = ""
				b.WriteString(block[seg:end])
				seg = end
			}
		case opensFence(line) != "":
			fence = opensFence(line)
			b.WriteString(proseMath(block[seg:pos]))
			seg = pos
		}
		pos = end
	}
	if fence != "" {
		b.WriteString(block[seg:])
	} else {
		b.WriteString(proseMath(block[seg:]))
	}
	return b.String()
}

// proseMath rewrites the math in markdown text that holds no fenced code.
func proseMath(block string) string {
	if !strings.ContainsAny(block, `\$`) {
		return block
	}
	if tex, ok := displayOnly(block); ok {
		return "```\n" + texDisplay(tex) + "\n```\n"
	}
	var b strings.Builder
	i := 0
	for i < len(block) {
		c := block[i]
		switch {
		case c == '`':
			// Copy a code span through untouched.
			n := run(block, i, '`')
			end := strings.Index(block[i+n:], block[i:i+n])
			if end < 0 {
				b.WriteString(block[i:])
				return b.String()
			}
			stop := i + n + end + n
			b.WriteString(block[i:stop])
			i = stop
			continue
		case c == '\\' && i+1 < len(block) && (block[i+1] == '(' || block[i+1] == '['):
			closer := `\)`
			if block[i+1] == '[' {
				closer = `\]`
			}
			if end := strings.Index(block[i+2:], closer); end >= 0 {
				b.WriteString(codeSpan(texText(block[i+2 : i+2+end])))
				i += 2 + end + 2
				continue
			}
		case c == '\\' && i+1 < len(block):
			// An ordinary escape: keep both bytes so "\$" stays a dollar.
			b.WriteString(block[i : i+2])
			i += 2
			continue
		case c == '$' && strings.HasPrefix(block[i:], "$$"):
			if end := strings.Index(block[i+2:], "$$"); end > 0 {
				b.WriteString(codeSpan(texText(block[i+2 : i+2+end])))
				i += 2 + end + 2
				continue
			}
		case c == '$':
			if end, ok := inlineDollar(block, i); ok {
				b.WriteString(codeSpan(texText(block[i+1 : end])))
				i = end + 1
				continue
			}
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

func run(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

// inlineDollar finds the closing $ of inline math opened at i, using the
// usual rule that keeps prices apart: the opener is not followed by a space,
// the closer is not preceded by a space nor followed by a digit, and both are
// on one line.
func inlineDollar(s string, i int) (int, bool) {
	if i+1 >= len(s) || s[i+1] == ' ' || s[i+1] == '$' {
		return 0, false
	}
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\n':
			return 0, false
		case '\\':
			j++
		case '$':
			if s[j-1] == ' ' || (j+1 < len(s) && s[j+1] >= '0' && s[j+1] <= '9') {
				return 0, false
			}
			return j, true
		}
	}
	return 0, false
}

// displayOnly reports whether block is a single display formula.
func displayOnly(block string) (string, bool) {
	t := strings.TrimSpace(block)
	for _, d := range [][2]string{{"$$", "$$"}, {`\[`, `\]`}} {
		if len(t) > 4 && strings.HasPrefix(t, d[0]) && strings.HasSuffix(t, d[1]) {
			inner := t[2 : len(t)-2]
			if !strings.Contains(inner, d[1]) {
				return strings.TrimSpace(inner), true
			}
		}
	}
	return "", false
}

// codeSpan wraps text in a code span whose fence is longer than any run of
// backticks inside it.
func codeSpan(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return ""
	}
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if len(fence) > 1 || strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}
