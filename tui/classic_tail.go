package tui

import (
	"fmt"

	"github.com/foliodev/folio/transcript"
)

// Tail bounds what the classic view prints when it starts on a document
// that already holds a conversation (a resume): the last turns, not the
// whole conversation, so a resume costs what it prints.
//
// A turn starts at a user entry. With Turns > 0 the last Turns turns are
// printed; with Turns == 0 the last turns that fill about Screens screens
// of Rows rows (at least one turn); with Turns < 0 every entry the document
// holds. When anything comes before what is printed, one line first says
// how many entries that is (counting the ones the document elides, as
// folio log ls counts a conversation's entries) and, through Hint, how to
// see them.
type Tail struct {
	Turns int
	// Rows is the terminal's height, for Turns == 0; 0 means 24.
	Rows int
	// Hint completes the earlier-entries line, for example with the
	// command that prints them; "" leaves it out.
	Hint func(doc transcript.Document) string
}

// SetTail bounds what the projection prints of each generation's document
// to t. Without it (and with Turns < 0) everything the document holds is
// printed.
func (c *Classic) SetTail(t Tail) { c.tail = &t }

// tailScreens is how many screens of the last turns Turns == 0 prints.
const tailScreens = 2

// tailStart returns the index of the first entry of doc to print under t
// at width, painting only what it returns (and at most one turn more).
func (c *Classic) tailStart(doc transcript.Document, width int) int {
	t := c.tail
	n := doc.Len()
	if t == nil || t.Turns < 0 || n == 0 {
		return 0
	}
	budget := 0
	if t.Turns == 0 {
		rows := t.Rows
		if rows <= 0 {
			rows = 24
		}
		budget = tailScreens * rows
	}
	never := func(string) bool { return false }
	start, turns, lines := n, 0, 0
	for i := n - 1; i >= 0; i-- {
		if _, ok := doc.At(i).Content.(transcript.User); !ok {
			continue
		}
		if t.Turns == 0 {
			h := 0
			for j := i; j < start; {
				b := runAt(doc, j)
				h += c.cache.height(doc, b, width, never)
				j = b.end
			}
			if turns > 0 && lines+h > budget {
				break
			}
			lines += h
		}
		start, turns = i, turns+1
		if t.Turns > 0 && turns == t.Turns {
			break
		}
	}
	if start == n {
		return 0 // no turn at all: print what there is
	}
	return start
}

// earlierLine is the line that says how many entries come before the
// printed ones, or "" when none do.
func (c *Classic) earlierLine(doc transcript.Document, from int) string {
	n := doc.Elided() + from
	if n == 0 {
		return ""
	}
	noun := "entries"
	if n == 1 {
		noun = "entry"
	}
	s := fmt.Sprintf("⋯ %d earlier %s", n, noun)
	if c.tail != nil && c.tail.Hint != nil {
		if h := c.tail.Hint(doc); h != "" {
			s += " · " + h
		}
	}
	return c.cache.painter.theme.finish(c.cache.painter.pal.faint.Render(s))
}

// PrintFrom returns every line the classic view prints of doc from entry
// from on, its live region included, as if it had printed the whole
// document: for output nobody interacts with that a long conversation
// gets in parts (folio log show). The entries before from are context
// only: a part that starts at a multiple of 64 entries after a context of
// 64 (or at the document's start) paints exactly as the whole would.
func (c *Classic) PrintFrom(doc transcript.Document, from, width int) []string {
	*c = Classic{cache: c.cache, mounted: true, gen: 1, next: doc.Elided() + from}
	f := c.Sync(doc, 1, width, 1<<30)
	return append(f.Print, f.Live...)
}

// PartAlign is the alignment PrintFrom's parts need (see PrintFrom).
const PartAlign = maxRun
