package tui

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

func TestHitSpans(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, plain string
		words       []string
		want        [][2]int
	}{
		{"any case", "The Quokka and the quokka", []string{"quokka"}, [][2]int{{4, 10}, {19, 25}}},
		{"word start only", "prequokka quokkas", []string{"quokka"}, [][2]int{{10, 16}}},
		{"several words, longest first", "lazy dog lazy", []string{"lazy", "dog"}, [][2]int{{0, 4}, {5, 8}, {9, 13}}},
		{"wide cells", "東京 café Café", []string{"café"}, [][2]int{{5, 9}, {10, 14}}},
		{"with or without accents", "cafe café CAFÉ cafés", []string{"café"}, [][2]int{{0, 4}, {5, 9}, {10, 14}, {15, 19}}},
		{"accents as combining marks", "cafe\u0301 x Cafe", []string{"café"}, [][2]int{{0, 4}, {7, 11}}},
		{"a word spelled without accents", "Ångström angstrom", []string{"angstrom"}, [][2]int{{0, 8}, {9, 17}}},
		{"an accent does not start a word", "e\u0301cole", []string{"cole"}, nil},
		{"a word may begin with an accent", "\u0301alone x", []string{"alone"}, [][2]int{{0, 5}}},
		{"none", "nothing here", []string{"quokka"}, nil},
		{"no words", "anything", nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := hitSpans(c.plain, c.words); !slices.Equal(got, c.want) {
				t.Fatalf("hitSpans(%q, %q) = %v, want %v", c.plain, c.words, got, c.want)
			}
		})
	}
}

// markSpans reverses the matched cells and keeps the line's own styles
// around them.
func TestMarkSpans(t *testing.T) {
	t.Parallel()
	th := Theme{Dark: true, Profile: colorprofile.ANSI256}
	line := th.palette().user.Render("› tell me about the quokka plan")
	got := markSpans(line, hitSpans(ansi.Strip(line), []string{"quokka"}), markStyle)
	if ansi.Strip(got) != ansi.Strip(line) {
		t.Fatalf("the text changed: %q", ansi.Strip(got))
	}
	if !strings.Contains(got, "7mquokka") && !strings.Contains(got, ";7m"+"quokka") {
		t.Fatalf("the word is not reversed: %q", got)
	}
	before, after, _ := strings.Cut(got, "quokka")
	if !strings.Contains(before, "\x1b[") || !strings.Contains(after, "\x1b[") {
		t.Fatalf("the line's style is lost around the mark: %q", got)
	}
}

// findRig is a chat whose engine holds the tail of a generated log and
// whose Pager reads the rest, with a Find that answers three hits: one in
// the tail, two far before it.
type findRig struct {
	*chatRig
	all    []transcript.Entry
	src    transcript.Document
	pager  *logPager
	hits   []FindHit
	asked  []string
	fail   error
	noHits bool
}

func newFindRig(t *testing.T) *findRig {
	t.Helper()
	path := genLog(t, 20000, 11)
	whole, err := history.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := &findRig{all: whole.Document.Entries(), src: resumedTail(t, path), pager: &logPager{path: path}}
	el := f.src.Elided()
	for _, at := range []int{el + f.src.Len() - 3, el / 2, el / 5} {
		for f.all[at].Content.Kind() != transcript.KindUser {
			at--
		}
		word := strings.Fields(f.all[at].Content.(transcript.User).Text)[1]
		f.hits = append(f.hits, FindHit{Entry: f.all[at].ID, Pos: at, Words: []string{word}})
	}
	o := Options{Theme: Theme{Dark: true, Profile: colorprofile.ANSI256}, Pager: f.pager, Find: func(q string) (FindResult, error) {
		f.asked = append(f.asked, q)
		if f.fail != nil {
			return FindResult{}, f.fail
		}
		if f.noHits {
			return FindResult{}, nil
		}
		return FindResult{Hits: f.hits}, nil
	}}
	f.chatRig = newChatRig(t, o, 100, 30, demoProvider())
	if err := f.eng.Resume(f.src, nil); err != nil {
		t.Fatal(err)
	}
	f.send(snapshotMsg(f.store.Snapshot()))
	return f
}

func (f *findRig) key(k string) {
	switch k {
	case "ctrl+f":
		f.send(tea.KeyPressMsg{Code: 'f', Mod: tea.ModCtrl})
	case "ctrl+n":
		f.send(tea.KeyPressMsg{Code: 'n', Mod: tea.ModCtrl})
	case "ctrl+p":
		f.send(tea.KeyPressMsg{Code: 'p', Mod: tea.ModCtrl})
	case "esc":
		f.send(tea.KeyPressMsg{Code: tea.KeyEscape})
	case "enter":
		f.enter()
	default:
		f.typeText(k)
	}
}

