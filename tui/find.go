package tui

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/foliodev/folio/transcript"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// This file holds find-in-conversation (ctrl+f, /find): a query line over
// the editor, the hits of the query inside the conversation shown, newest
// first, and the keys that step from one to the next. Each step puts the
// fullscreen window at the hit (through the Pager when it lies before the
// engine's document) and marks its matched words.

// FindHit is one hit of a find inside the current conversation.
type FindHit struct {
	Entry string
	// Pos is the entry's position in the conversation (every entry
	// counts, the first is 0), so the view reads the page around it
	// without looking it up; -1 when not known.
	Pos int
	// Words are the matched words as the entry writes them, for the view
	// to mark.
	Words []string
}

// FindResult is what a find found: its hits, newest first, and whether
// older ones were left out (a find lists a bounded number).
type FindResult struct {
	Hits []FindHit
	More bool
}

// PageFinder is a Pager that finds an entry and reads the page around it
// in one look at the log's page index (a chat host's): having found the
// entry, the index reads its neighbours near it, so a hit far back in a
// long conversation costs what a page near its end does.
type PageFinder interface {
	// PageAround returns up to n entries around entry id, all before
	// position limit, the first at position lo, with their stored sizes;
	// lo is -1 when the conversation has no such entry. An entry at or
	// after limit is not read: its position comes back with no entries.
	PageAround(id string, n, limit int) (lo, at int, entries []transcript.Entry, sizes []int, err error)
}

// findKey opens the find line.
const findKey = "ctrl+f"

// Keys of the open find line: enter runs a changed query or goes to the
// next (older) hit; these step either way.
const (
	findOlderKey = "ctrl+n"
	findNewerKey = "ctrl+p"
)

// finder is the open find line and what its last query found.
type finder struct {
	input textinput.Model
	query string // the query res answers; "" before one ran
	res   FindResult
	at    int // the hit shown, an index into res.Hits
	err   string
}

// openFind opens the find line with q in it, and runs q when it is not
// empty (/find QUERY).
func (a *App) openFind(q string) {
	switch {
	case a.view == nil:
		a.status = "find works in the fullscreen view; /search lists hits in every conversation"
		return
	case a.o.Find == nil:
		a.status = "find is not available here"
		return
	}
	if a.find == nil {
		in := textinput.New()
		in.Prompt = "find › "
		in.CharLimit = 512
		in.SetVirtualCursor(false)
		a.find = &finder{input: in}
	}
	a.find.input.SetValue(q)
	a.find.input.CursorEnd()
	a.find.input.Focus()
	a.input.Blur()
	if strings.TrimSpace(q) != "" {
		a.runFind()
	}
	a.layout()
}

// closeFind closes the find line; the window stays where the last hit put
// it, without the mark.
func (a *App) closeFind() {
	a.find = nil
	if a.view != nil {
		a.view.mark = hitMark{}
	}
	a.input.Focus()
	a.layout()
}

// findKeyPress handles a key while the find line is open; handled is false
// for keys that should reach the transcript (paging, scrolling).
func (a *App) findKeyPress(k tea.KeyPressMsg) (tea.Cmd, bool) {
	f := a.find
	switch k.String() {
	case "esc", "ctrl+c", findKey:
		a.closeFind()
		return nil, true
	case "enter":
		if q := strings.TrimSpace(f.input.Value()); q != f.query || f.err != "" {
			a.runFind()
		} else {
			a.stepFind(1)
		}
		return nil, true
	case findOlderKey:
		a.stepFind(1)
		return nil, true
	case findNewerKey:
		a.stepFind(-1)
		return nil, true
	case "pgup", "pgdown", "shift+up", "shift+down", "ctrl+home", "ctrl+end", "ctrl+o":
		return nil, false
	}
	var cmd tea.Cmd
	f.input, cmd = f.input.Update(k)
	return cmd, true
}

// runFind asks for the query's hits in this conversation and goes to the
// newest.
func (a *App) runFind() {
	f := a.find
	q := strings.TrimSpace(f.input.Value())
	f.query, f.res, f.at, f.err = q, FindResult{}, 0, ""
	a.view.mark = hitMark{}
	if q == "" {
		return
	}
	res, err := a.o.Find(q)
	if err != nil {
		f.err = err.Error()
		return
	}
	f.res = res
	a.showFound()
}

// stepFind goes d hits on: 1 older, -1 newer, stopping at either end.
func (a *App) stepFind(d int) {
	f := a.find
	if len(f.res.Hits) == 0 {
		return
	}
	n := f.at + d
	if n < 0 || n >= len(f.res.Hits) {
		return // the line says which end this is
	}
	f.at = n
	a.showFound()
}

