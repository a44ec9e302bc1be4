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
		full := StableEnd(src, 0)
		if full < 0 || full > len(src) {
			t.Fatalf("StableEnd = %d outside [0, %d]", full, len(src))
		}
		part := StableEnd(src[:k], 0)
		if part > full {
			t.Fatalf("stable end went backwards: prefix %d gives %d, whole gives %d", k, part, full)
		}
		if again := StableEnd(src, part); again != full {
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
	f.Fuzz(func(t *testing.T, s string) {
		out := mathToText(s)
		if !strings.ContainsAny(s, `\$`) && out != s {
			t.Fatalf("text without math changed: %q -> %q", s, out)
		}
		_ = texText(s)
	})
}

func TestMathToText(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{`the rate \(d_t\) falls`, "the rate `d_t` falls"},
		{`\(v_t = (d_t - d_{t+1}) / d_t\)`, "`v_t = (d_t - d_{t+1}) / d_t`"},
		{`$\alpha \le 1$ holds`, "`α ≤ 1` holds"},
		{`costs $5 and $10`, `costs $5 and $10`},
		{`an escaped \$ stays`, `an escaped \$ stays`},
		{"$$\\sum_i x_i$$", "```\nΣ_i x_i\n```\n"},
		{"\\[\n\\frac{a}{b}\n\\]", "```\n\\frac{a}{b}\n```\n"},
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