// frame is the app's view with its escape sequences.
func (f *findRig) frame() string { return f.app.View().Content }

// shows checks the window holds hit i, marked, with the line saying so.
func (f *findRig) shows(i int, line string) {
	f.t.Helper()
	h := f.hits[i]
	fr := f.frame()
	plain := ansi.Strip(fr)
	if !strings.Contains(plain, line) {
		f.t.Fatalf("the find line does not say %q:\n%s", line, plain)
	}
	e := f.all[h.Pos]
	head := strings.Fields(e.Content.(transcript.User).Text)[0]
	if !strings.Contains(plain, "› "+head) {
		f.t.Fatalf("hit %d (%s at %d) is not in the window:\n%s", i+1, e.ID, h.Pos, plain)
	}
	if !strings.Contains(fr, "7m"+h.Words[0]) {
		f.t.Fatalf("hit %d's word %q is not marked:\n%q", i+1, h.Words[0], fr)
	}
}

// ctrl+f opens the find line; enter finds and shows the newest hit; enter
// and ctrl+n step to older hits (reading the page around each through the
// Pager, a page per step), ctrl+p back; esc closes it and drops the mark.
func TestAppFindStepsThroughHits(t *testing.T) {
	f := newFindRig(t)
	f.key("ctrl+f")
	if !strings.Contains(f.grid(), "find ›") {
		t.Fatalf("ctrl+f shows no find line:\n%s", f.grid())
	}
	f.key("quokka")
	f.key("enter")
	if !slices.Equal(f.asked, []string{"quokka"}) {
		t.Fatalf("Find was asked %q", f.asked)
	}
	f.shows(0, "hit 1 of 3")
	if f.pager.reads != 0 {
		t.Fatalf("the newest hit is in the engine's tail, yet %d pages were read", f.pager.reads)
	}
	f.key("enter")
	f.shows(1, "hit 2 of 3")
	f.key("ctrl+n")
	f.shows(2, "hit 3 of 3 (oldest)")
	if f.pager.reads > 4 {
		t.Fatalf("two steps read %d pages", f.pager.reads)
	}
	if n := f.app.view.doc.Len(); n > 2*pageEntries+f.src.Len() {
		t.Fatalf("the window holds %d entries", n)
	}
	f.key("enter")
	f.shows(2, "hit 3 of 3 (oldest)")
	f.key("ctrl+p")
	f.shows(1, "hit 2 of 3")
	if len(f.asked) != 1 {
		t.Fatalf("stepping asked Find again: %q", f.asked)
	}
	f.key("esc")
	if fr := f.frame(); strings.Contains(ansi.Strip(fr), "find ›") || strings.Contains(fr, "7m"+f.hits[1].Words[0]) {
		t.Fatalf("esc leaves the find line or the mark:\n%s", ansi.Strip(fr))
	}
	// The window stays at the hit.
	if _, ok := f.app.view.doc.Index(f.hits[1].Entry); !ok || f.app.view.Following() {
		t.Fatalf("esc moved the window away from the hit")
	}
}

// /find QUERY runs at once; no hits and a refused query say so.
func TestAppFindNothingAndBadQuery(t *testing.T) {
	f := newFindRig(t)
	f.noHits = true
	f.typeText("/find zebra")
	f.enter()
	if g := f.grid(); !strings.Contains(g, "no matches") {
		t.Fatalf("no hits:\n%s", g)
	}
	f.noHits = false
	f.fail = errors.New(`search: the quote at 1 is not closed`)
	for range len("zebra") {
		f.send(tea.KeyPressMsg{Code: tea.KeyBackspace})
	}
	f.key(`"open`)
	f.key("enter")
	if g := f.grid(); !strings.Contains(g, "the quote at 1 is not closed") {
		t.Fatalf("a refused query:\n%s", g)
	}
	if !f.app.view.Following() {
		t.Fatalf("a refused query moved the window")
	}
}

// The classic view has no window to move: /find says where it works.
func TestAppFindInClassicSaysWhere(t *testing.T) {
	r := newChatRig(t, Options{Theme: PlainTheme, Classic: true, Find: func(string) (FindResult, error) { return FindResult{}, nil }}, 80, 12, demoProvider())
	r.typeText("/find x")
	r.enter()
	if r.app.find != nil || !strings.Contains(r.app.status, "fullscreen") {
		t.Fatalf("classic /find: open %v, status %q", r.app.find != nil, r.app.status)
	}
}

