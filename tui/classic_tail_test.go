package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/transcript"
)

// genLog writes a generated conversation of n messages and returns its path.
func genLog(t testing.TB, n int, seed uint64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "conv.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gen.Write(f, gen.Options{Messages: n, Seed: seed, Summaries: true}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// resumedTail is what a chat resuming path holds: the engine's tail of it.
func resumedTail(t testing.TB, path string) transcript.Document {
	t.Helper()
	l, err := history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	conv, err := engine.LoadTail(l)
	if err != nil {
		t.Fatal(err)
	}
	return conv.Document
}

// lastTurns is the start of the last n turns of entries.
func lastTurns(es []transcript.Entry, n int) int {
	for i := len(es) - 1; i >= 0; i-- {
		if _, ok := es[i].Content.(transcript.User); ok {
			if n--; n == 0 {
				return i
			}
		}
	}
	return 0
}

// The classic view resuming a long conversation prints exactly the end of
// history's reading of the log, its last turns, after one line that counts
// the entries before them as folio log ls does.
func TestClassicResumePrintsTheLastTurns(t *testing.T) {
	t.Parallel()
	path := genLog(t, 3000, 2)
	whole, err := history.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	all := whole.Document.Entries()
	tail := resumedTail(t, path)
	if tail.Elided() == 0 {
		t.Fatal("the resume loaded the whole conversation; the test needs a tail")
	}
	const width = 80
	for _, turns := range []int{1, 3, 5} {
		t.Run(fmt.Sprint(turns), func(t *testing.T) {
			c := NewClassic(NewPainter(PlainTheme, ForClassic()))
			c.SetTail(Tail{Turns: turns, Hint: func(transcript.Document) string { return "folio log show ID" }})
			c.Mount()
			f := c.Sync(tail, 1, width, 1000)
			got := append(f.Print, f.Live...)

			from := lastTurns(all, turns)
			want := fmt.Sprintf("⋯ %d earlier entries · folio log show ID", from)
			if ansi.Strip(got[0]) != want {
				t.Fatalf("the first line is %q, want %q", ansi.Strip(got[0]), want)
			}
			ref := NewClassic(NewPainter(PlainTheme, ForClassic()))
			ref.Mount()
			rf := ref.Sync(doc(all[from:]...), 1, width, 1000)
			// The printed runs keep their separator line; the reference
			// starts its document there and so has none.
			wantLines := append([]string{""}, append(rf.Print, rf.Live...)...)
			if strings.Join(got[1:], "\n") != strings.Join(wantLines, "\n") {
				t.Errorf("the printed tail differs from the last %d turns of the log:\ngot:\n%s\nwant:\n%s",
					turns, strings.Join(got[1:], "\n"), strings.Join(wantLines, "\n"))
			}
		})
	}
}

// By default the classic resume prints about two screens of the last
// turns, never a conversation's worth: what it paints is bounded by what
// it prints.
func TestClassicResumeDefaultIsAboutTwoScreens(t *testing.T) {
	t.Parallel()
	tail := resumedTail(t, genLog(t, 3000, 3))
	c := NewClassic(NewPainter(PlainTheme, ForClassic()))
	const rows = 30
	c.SetTail(Tail{Rows: rows})
	c.Mount()
	f := c.Sync(tail, 1, 80, 1000)
	n := len(f.Print) + len(f.Live)
	if n < 2 {
		t.Fatalf("printed %d lines", n)
	}
	if !strings.Contains(ansi.Strip(f.Print[0]), "earlier entries") {
		t.Errorf("no earlier-entries line: %q", f.Print[0])
	}
	// At least one turn, and more than two screens only when one turn
	// alone is that long.
	if n > tailScreens*rows+2 && strings.Count(strings.Join(f.Print, "\n"), "› ") > 1 {
		t.Errorf("printed %d lines for %d rows, more than two screens of several turns", n, rows)
	}
	if c.cache.Renders > 200 {
		t.Errorf("painted %d runs to print %d lines", c.cache.Renders, n)
	}
}
