package tui

import (
	"strconv"
	"strings"
	"unicode"
)

// The TeX to text conversion behind mathToText: symbol tables, then a
// small recursive reader of TeX commands, groups and environments.

// texSymbols maps TeX commands to what a terminal can show.
var texSymbols = map[string]string{
	"alpha": "α", "beta": "β", "gamma": "γ", "Gamma": "Γ", "delta": "δ", "Delta": "Δ",
	"epsilon": "ε", "varepsilon": "ε", "zeta": "ζ", "eta": "η", "theta": "θ", "Theta": "Θ",
	"kappa": "κ", "lambda": "λ", "Lambda": "Λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π",
	"Pi": "Π", "rho": "ρ", "sigma": "σ", "Sigma": "Σ", "tau": "τ", "phi": "φ", "varphi": "φ",
	"Phi": "Φ", "chi": "χ", "psi": "ψ", "Psi": "Ψ", "omega": "ω", "Omega": "Ω", "iota": "ι",
	"upsilon": "υ", "vartheta": "ϑ", "varrho": "ϱ", "varsigma": "ς",
	"cdot": "·", "times": "×", "div": "÷", "pm": "±", "mp": "∓", "le": "≤", "leq": "≤",
	"ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "approx": "≈", "equiv": "≡", "sim": "~",
	"simeq": "≃", "propto": "∝", "ll": "≪", "gg": "≫", "mid": "|", "parallel": "∥", "perp": "⊥",
	"infty": "∞", "to": "→", "rightarrow": "→", "Rightarrow": "⇒", "leftarrow": "←",
	"Leftarrow": "⇐", "leftrightarrow": "↔", "Leftrightarrow": "⇔", "iff": "⇔", "implies": "⇒",
	"mapsto": "↦", "sum": "Σ", "prod": "Π", "int": "∫", "oint": "∮", "iint": "∬",
	"partial": "∂", "nabla": "∇", "in": "∈", "notin": "∉", "ni": "∋", "subset": "⊂",
	"subseteq": "⊆", "supset": "⊃", "supseteq": "⊇", "cup": "∪", "cap": "∩", "setminus": "∖",
	"forall": "∀", "exists": "∃", "emptyset": "∅", "varnothing": "∅", "ell": "ℓ", "hbar": "ℏ",
	"ldots": "…", "cdots": "⋯", "dots": "…", "vdots": "⋮", "ddots": "⋱", "circ": "∘",
	"prime": "′", "neg": "¬", "lnot": "¬", "land": "∧", "wedge": "∧", "lor": "∨", "vee": "∨",
	"oplus": "⊕", "otimes": "⊗", "langle": "⟨", "rangle": "⟩", "lfloor": "⌊", "rfloor": "⌋",
	"lceil": "⌈", "rceil": "⌉", "vert": "|", "Vert": "‖", "lvert": "|", "rvert": "|",
	"lVert": "‖", "rVert": "‖", "star": "⋆", "ast": "∗", "bullet": "•", "top": "⊤",
	"quad": "  ", "qquad": "    ", "displaystyle": "", "textstyle": "", "limits": "",
	"nolimits": "", "left": "", "right": "", "big": "", "Big": "", "bigg": "", "Bigg": "",
	"bigl": "", "bigr": "", "Bigl": "", "Bigr": "", "biggl": "", "biggr": "",
	"sin": "sin", "cos": "cos", "tan": "tan", "log": "log", "ln": "ln", "exp": "exp",
	"lim": "lim", "max": "max", "min": "min", "sup": "sup", "inf": "inf", "det": "det",
	"arg": "arg", "deg": "deg", "dim": "dim", "gcd": "gcd", "Pr": "Pr", "arcsin": "arcsin",
	"arccos": "arccos", "arctan": "arctan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh",
	"mod": "mod", "bmod": "mod", "colon": ":",
}

// texAccents are the combining marks the accent commands put on each
// character of their argument.
var texAccents = map[string]string{
	"bar": "\u0304", "overline": "\u0305", "hat": "\u0302", "widehat": "\u0302",
	"tilde": "\u0303", "widetilde": "\u0303", "dot": "\u0307", "ddot": "\u0308",
	"vec": "\u20d7", "check": "\u030c", "acute": "\u0301", "grave": "\u0300", "underline": "\u0332",
}

var blackboard = map[rune]string{'R': "ℝ", 'N': "ℕ", 'Z': "ℤ", 'Q': "ℚ", 'C': "ℂ", 'P': "ℙ", 'E': "𝔼", 'H': "ℍ", '1': "𝟙"}

