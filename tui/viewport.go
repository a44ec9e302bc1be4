package tui

import (
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/foliodev/folio/transcript"
)

// viewport is the fullscreen view's transcript pane: a window of a given
// size over a document. It is a Bubble Tea component: feed it messages with
// Update, draw it with View, and hand it each new snapshot with
// SetDocument.
//
// Its position is an anchor, not a line number: the first entry of the run
// at the top of the window plus how many of that run's lines are above the
// window. Appending entries, settling a stream or resizing keep the anchor,
// so the text being read stays put. While following (at the live edge) the
// window shows the newest lines. A new generation (a replaced, cleared or
// rehydrated document) starts over at the live edge with nothing unseen.
//
// Only runs that touch the window are painted or measured, and painted
// runs are cached by fingerprint, so the cost of a frame does not depend
// on how long the conversation is.
//
// A viewport is not safe for concurrent use.
type viewport struct {
	cache         *renderCache
	doc           transcript.Document // what is painted: src, with paged entries (pages.go)
	src           transcript.Document // the engine's document
	pg            paged
	gen           uint64
	mounted       bool
	width, height int

	follow    bool
	anchorID  string // first entry of the run at the top of the window
	anchorOff int    // lines of that run above the window
	baseline  int    // the conversation's length (Elided ones too) when the reader left the live edge
	expanded  map[string]bool
	mark      hitMark // the search or find hit marked (find.go)

	Keys keyMap
	// Pager reads the entries before the engine's document (a resumed
	// conversation's); nil scrolls back only as far as the document goes.
	Pager Pager
}

// keyMap names the keys the viewport answers to, as Bubble Tea key strings.
type keyMap struct {
	LineUp, LineDown, PageUp, PageDown, Top, Latest, Expand []string
}

// defaultKeyMap is the viewport's default key map. The editor below it owns
// the printable keys, so the viewport's keys are navigation and control keys.
var defaultKeyMap = keyMap{
	LineUp:   []string{"up", "ctrl+p"},
	LineDown: []string{"down", "ctrl+n"},
	PageUp:   []string{"pgup"},
	PageDown: []string{"pgdown"},
	Top:      []string{"home", "ctrl+home"},
	Latest:   []string{"end", "ctrl+end"},
	Expand:   []string{"ctrl+o"},
}

// wheelLines is how far one wheel notch scrolls.
const wheelLines = 3

// newViewport returns a viewport painting with cache, following the live
// edge of an empty document.
func newViewport(cache *renderCache, width, height int) *viewport {
	return &viewport{cache: cache, width: width, height: height, follow: true, expanded: map[string]bool{}, Keys: defaultKeyMap}
}

// SetDocument shows doc, the document of generation gen. Within one
// generation the reading position is kept; a new generation starts at the
// live edge with a fresh unseen baseline and nothing expanded.
func (v *viewport) SetDocument(doc transcript.Document, gen uint64) {
	if !v.mounted || gen != v.gen {
		v.mounted, v.gen = true, gen
		v.follow, v.anchorID, v.anchorOff = true, "", 0
		v.baseline = length(doc)
		clear(v.expanded)
		v.cache.resetStreams()
		v.pg = paged{}
		v.mark = hitMark{}
	} else if !v.follow {
		v.keepDropped(doc)
	}
	v.src = doc
	if v.follow {
		v.baseline = length(doc)
		v.pg = paged{}
	}
	v.compose()
}

// length is how many entries the conversation has: the ones doc holds and
// the ones before them it leaves out.
func length(doc transcript.Document) int { return doc.Elided() + doc.Len() }

// Document returns the document shown and its generation.
func (v *viewport) Document() (transcript.Document, uint64) { return v.doc, v.gen }

// Source is the engine's document the view was last given.
func (v *viewport) Source() transcript.Document { return v.src }

// SetSize changes the window size. The text reflows from the source at the
// new width; the anchor is kept.
func (v *viewport) SetSize(width, height int) {
	v.width, v.height = max(width, 1), max(height, 1)
}

// Following reports whether the window is at the live edge.
func (v *viewport) Following() bool { return v.follow }

// Unseen is the number of entries added since the reader scrolled away
// from the live edge.
func (v *viewport) Unseen() int {
	if v.follow {
		return 0
	}
	return max(length(v.src)-v.baseline, 0)
}

// Expanded reports whether entry id is expanded.
func (v *viewport) Expanded(id string) bool { return v.expanded[id] }

// SetExpanded expands or folds entry id.
func (v *viewport) SetExpanded(id string, on bool) {
	if on {
		v.expanded[id] = true
	} else {
		delete(v.expanded, id)
	}
}

