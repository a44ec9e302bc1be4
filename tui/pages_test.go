package tui

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// logPager pages a log file through its page index, as the chat does.
type logPager struct {
	path  string
	reads int
	fail  bool
}

func (p *logPager) Page(lo, hi int) ([]transcript.Entry, []int, error) {
	p.reads++
	if p.fail {
		return nil, nil, fmt.Errorf("disk on fire")
	}
	es, sizes, err := history.HeadEntries(p.path, lo, hi)
	for i := range sizes {
		sizes[i] = 8 << 10 // a page budget's worth of pages in a few entries
	}
	return es, sizes, err
}

// appendRaw appends lines to a log file.
func appendRaw(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// checkWindow compares the entries the view paints with history's whole
// reading of the log at the same positions, IDs and bytes.
func checkWindow(t *testing.T, v *viewport, all []transcript.Entry, what string) {
	t.Helper()
	d := v.doc
	lo := d.Elided()
	if lo+d.Len() > len(all) {
		t.Fatalf("%s: the window holds positions %d..%d of %d", what, lo, lo+d.Len(), len(all))
	}
	for i := range d.Len() {
		got, want := d.At(i), all[lo+i]
		gb, err1 := json.Marshal(got)
		wb, err2 := json.Marshal(want)
		if err1 != nil || err2 != nil || string(gb) != string(wb) {
			t.Fatalf("%s: position %d holds %s, history reads %s", what, lo+i, gb, wb)
		}
	}
}

// At random reading positions, the entries the fullscreen window holds are
// history's reading of the log at those positions: through page reads
// backwards, Home, reads forwards from there and evictions, on a generated
// log with a rejected batch at its end.
func TestViewportPagesAreHistorysReading(t *testing.T) {
	t.Parallel()
	path := genLog(t, 20000, 5)
	// A batch that repeats an ID is rejected whole: the reading skips it.
	appendRaw(t, path, `{"type":"ui-append","at":"2026-10-01T10:00:00.000Z","entries":[{"id":"fresh-1","timestamp":"2026-10-01T10:00:00.000Z","content":{"kind":"agent","markdown":"never shown"}},{"id":"fresh-1","timestamp":"2026-10-01T10:00:00.000Z","content":{"kind":"agent","markdown":"twice"}}]}`)
	whole, err := history.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Problems) == 0 {
		t.Fatal("the batch was not rejected")
	}
	all := whole.Document.Entries()
	src := resumedTail(t, path)
	if src.Elided() < 2*pageEntries {
		t.Fatalf("the engine's tail elides only %d entries", src.Elided())
	}
	pg := &logPager{path: path}
	v := newViewport(newRenderCache(NewPainter(PlainTheme)), 80, 30)
	v.Pager = pg
	v.SetDocument(src, 1)
	checkWindow(t, v, all, "the live edge")
	rng := rand.New(rand.NewPCG(1, 2))
	for step := range 120 {
		var what string
		switch k := rng.IntN(10); {
		case k < 5:
			n := rng.IntN(400) + 1
			v.ScrollBy(-n)
			what = fmt.Sprintf("step %d: up %d", step, n)
		case k < 8:
			n := rng.IntN(400) + 1
			v.ScrollBy(n)
			what = fmt.Sprintf("step %d: down %d", step, n)
		case k < 9:
			v.Top()
			what = fmt.Sprintf("step %d: home", step)
		default:
			v.JumpToLatest()
			what = fmt.Sprintf("step %d: end", step)
		}
		v.Lines()
		checkWindow(t, v, all, what)
		if len(v.pg.es) > 0 && v.pg.bytes > pageBudget+pageEntries*8<<10 {
			t.Fatalf("%s: %d bytes of pages held, over the budget", what, v.pg.bytes)
		}
	}
	// Home shows the conversation's first entry.
	v.Top()
	if v.doc.Elided() != 0 || v.doc.At(0).ID != all[0].ID {
		t.Fatalf("home shows position %d, not the first entry", v.doc.Elided())
	}
}

