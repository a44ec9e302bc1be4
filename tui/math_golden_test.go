package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/foliodev/folio/transcript"
)

// An answer with inline and display math, through the painter and a
// terminal: every formula is converted whole, matrix rows stay rows, and no
// TeX command is left half done.
func TestPaintMathGolden(t *testing.T) {
	t.Parallel()
	md := "The mean speed is \\(\\bar{v} = \\frac{1}{T} \\sum_{t=1}^{T} v_t\\), in \\(\\text{m}/\\text{s}\\).\n\n" +
		"$$\nA = \\begin{pmatrix} 1 & 20 \\\\ 300 & 4 \\end{pmatrix}\n$$\n\n" +
		"Unknown commands stay as written: \\(\\foo{x} + \\alpha\\)."
	lines := NewPainter(DarkTheme).Paint(Run{Entries: []transcript.Entry{ent("a", transcript.Agent{Markdown: md})}}, 60)
	golden(t, "paint_math", paintGrid(60, lines))
	text := ansi.Strip(strings.Join(lines, "\n"))
	for _, want := range []string{"v̄ = 1/T Σₜ₌₁ᵀ vₜ", "A = ( 1    20 )", "    ( 300  4  )", `\foo{x} + \alpha`} {
		if !strings.Contains(text, want) {
			t.Errorf("the painted answer lacks %q:\n%s", want, text)
		}
	}
	for _, bad := range []string{`\bar`, `\frac`, `\sum`, `\\`, `\begin`} {
		if strings.Contains(text, bad) {
			t.Errorf("the painted answer still holds %q:\n%s", bad, text)
		}
	}
}

// BenchmarkTexText is the whole-formula conversion of a typical inline
// formula, which runs for every formula in every answer block painted.
func BenchmarkTexText(b *testing.B) {
	const tex = `\bar{v} = \frac{1}{T} \sum_{t=1}^{T} v_t \quad \text{with} \quad v_t \in \mathbb{R}^n`
	for b.Loop() {
		_ = texText(tex)
	}
}