// Update handles resize, keys and the mouse wheel.
func (v *viewport) Update(msg tea.Msg) tea.Cmd {
	switch m := msg.(type) {
	case tea.WindowSizeMsg:
		v.SetSize(m.Width, m.Height)
	case tea.BackgroundColorMsg:
		th := v.cache.painter.theme
		if th.Dark != m.IsDark() {
			th.Dark = m.IsDark()
			v.cache.SetPainter(v.cache.painter.WithTheme(th))
		}
	case tea.MouseWheelMsg:
		switch m.Button {
		case tea.MouseWheelUp:
			v.ScrollBy(-wheelLines)
		case tea.MouseWheelDown:
			v.ScrollBy(wheelLines)
		}
	case tea.KeyPressMsg:
		k := m.String()
		switch {
		case matches(k, v.Keys.LineUp):
			v.ScrollBy(-1)
		case matches(k, v.Keys.LineDown):
			v.ScrollBy(1)
		case matches(k, v.Keys.PageUp):
			v.ScrollBy(-max(v.height-1, 1))
		case matches(k, v.Keys.PageDown):
			v.ScrollBy(max(v.height-1, 1))
		case matches(k, v.Keys.Top):
			v.Top()
		case matches(k, v.Keys.Latest):
			v.JumpToLatest()
		case matches(k, v.Keys.Expand):
			v.toggleLastExpandable()
		}
	}
	return nil
}

func matches(k string, keys []string) bool {
	for _, x := range keys {
		if k == x {
			return true
		}
	}
	return false
}

// JumpToLatest returns to the live edge and clears the unseen count.
func (v *viewport) JumpToLatest() {
	v.follow = true
	v.baseline = length(v.src)
	v.dropPages()
}

// Top moves to the first line of the conversation.
func (v *viewport) Top() {
	if v.doc.Len() == 0 {
		return
	}
	v.leaveEdge()
	v.top()
	v.anchorID, v.anchorOff = v.doc.At(0).ID, 0
	v.settle()
}

func (v *viewport) leaveEdge() {
	if v.follow {
		v.follow = false
		v.baseline = length(v.src)
	}
}

func (v *viewport) expandedFn() func(string) bool {
	return func(id string) bool { return v.expanded[id] }
}

// anchor returns the run at the top of the window and the lines of it
// above the window. Following, it is computed from the bottom.
func (v *viewport) anchor() (block, int, bool) {
	if v.doc.Len() == 0 {
		return block{}, 0, false
	}
	if !v.follow && v.anchorID != "" {
		if i, ok := v.doc.Index(v.anchorID); ok {
			b := runAt(v.doc, i)
			return b, v.anchorOff, true
		}
	}
	return v.bottomAnchor()
}

// bottomAnchor finds the top of a window whose last line is the document's
// last line, walking back over at most a window of lines.
func (v *viewport) bottomAnchor() (block, int, bool) {
	ex := v.expandedFn()
	b := runAt(v.doc, v.doc.Len()-1)
	need := v.height
	for {
		h := v.cache.height(v.doc, b, v.width, ex)
		if h >= need || b.start == 0 {
			return b, max(h-need, 0), true
		}
		need -= h
		b = runAt(v.doc, b.start-1)
	}
}

// ScrollBy moves the window n lines (negative is up). Scrolling to the end
// returns to the live edge.
func (v *viewport) ScrollBy(n int) {
	if n == 0 || v.doc.Len() == 0 {
		return
	}
	b, off, _ := v.anchor()
	if n > 0 && v.follow {
		return
	}
	v.leaveEdge()
	ex := v.expandedFn()
	off += n
	for off < 0 {
		if b.start == 0 {
			id := v.doc.At(0).ID
			if !v.pageBack() {
				off = 0
				break
			}
			i, _ := v.doc.Index(id)
			b = runAt(v.doc, i)
			continue
		}
		b = runAt(v.doc, b.start-1)
		off += v.cache.height(v.doc, b, v.width, ex)
	}
	for {
		h := v.cache.height(v.doc, b, v.width, ex)
		if off >= h && b.end >= v.doc.Len() && v.detached() {
			id := v.doc.At(b.start).ID
			if v.pageAhead() {
				i, _ := v.doc.Index(id)
				b = runAt(v.doc, i)
				continue
			}
		}
		if off < h || b.end >= v.doc.Len() {
			off = min(off, max(h-1, 0))
			break
		}
		off -= h
		b = runAt(v.doc, b.end)
	}
	v.anchorID, v.anchorOff = v.doc.At(b.start).ID, off
	v.settle()
}