var subscripts = map[rune]rune{
	'0': '₀', '1': '₁', '2': '₂', '3': '₃', '4': '₄', '5': '₅', '6': '₆', '7': '₇', '8': '₈', '9': '₉',
	'+': '₊', '-': '₋', '=': '₌', '(': '₍', ')': '₎', 'a': 'ₐ', 'e': 'ₑ', 'h': 'ₕ', 'i': 'ᵢ', 'j': 'ⱼ',
	'k': 'ₖ', 'l': 'ₗ', 'm': 'ₘ', 'n': 'ₙ', 'o': 'ₒ', 'p': 'ₚ', 'r': 'ᵣ', 's': 'ₛ', 't': 'ₜ', 'u': 'ᵤ',
	'v': 'ᵥ', 'x': 'ₓ', 'β': 'ᵦ', 'γ': 'ᵧ', 'ρ': 'ᵨ', 'φ': 'ᵩ', 'χ': 'ᵪ',
}

var superscripts = map[rune]rune{
	'0': '⁰', '1': '¹', '2': '²', '3': '³', '4': '⁴', '5': '⁵', '6': '⁶', '7': '⁷', '8': '⁸', '9': '⁹',
	'+': '⁺', '-': '⁻', '=': '⁼', '(': '⁽', ')': '⁾', 'a': 'ᵃ', 'b': 'ᵇ', 'c': 'ᶜ', 'd': 'ᵈ', 'e': 'ᵉ',
	'f': 'ᶠ', 'g': 'ᵍ', 'h': 'ʰ', 'i': 'ⁱ', 'j': 'ʲ', 'k': 'ᵏ', 'l': 'ˡ', 'm': 'ᵐ', 'n': 'ⁿ', 'o': 'ᵒ',
	'p': 'ᵖ', 'r': 'ʳ', 's': 'ˢ', 't': 'ᵗ', 'u': 'ᵘ', 'v': 'ᵛ', 'w': 'ʷ', 'x': 'ˣ', 'y': 'ʸ', 'z': 'ᶻ',
	'T': 'ᵀ', 'A': 'ᴬ', 'B': 'ᴮ', 'D': 'ᴰ', 'E': 'ᴱ', 'G': 'ᴳ', 'H': 'ᴴ', 'I': 'ᴵ', 'J': 'ᴶ', 'K': 'ᴷ',
	'L': 'ᴸ', 'M': 'ᴹ', 'N': 'ᴺ', 'O': 'ᴼ', 'P': 'ᴾ', 'R': 'ᴿ', 'U': 'ᵁ', 'V': 'ⱽ', 'W': 'ᵂ',
	'′': '′', '∗': '*', '*': '*',
}

// texText is the inline reading of a formula (rows joined by "; "), or
// its source verbatim when it holds anything texText cannot convert.
func texText(tex string) string {
	out, ok := convertTeX(tex, false)
	if !ok {
		return strings.TrimSpace(tex)
	}
	return out
}

// texDisplay is texText for display math: matrices and \\ rows keep their
// rows, on lines of their own.
func texDisplay(tex string) string {
	out, ok := convertTeX(tex, true)
	if !ok {
		return strings.TrimSpace(tex)
	}
	return out
}

// texConv converts one formula. Row environments in display mode become
// blocks of lines, kept aside and joined side by side with the text around
// them at the end; placeholders mark where they go.
type texConv struct {
	s       string
	i       int
	display bool
	failed  bool
	blocks  [][]string
}

const blockMark = '\x00'

func convertTeX(tex string, display bool) (string, bool) {
	c := &texConv{s: tex, display: display}
	out := c.seq('\x00')
	if c.failed || c.i < len(c.s) {
		return "", false
	}
	out = collapseSpaces(out)
	if !display || len(c.blocks) == 0 && !strings.Contains(out, "\n") {
		return strings.TrimSpace(out), true
	}
	if len(c.blocks) == 0 {
		lines := strings.Split(out, "\n")
		for i := range lines {
			lines[i] = strings.TrimSpace(lines[i])
		}
		return strings.Join(lines, "\n"), true
	}
	var parts [][]string
	for seg := range strings.SplitSeq(out, string(blockMark)) {
		if n, rest, ok := strings.Cut(seg, "\x01"); ok {
			k := 0
			for _, d := range n {
				k = k*10 + int(d-'0')
			}
			parts = append(parts, c.blocks[k])
			seg = rest
		}
		if seg != "" {
			parts = append(parts, []string{seg})
		}
	}
	lines := hjoin(parts)
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return strings.Join(lines, "\n"), true
}

// seq converts until the closer byte (a '}' ending a group) or the end.
func (c *texConv) seq(closer byte) string {
	var b strings.Builder
	for c.i < len(c.s) && !c.failed {
		ch := c.s[c.i]
		switch ch {
		case '}':
			if closer == '}' {
				return b.String()
			}
			c.failed = true
			return ""
		case '{':
			c.i++
			b.WriteString(c.seq('}'))
			if c.i >= len(c.s) {
				c.failed = true
				return ""
			}
			c.i++
		case '_', '^':
			c.i++
			b.WriteString(script(c.arg(), ch == '_'))
		case '&':
			c.i++
			b.WriteByte('\t')
		case '\\':
			b.WriteString(c.command())
		case '~':
			c.i++
			b.WriteByte(' ')
		case '\n', '\r', '\t':
			c.i++
			b.WriteByte(' ')
		default:
			c.i++
			b.WriteByte(ch)
		}
	}
	if closer == '}' {
		c.failed = true
	}
	return b.String()
}

