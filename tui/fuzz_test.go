package tui

import (
	"strings"
	"testing"
)

// FuzzStableEnd checks the promotion boundary: it never goes backwards as
// text grows, it can be resumed from any earlier answer, and the stable
// prefix splits into blocks that rejoin to exactly that prefix.
func FuzzStableEnd(f *testing.F) {
	f.Add("para one\n\npara two\n\n```go\nx\n\ny\n```\nafter", 10)
	f.Add("| a | b |\n|---|---|\n| 1 | 2 |\n\n- x\n- y\n", 5)
	f.Add("~~~~\n```\n~~~\n~~~~\n\n", 3)
	f.Add("   ```\ncode\n    ```\n```\n\ntail", 7)
	f.Fuzz(func(t *testing.T, src string, k int) {
		if k < 0 {
			k = -k
		}
		k %= len(src) + 1
		full := stableEnd(src, 0)
		if full < 0 || full > len(src) {
			t.Fatalf("StableEnd = %d outside [0, %d]", full, len(src))
		}
		part := stableEnd(src[:k], 0)
		if part > full {
			t.Fatalf("stable end went backwards: prefix %d gives %d, whole gives %d", k, part, full)
		}
		if again := stableEnd(src, part); again != full {
			t.Fatalf("resuming from %d gives %d, want %d", part, again, full)
		}
		if got := strings.Join(splitBlocks(src[:full]), ""); got != src[:full] {
			t.Fatalf("blocks do not rejoin to the prefix")
		}
	})
}

// FuzzMathToText checks the math rewrite never panics, leaves text without
// math characters alone and never loses words outside math.
func FuzzMathToText(f *testing.F) {
	f.Add(`\(d_t\) and $x^2$ cost $5 and $10; \[\frac{a}{b}\] ` + "`$x$`")
	f.Add(`$$\alpha \le \beta$$`)
	f.Add(`\( unclosed and $ alone \`)
	f.Add(`\(\bar{v} = \frac{1}{T} \sum_{t=1}^{T} v_t\)`)
	f.Add("$$\nA = \\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}\n$$")
	f.Add(`\(\sqrt[3]{x} \begin{cases} a & b \end{cases} \mathbb{R}^{n\times m}\)`)
	f.Add(`\(\begin{matrix} \begin{pmatrix} 1 \end{pmatrix} \end{matrix} \weird\)`)
	f.Fuzz(func(t *testing.T, s string) {
		out := mathToText(s)
		if !strings.ContainsAny(s, `\$`) && out != s {
			t.Fatalf("text without math changed: %q -> %q", s, out)
		}
		_ = texText(s)
		_ = texDisplay(s)
		_, _ = tableWidth(s)
	})
}

func TestMathToText(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{`the rate \(d_t\) falls`, "the rate `dₜ` falls"},
		{`\(v_t = (d_t - d_{t+1}) / d_t\)`, "`vₜ = (dₜ - dₜ₊₁) / dₜ`"},
		{`$\alpha \le 1$ holds`, "`α ≤ 1` holds"},
		{`costs $5 and $10`, `costs $5 and $10`},
		{`an escaped \$ stays`, `an escaped \$ stays`},
		{"$$\\sum_i x_i$$", "```\nΣᵢ xᵢ\n```\n"},
		{"\\[\n\\frac{a}{b}\n\\]", "```\na/b\n```\n"},
		// The formulas the issue found half converted, now whole.
		{`\(\bar{v} = \frac{1}{T} \sum_{t=1}^{T} v_t\)`, "`v̄ = 1/T Σₜ₌₁ᵀ vₜ`"},
		{`\(\frac{a+b}{2c} \le \sqrt{x^2 + y_{max}}\)`, "`(a+b)/(2c) ≤ √(x² + yₘₐₓ)`"},
		{`\(M = \begin{pmatrix} a & b \\ c & d \end{pmatrix}\)`, "`M = (a b; c d)`"},
		{"$$\nA = \\begin{bmatrix} 1 & 20 \\\\ 300 & 4 \\end{bmatrix}\n$$", "```\nA = [ 1    20 ]\n    [ 300  4  ]\n```\n"},
		{"$$\n\\begin{aligned} x &= 1 \\\\ y &= 22 \\end{aligned}\n$$", "```\nx = 1\ny = 22\n```\n"},
		{`\(f(x) = \begin{cases} 0 & x < 0 \\ 1 & \text{otherwise} \end{cases}\)`, "`f(x) = {0, x < 0; 1, otherwise}`"},
		{`\(\mathbb{R}^n \to \mathbb{R}\)`, "`ℝⁿ → ℝ`"},
		// Anything it cannot convert whole is shown as written.
		{`\(\weird{x} + \alpha\)`, "`\\weird{x} + \\alpha`"},
		{`\(\frac{1}{2\)`, "`\\frac{1}{2`"},
		{"`$x$` is code", "`$x$` is code"},
		{"see:\n```\necho $HOME $x$\n```\nand $y$", "see:\n```\necho $HOME $x$\n```\nand `y`"},
		{`unclosed \(x and $y`, `unclosed \(x and $y`},
		{`\(\text{speed} \cdot t\)`, "`speed · t`"},
	}
	for _, c := range cases {
		if got := mathToText(c.in); got != c.want {
			t.Errorf("mathToText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