// countingFinder is the chat's PageFinder, counting the plain page reads
// it is asked for.
type countingFinder struct {
	sizedFinder
	pages, around int
}

func (c *countingFinder) Page(lo, hi int) ([]transcript.Entry, []int, error) {
	c.pages++
	return c.sizedFinder.Page(lo, hi)
}

func (c *countingFinder) PageAround(id string, n, limit int) (int, int, []transcript.Entry, []int, error) {
	c.around++
	return c.sizedFinder.PageAround(id, n, limit)
}

// GoTo an entry far before the engine's tail with a PageFinder reads the
// page around it in one call (no position needed, no plain page read),
// and the window is history's reading there; an entry in the tail reads
// nothing; an unknown one is refused.
func TestViewportGoToReadsThePageAroundTheHit(t *testing.T) {
	t.Parallel()
	path := genLog(t, 20000, 13)
	whole, err := history.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	all := whole.Document.Entries()
	src := resumedTail(t, path)
	pf := &countingFinder{sizedFinder: sizedFinder{sizedPager{path}}}
	v := newViewport(newRenderCache(NewPainter(PlainTheme)), 80, 30)
	v.Pager = pf
	v.SetDocument(src, 1)
	deep := all[src.Elided()/4].ID
	if !v.GoTo(deep, -1, nil) {
		t.Fatal("GoTo a deep entry failed")
	}
	v.Lines()
	checkWindow(t, v, all, "deep")
	if pf.around != 1 || pf.pages != 0 {
		t.Fatalf("%d page-around reads and %d page reads, want 1 and 0", pf.around, pf.pages)
	}
	if _, ok := v.doc.Index(deep); !ok || v.mark.id != deep {
		t.Fatalf("the window does not hold or mark %s", deep)
	}
	tail := src.At(src.Len() - 5).ID
	if !v.GoTo(tail, -1, nil) {
		t.Fatal("GoTo an entry of the tail failed")
	}
	if _, ok := v.doc.Index(tail); !ok {
		t.Fatal("the window does not hold the tail's entry")
	}
	if v.GoTo("no-such-entry", -1, nil) {
		t.Fatal("GoTo an unknown entry succeeded")
	}
}

// TestHitSpansFoldAsTheIndex: every word of the table the search index's
// folding is held to (web/src/search/terms.parity.json, written from
// package search's tokens) is marked where the text writes it, given its
// folded form: the terminal finds the words the index matched.
func TestHitSpansFoldAsTheIndex(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "web", "src", "search", "terms.parity.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		In     string
		Tokens []struct{ Text, Folded string }
	}
	if err := json.Unmarshal(b, &cases); err != nil || len(cases) < 20 {
		t.Fatalf("terms.parity.json: %d cases, %v", len(cases), err)
	}
	for _, c := range cases {
		at := 0
		for _, tok := range c.Tokens {
			i := strings.Index(c.In[at:], tok.Text)
			if i < 0 {
				t.Fatalf("%q: token %q not found after byte %d", c.In, tok.Text, at)
			}
			start, end := at+i, at+i+len(tok.Text)
			at = end
			want := [2]int{ansi.StringWidth(c.In[:start]), ansi.StringWidth(c.In[:end])}
			if !slices.Contains(hitSpans(c.In, []string{tok.Folded}), want) {
				t.Errorf("%q: %q (folded %q) not marked at cells %v: %v", c.In, tok.Text, tok.Folded, want, hitSpans(c.In, []string{tok.Folded}))
			}
		}
	}
}

// FuzzHitSpans: any text and words give spans in order, not overlapping,
// within the text's cells.
func FuzzHitSpans(f *testing.F) {
	f.Add("cafe café CAFÉ", "café")
	f.Add("e\u0301cole \u0301alone", "alone")
	f.Add("हिन्दी ẞ İstanbul", "istanbul")
	f.Fuzz(func(t *testing.T, text, word string) {
		w := ansi.StringWidth(text)
		last := 0
		for _, s := range hitSpans(text, []string{word, strings.ToUpper(word)}) {
			if s[0] < last || s[1] < s[0] || s[1] > w {
				t.Fatalf("hitSpans(%q, %q): span %v after %d, width %d", text, word, s, last, w)
			}
			last = s[1]
		}
	})
}