// A page read that fails shows one line saying so and keeps the view on
// what it holds; the next scroll tries again.
func TestViewportPageReadFailureShowsANotice(t *testing.T) {
	t.Parallel()
	path := genLog(t, 20000, 6)
	src := resumedTail(t, path)
	pg := &logPager{path: path, fail: true}
	v := newViewport(newRenderCache(NewPainter(PlainTheme)), 80, 20)
	v.Pager = pg
	v.SetDocument(src, 1)
	v.ScrollBy(-100000)
	lines := plain(v.Lines())
	if want := "✗ earlier entries could not be read: disk on fire · pgup tries again"; lines[0] != want {
		t.Fatalf("the first line is %q, want %q", lines[0], want)
	}
	if v.doc.At(0).ID != src.At(0).ID {
		t.Fatal("the view lost what it held")
	}
	pg.fail = false
	v.ScrollBy(-10)
	if lines := plain(v.Lines()); lines[0] == "✗ earlier entries could not be read: disk on fire · pgup tries again" {
		t.Fatal("the notice stayed after a read that worked")
	}
	if v.doc.Elided() >= src.Elided() {
		t.Fatal("the retry read nothing")
	}
}

// A failure too long for the line is cut, not the way to retry.
func TestPageNoticeKeepsTheRetry(t *testing.T) {
	t.Parallel()
	path := genLog(t, 3000, 7)
	src := resumedTail(t, path)
	long := "open /a/very/long/path/to/a/data/folder/conversations/20260101-000000-b16b16.jsonl: no such file or directory"
	v := newViewport(newRenderCache(NewPainter(PlainTheme)), 60, 10)
	v.Pager = failing(long)
	v.SetDocument(src, 1)
	v.ScrollBy(-100000)
	l := plain(v.Lines())[0]
	if !strings.HasPrefix(l, "✗ earlier entries could not be read: ope") || !strings.HasSuffix(l, "… · pgup tries again") || textWidth(l) > 60 {
		t.Fatalf("the notice is %q (%d columns of 60)", l, textWidth(l))
	}
}

type failing string

func (f failing) Page(lo, hi int) ([]transcript.Entry, []int, error) {
	return nil, nil, errors.New(string(f))
}

// findingPager is a logPager that finds entries, as the chat's does.
type findingPager struct{ logPager }

func (p *findingPager) Find(id string) (int, error) {
	f, err := os.Open(p.path)
	if err != nil {
		return -1, err
	}
	defer f.Close()
	ix, err := history.OpenIndex(p.path, f, 0)
	if err != nil {
		return -1, err
	}
	defer ix.Close()
	d, err := ix.Document(ix.Head())
	if err != nil {
		return -1, err
	}
	return d.Find(id)
}

// ScrollTo an entry far before the engine's tail (a search hit) reads its
// page and puts it at the top; with a Pager that cannot find entries, or
// for an ID the conversation lacks, it reports false.
func TestViewportScrollToAnEntryBeforeTheTail(t *testing.T) {
	t.Parallel()
	path := genLog(t, 20000, 7)
	whole, err := history.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	all := whole.Document.Entries()
	src := resumedTail(t, path)
	target := all[src.Elided()/3].ID
	for _, c := range []struct {
		name  string
		pager Pager
		id    string
		want  bool
	}{
		{"finder", &findingPager{logPager{path: path}}, target, true},
		{"pager only", &logPager{path: path}, target, false},
		{"unknown", &findingPager{logPager{path: path}}, "no-such-entry", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := newViewport(newRenderCache(NewPainter(PlainTheme)), 80, 30)
			v.Pager = c.pager
			v.SetDocument(src, 1)
			if got := v.ScrollTo(c.id); got != c.want {
				t.Fatalf("ScrollTo = %v, want %v", got, c.want)
			}
			v.Lines()
			checkWindow(t, v, all, c.name)
			if _, ok := v.doc.Index(target); ok != c.want {
				t.Fatalf("the window holds the entry: %v", ok)
			}
			if c.want && v.anchorID != v.doc.At(runAt(v.doc, mustIndex(t, v.doc, target)).start).ID {
				t.Fatalf("the window is anchored at %q, not at the entry's run", v.anchorID)
			}
		})
	}
}

func mustIndex(t *testing.T, d transcript.Document, id string) int {
	t.Helper()
	i, ok := d.Index(id)
	if !ok {
		t.Fatalf("no entry %q", id)
	}
	return i
}