// showFound puts the window at the current hit and marks it.
func (a *App) showFound() {
	f := a.find
	if len(f.res.Hits) == 0 {
		return
	}
	h := f.res.Hits[f.at]
	if !a.view.GoTo(h.Entry, h.Pos, h.Words) {
		f.err = "that hit is no longer in this conversation's branch"
	}
}

// findLine is the find line as the chrome shows it in place of the editor.
func (a *App) findLine() string {
	f := a.find
	var note string
	switch {
	case f.err != "":
		note = a.pal.bad.Render(f.err)
	case f.query == "" || f.query != strings.TrimSpace(f.input.Value()):
		note = a.pal.dim.Render("enter finds in this conversation · esc closes")
	case len(f.res.Hits) == 0:
		note = a.pal.warn.Render("no matches")
	default:
		n := fmt.Sprint(len(f.res.Hits))
		if f.res.More {
			n += "+"
		}
		where := ""
		switch {
		case f.at == len(f.res.Hits)-1 && f.res.More:
			where = " (the oldest listed; narrow the query for older ones)"
		case f.at == len(f.res.Hits)-1 && len(f.res.Hits) > 1:
			where = " (oldest)"
		}
		note = a.pal.info.Render(fmt.Sprintf("hit %d of %s%s", f.at+1, n, where)) +
			a.pal.dim.Render(" · enter/"+findOlderKey+" older · "+findNewerKey+" newer · esc close")
	}
	f.input.SetWidth(max(a.width/2, 10))
	return truncate(f.input.View()+"  "+note, a.width)
}

// markStyle is how a hit's matched words show: reversed, which every
// terminal shows, with or without colors.
var markStyle = lipgloss.NewStyle().Reverse(true).Bold(true)

// hitMark is the entry a search or a find put the window at, and the words
// to mark in it.
type hitMark struct {
	id    string
	words []string
}

// GoTo puts the window at entry id, at position pos of the conversation
// (or, when pos is -1 or stale, wherever the Finder says it is), with the
// line of its first matched word near the top, and marks words in it. It
// reports false when the conversation has no such entry.
func (v *viewport) GoTo(id string, pos int, words []string) bool {
	_, ok := v.doc.Index(id)
	if !ok {
		ok = v.pageAround(id)
	}
	if !ok && pos >= 0 {
		if pos >= v.src.Elided() {
			// In the engine's document: back from any detached pages.
			if v.detached() {
				v.dropPages()
			}
		} else if v.Pager != nil {
			v.pageAt(pos)
		}
		_, ok = v.doc.Index(id)
	}
	if !ok && !v.ScrollTo(id) {
		return false
	}
	i, _ := v.doc.Index(id)
	v.leaveEdge()
	b := runAt(v.doc, i)
	v.mark = hitMark{id: id, words: words}
	off := 0
	p := v.cache.run(v.doc, b, v.width, v.expandedFn())
	for l := range p.Len() {
		if len(hitSpans(ansi.Strip(p.Line(l)), words)) > 0 {
			off = max(l-2, 0)
			break
		}
	}
	v.anchorID, v.anchorOff = v.doc.At(b.start).ID, off
	v.settle()
	return true
}

// pageAround reads the page around entry id through a PageFinder, in
// place of any paged entries; it reports whether the window now holds id.
func (v *viewport) pageAround(id string) bool {
	pf, ok := v.Pager.(PageFinder)
	if !ok {
		return false
	}
	lo, at, es, sizes, err := pf.PageAround(id, pageEntries, v.src.Elided())
	switch {
	case err != nil:
		v.pg.err = "the hit's page could not be read: " + err.Error()
		return false
	case at < 0:
		return false
	case at >= v.src.Elided():
		if v.detached() {
			v.dropPages()
		}
	default:
		v.pg = paged{es: es, sizes: sizes, lo: lo}
		for _, s := range sizes {
			v.pg.bytes += s
		}
		v.compose()
	}
	_, ok = v.doc.Index(id)
	return ok
}

// markedLines returns run p's lines with the mark's words shown reversed;
// when none of its lines has one (the word is in a folded part), its first
// line is reversed whole, so the entry is marked all the same.
func (v *viewport) markedLines(p painted) []string {
	out := make([]string, p.Len())
	st := markStyle
	found := false
	for i := range out {
		l := p.Line(i)
		if spans := hitSpans(ansi.Strip(l), v.mark.words); len(spans) > 0 {
			found = true
			l = markSpans(l, spans, st)
		}
		out[i] = l
	}
	if !found {
		for i, l := range out {
			if s := ansi.Strip(l); strings.TrimSpace(s) != "" {
				out[i] = st.Render(s)
				break
			}
		}
	}
	th := v.cache.painter.theme
	for i := range out {
		out[i] = th.finish(out[i])
	}
	return out
}