// settle returns to the live edge when the window, from its anchor, would
// reach past the last line: there is nothing further to read.
func (v *viewport) settle() {
	if v.follow {
		return
	}
	b, off, ok := v.anchor()
	if !ok {
		return
	}
	ex := v.expandedFn()
	below := v.cache.height(v.doc, b, v.width, ex) - off
	for below < v.height && b.end < v.doc.Len() {
		b = runAt(v.doc, b.end)
		below += v.cache.height(v.doc, b, v.width, ex)
	}
	if below <= v.height && b.end >= v.doc.Len() {
		if v.detached() {
			// The pages shown end before the engine's document: read on
			// towards it instead of jumping there.
			if v.pageAhead() {
				v.settle()
			}
			return
		}
		v.JumpToLatest()
	}
}

// Lines returns the window's lines, exactly height of them. While the
// reader is away from the live edge and entries arrived, the last line
// says how many ("3 new ↓").
func (v *viewport) Lines() []string {
	defer v.cache.endFrame()
	v.settle()
	out := make([]string, 0, v.height)
	b, off, ok := v.anchor()
	if ok {
		if !v.follow {
			v.clampAnchor(&b, &off)
		}
		ex := v.expandedFn()
		mi, marked := -1, false
		if v.mark.id != "" {
			mi, marked = v.doc.Index(v.mark.id)
		}
		for len(out) < v.height {
			p := v.cache.run(v.doc, b, v.width, ex)
			if marked && mi >= b.start && mi < b.end {
				ls := v.markedLines(p)
				for i := off; i < len(ls) && len(out) < v.height; i++ {
					out = append(out, ls[i])
				}
			} else {
				for i := off; i < p.Len() && len(out) < v.height; i++ {
					out = append(out, p.Line(i))
				}
			}
			if b.end >= v.doc.Len() {
				break
			}
			b, off = runAt(v.doc, b.end), 0
		}
	}
	for len(out) < v.height {
		out = append(out, "")
	}
	if v.pg.err != "" {
		s := v.cache.painter.pal
		out[0] = v.cache.painter.theme.finish(s.bad.Render(pageNotice(v.pg.err, v.width)))
	}
	if n := v.Unseen(); n > 0 {
		out[len(out)-1] = v.unseenLine(n)
	}
	return out
}

// pageNotice is the line that says a page read failed: the failure cut
// to fit, so the way to retry always shows.
func pageNotice(err string, width int) string {
	const retry = " · pgup tries again"
	if width < 2*textWidth(retry) {
		return truncate("✗ "+err+retry, width)
	}
	return truncate("✗ "+err, max(width-textWidth(retry), 1)) + retry
}

// clampAnchor keeps a stored offset inside its run after the run got
// shorter (a resize, a fold).
func (v *viewport) clampAnchor(b *block, off *int) {
	h := v.cache.height(v.doc, *b, v.width, v.expandedFn())
	if *off >= h {
		*off = max(h-1, 0)
		v.anchorOff = *off
	}
	v.anchorID = v.doc.At(b.start).ID
}

func (v *viewport) unseenLine(n int) string {
	s := v.cache.painter.pal
	label := " " + strconv.Itoa(n) + " new ↓ "
	pad := max(v.width-ansi.StringWidth(label), 0)
	return strings.Repeat(" ", pad) + v.cache.painter.theme.finish(s.accent.Reverse(true).Render(label))
}

// View renders the window as Bubble Tea view content.
func (v *viewport) View() string { return strings.Join(v.Lines(), "\n") }

// toggleLastExpandable expands (or folds) the last expandable entry in the
// window: the reader's "show me more" for what they are looking at.
func (v *viewport) toggleLastExpandable() {
	b, off, ok := v.anchor()
	if !ok {
		return
	}
	ex := v.expandedFn()
	var last string
	shown := -off
	for shown < v.height {
		for i := b.start; i < b.end; i++ {
			if expandable(v.doc.At(i).Content) {
				last = v.doc.At(i).ID
			}
		}
		shown += v.cache.height(v.doc, b, v.width, ex)
		if b.end >= v.doc.Len() {
			break
		}
		b = runAt(v.doc, b.end)
	}
	if last != "" {
		v.SetExpanded(last, !v.expanded[last])
	}
}

// expandable reports whether expanding an entry shows more of it.
func expandable(c transcript.Content) bool {
	switch c.(type) {
	case transcript.Reasoning, transcript.Tool, transcript.Failure, transcript.TurnReceipt, transcript.Compaction:
		return true
	}
	return false
}