// arg reads one argument: a group, a command or one character.
func (c *texConv) arg() string {
	for c.i < len(c.s) && c.s[c.i] == ' ' {
		c.i++
	}
	if c.i >= len(c.s) {
		c.failed = true
		return ""
	}
	switch ch := c.s[c.i]; ch {
	case '{':
		c.i++
		out := c.seq('}')
		if c.i >= len(c.s) {
			c.failed = true
			return ""
		}
		c.i++
		return out
	case '\\':
		return c.command()
	case '}', '_', '^', '&':
		c.failed = true
		return ""
	}
	r := []rune(c.s[c.i:])[0]
	c.i += len(string(r))
	return string(r)
}

// rawGroup reads {text} without converting it (for \text and names).
func (c *texConv) rawGroup() (string, bool) {
	for c.i < len(c.s) && c.s[c.i] == ' ' {
		c.i++
	}
	if c.i >= len(c.s) || c.s[c.i] != '{' {
		return "", false
	}
	end := strings.IndexByte(c.s[c.i:], '}')
	if end < 0 {
		return "", false
	}
	out := c.s[c.i+1 : c.i+end]
	c.i += end + 1
	return out, true
}

func (c *texConv) command() string {
	c.i++ // the backslash
	if c.i >= len(c.s) {
		c.failed = true
		return ""
	}
	j := c.i
	for j < len(c.s) && (c.s[j] >= 'a' && c.s[j] <= 'z' || c.s[j] >= 'A' && c.s[j] <= 'Z') {
		j++
	}
	if j == c.i {
		ch := c.s[c.i]
		c.i++
		switch ch {
		case '\\':
			return "\n"
		case ',', ';', ':', ' ', '>':
			return " "
		case '!':
			return ""
		case '{', '}', '$', '%', '#', '_', '&', '(', ')', '[', ']':
			return string(ch)
		case '|':
			return "‖"
		}
		c.failed = true
		return ""
	}
	name := c.s[c.i:j]
	c.i = j
	if sym, ok := texSymbols[name]; ok {
		return sym
	}
	switch name {
	case "text", "textrm", "textit", "textbf", "mathrm", "mathbf", "mathit", "mathsf", "mathtt",
		"operatorname", "boldsymbol", "mathcal", "mbox":
		if name == "text" || name == "textrm" || name == "textit" || name == "textbf" || name == "mbox" {
			t, ok := c.rawGroup()
			if !ok {
				c.failed = true
			}
			return t
		}
		return c.arg()
	case "mathbb":
		a := c.arg()
		var b strings.Builder
		for _, r := range a {
			if s, ok := blackboard[r]; ok {
				b.WriteString(s)
			} else {
				b.WriteRune(r)
			}
		}
		return b.String()
	case "frac", "dfrac", "tfrac", "cfrac":
		num := c.arg()
		den := c.arg()
		return paren(num) + "/" + paren(den)
	case "binom":
		n := c.arg()
		k := c.arg()
		return "C(" + strings.TrimSpace(n) + ", " + strings.TrimSpace(k) + ")"
	case "sqrt":
		root := ""
		if c.i < len(c.s) && c.s[c.i] == '[' {
			end := strings.IndexByte(c.s[c.i:], ']')
			if end < 0 {
				c.failed = true
				return ""
			}
			root = script(c.s[c.i+1:c.i+end], false)
			c.i += end + 1
		}
		return root + "√" + paren(c.arg())
	case "begin":
		return c.env()
	case "end":
		c.failed = true // an \end without its \begin
		return ""
	}
	if mark, ok := texAccents[name]; ok {
		var b strings.Builder
		for _, r := range strings.TrimSpace(c.arg()) {
			b.WriteRune(r)
			if r != ' ' {
				b.WriteString(mark)
			}
		}
		return b.String()
	}
	c.failed = true
	return ""
}