// hitSpans finds words in plain text as cell ranges [from, to), in order
// and not overlapping. Words are compared as the index folds them: in any
// case and with or without accents, so a hit whose snippet spells a word
// "café" marks "cafe" and "CAFÉ" too. A word counts where it starts at a
// word boundary, as the index matched it (a prefix query's word may go
// on).
func hitSpans(plain string, words []string) [][2]int {
	if len(words) == 0 || plain == "" {
		return nil
	}
	// The runes of plain and where each starts in it (an invalid byte is
	// a rune of its own, U+FFFD).
	var rs []rune
	var offs []int
	for i, r := range plain {
		rs, offs = append(rs, r), append(offs, i)
	}
	offs = append(offs, len(plain))
	folded, at := foldRunes(rs)
	fws := make([][]rune, len(words))
	for i, w := range words {
		fws[i], _ = foldRunes([]rune(w))
	}
	var spans [][2]int // rune ranges
	for k := 0; k < len(folded); {
		best, from := 0, wordStart(rs, at, k)
		if from >= 0 {
			for _, wr := range fws {
				if len(wr) > best && hasRunesAt(folded, wr, k) {
					best = len(wr)
				}
			}
		}
		if best == 0 {
			k++
			continue
		}
		if n := len(spans); n > 0 {
			from = max(from, spans[n-1][1]) // marks the last word took
		}
		to := at[k+best-1] + 1
		for to < len(rs) && unicode.Is(unicode.Mn, rs[to]) {
			to++ // the accents of the word's last letter
		}
		spans = append(spans, [2]int{from, to})
		k += best
		for k < len(folded) && at[k] < to {
			k++
		}
	}
	if len(spans) == 0 {
		return nil
	}
	// Rune ranges to cell ranges of plain as it is.
	out := make([][2]int, len(spans))
	for k, s := range spans {
		out[k] = [2]int{ansi.StringWidth(plain[:offs[s[0]]]), ansi.StringWidth(plain[:offs[s[1]]])}
	}
	return out
}

// wordStart reports where in rs the word starts whose folded form starts
// at folded rune k, or -1 when a word does not start there: rune at[k]
// (at its first folded rune) follows no letter or digit, with only marks
// the folding took out between (a word may begin with an accent, as the
// index reads it: its folded form begins after it).
func wordStart(rs []rune, at []int, k int) int {
	i := at[k]
	if k > 0 && at[k-1] == i {
		return -1
	}
	j := i
	for j > 0 && unicode.Is(unicode.Mn, rs[j-1]) {
		j--
	}
	if j > 0 && isWordRune(rs[j-1]) {
		return -1
	}
	return j
}

// foldRunes folds rs as the search index folds words (lower case, the
// letters' accents taken off: é and e\u0301 are e); at[k] is the index in
// rs of the rune folded rune k came from.
func foldRunes(rs []rune) (folded []rune, at []int) {
	folded, at = make([]rune, 0, len(rs)), make([]int, 0, len(rs))
	for i, r := range rs {
		if r < utf8.RuneSelf {
			folded, at = append(folded, unicode.ToLower(r)), append(at, i)
			continue
		}
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		for _, d := range norm.NFD.String(string(r)) {
			if !unicode.Is(unicode.Mn, d) {
				folded, at = append(folded, unicode.ToLower(d)), append(at, i)
			}
		}
	}
	return folded, at
}

func hasRunesAt(s, w []rune, i int) bool {
	if i+len(w) > len(s) {
		return false
	}
	for k, r := range w {
		if s[i+k] != r {
			return false
		}
	}
	return true
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// markSpans styles the cells spans of line (which may hold escape
// sequences) with st; the styles around them are kept.
func markSpans(line string, spans [][2]int, st lipgloss.Style) string {
	var b strings.Builder
	at := 0
	w := ansi.StringWidth(line)
	for _, s := range spans {
		if s[0] > at {
			b.WriteString(ansi.Cut(line, at, s[0]))
		}
		b.WriteString(st.Render(ansi.Strip(ansi.Cut(line, s[0], s[1]))))
		at = s[1]
	}
	if at < w {
		b.WriteString(ansi.Cut(line, at, w))
	}
	return b.String()
}
