package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/foliodev/folio/transcript"
)

// A table is as wide as its cells need, not the whole width; a wide one
// still fits the width.
func TestTablesSizedToContent(t *testing.T) {
	t.Parallel()
	md := "| tool | ms |\n|---|--:|\n| shell | 12 |\n| read_file | 3 |\n"
	lines := NewPainter(DarkTheme).Paint(Run{Entries: []transcript.Entry{ent("a", transcript.Agent{Markdown: md})}}, 100)
	golden(t, "paint_table", paintGrid(100, lines))
	widest := 0
	for _, l := range lines {
		widest = max(widest, ansi.StringWidth(strings.TrimRight(ansi.Strip(l), " ")))
	}
	if widest > 30 {
		t.Errorf("a two-column table of short cells is %d columns wide at width 100:\n%s", widest, ansi.Strip(strings.Join(lines, "\n")))
	}
	wide := "| a | b |\n|---|---|\n| " + strings.Repeat("word ", 30) + "| x |\n"
	for _, l := range NewPainter(DarkTheme).Paint(Run{Entries: []transcript.Entry{ent("b", transcript.Agent{Markdown: wide})}}, 60) {
		if w := ansi.StringWidth(l); w > 60 {
			t.Fatalf("a wide table overflows 60 columns: %d", w)
		}
	}
}