// env converts \begin{name}…\end{name}: matrices, cases and the aligned
// families, whose & separate cells and \\ rows.
func (c *texConv) env() string {
	name, ok := c.rawGroup()
	if !ok {
		c.failed = true
		return ""
	}
	open, close := "", ""
	switch strings.TrimSuffix(name, "*") {
	case "matrix", "smallmatrix", "aligned", "align", "gathered", "gather", "split", "eqnarray", "array", "alignedat":
	case "pmatrix":
		open, close = "(", ")"
	case "bmatrix":
		open, close = "[", "]"
	case "Bmatrix", "cases":
		open = "{"
		if name == "Bmatrix" {
			close = "}"
		}
	case "vmatrix":
		open, close = "|", "|"
	case "Vmatrix":
		open, close = "‖", "‖"
	default:
		c.failed = true
		return ""
	}
	if name == "array" || name == "alignedat" {
		if _, ok := c.rawGroup(); !ok { // the column spec
			c.failed = true
			return ""
		}
	}
	endTag := `\end{` + name + `}`
	end := strings.Index(c.s[c.i:], endTag)
	if end < 0 {
		c.failed = true
		return ""
	}
	inner := &texConv{s: c.s[c.i : c.i+end], display: c.display}
	body := inner.seq('\x00')
	if inner.failed || len(inner.blocks) > 0 {
		c.failed = true // nested row environments: shown verbatim
		return ""
	}
	c.i += end + len(endTag)

	var rows [][]string
	for _, r := range strings.Split(body, "\n") {
		if strings.TrimSpace(r) == "" {
			continue
		}
		cells := strings.Split(r, "\t")
		for i := range cells {
			cells[i] = collapseSpaces(strings.TrimSpace(cells[i]))
		}
		rows = append(rows, cells)
	}
	aligned := open == "" && close == "" && !strings.HasSuffix(strings.TrimSuffix(name, "*"), "matrix")
	if !c.display {
		var rs []string
		for _, r := range rows {
			sep := " "
			if name == "cases" {
				sep = ", "
			}
			rs = append(rs, strings.Join(r, sep))
		}
		if open == "{" && close == "" {
			close = "}" // on one line, an opened brace reads better closed
		}
		return open + strings.Join(rs, "; ") + close
	}
	// Columns padded to their widest cell, two spaces apart in a matrix
	// and one in the aligned families (the & sits before the relation it
	// aligns).
	var widths []int
	for _, r := range rows {
		for i, cell := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], textWidth(cell))
		}
	}
	lines := make([]string, len(rows))
	for y, r := range rows {
		var b strings.Builder
		for i, cell := range r {
			if i > 0 {
				b.WriteString(colGap(aligned))
			}
			if i < len(r)-1 || close != "" {
				cell = padRight(cell, widths[i])
			}
			b.WriteString(cell)
		}
		line := b.String()
		if close != "" {
			line = padRight(line, sumWidths(widths, aligned))
		}
		lines[y] = strings.TrimRight(open+" "+line+" "+close, " ")
		if open == "" {
			lines[y] = strings.TrimRight(line, " ")
		}
	}
	c.blocks = append(c.blocks, lines)
	return string(blockMark) + strconv.Itoa(len(c.blocks)-1) + "\x01"
}

func colGap(aligned bool) string {
	if aligned {
		return " "
	}
	return "  "
}

func sumWidths(ws []int, aligned bool) int {
	n := 0
	for i, w := range ws {
		n += w
		if i > 0 {
			n += len(colGap(aligned))
		}
	}
	return n
}

// hjoin sets blocks of lines side by side, each centred on the tallest.
func hjoin(parts [][]string) []string {
	h := 0
	for _, p := range parts {
		h = max(h, len(p))
	}
	out := make([]string, h)
	for _, p := range parts {
		w := 0
		for _, l := range p {
			w = max(w, textWidth(l))
		}
		top := (h - len(p)) / 2
		for y := range h {
			l := ""
			if y >= top && y-top < len(p) {
				l = p[y-top]
			}
			out[y] += padRight(l, w)
		}
	}
	return out
}

// script writes a sub- or superscript with Unicode's small characters when
// all of them have one, and as _(…) or ^(…) otherwise.
func script(a string, sub bool) string {
	a = strings.TrimSpace(a)
	table, mark := superscripts, "^"
	if sub {
		table, mark = subscripts, "_"
	}
	var b strings.Builder
	for _, r := range a {
		if r == ' ' {
			continue
		}
		m, ok := table[r]
		if !ok {
			return mark + paren(a)
		}
		b.WriteRune(m)
	}
	return b.String()
}

// paren brackets a converted argument unless it is a number or one
// letter (with its accents), so 1/T stays bare and (2c) does not.
func paren(a string) string {
	a = strings.TrimSpace(a)
	digits, letters := 0, 0
	for _, r := range a {
		switch {
		case unicode.IsDigit(r) || r == '.':
			digits++
		case unicode.IsLetter(r):
			letters++
		case unicode.Is(unicode.Mn, r):
		default:
			return "(" + a + ")"
		}
	}
	if a != "" && (letters == 0 || digits == 0 && letters == 1) {
		return a
	}
	return "(" + a + ")"
}

func collapseSpaces(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == ' ' {
			if !space {
				b.WriteRune(r)
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}
