package tui

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// SearchHit is one entry a search over every conversation found, as the
// /search overlay lists it.
type SearchHit struct {
	Conversation string
	Title        string
	Entry        string // empty for a hit on the title
	Role         string
	At           time.Time
	// Snippet is the text around the hit with the matched words between
	// Mark[0] and Mark[1] of SearchMarks.
	Snippet string
	// Words are the matched words as the entry writes them, which the
	// view marks when it opens the conversation at the hit.
	Words []string
}

// SearchMarks are what a Search func puts around the matched words of a
// snippet; the overlay shows them as they are.
var SearchMarks = [2]string{"[", "]"}

// searchKey is the key that starts a search: it puts "/search " in the
// editor, where the query is typed and sent with enter.
const searchKey = "ctrl+k"

// startSearch fills the editor with the /search command.
func (a *App) startSearch() {
	a.input.SetValue("/search ")
	a.input.CursorEnd()
	a.layout()
}

// searchCommand runs "/search QUERY" and lists the hits in an overlay;
// choosing one resumes its conversation with the window at the hit.
func (a *App) searchCommand(text string) {
	q := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), "/search"))
	switch {
	case a.o.Search == nil || a.o.Resume == nil:
		a.status = "search is not available here"
		return
	case q == "":
		a.status = "type words after /search (" + searchKey + " starts one)"
		return
	}
	hits, err := a.o.Search(q)
	o := &overlay{title: fmt.Sprintf("Search: %s · ↑/↓ choose · enter open · esc close", q)}
	if err != nil {
		o.err = err.Error()
	} else if len(hits) == 0 {
		o.lines = []string{"nothing found"}
	}
	for _, h := range hits {
		when := ""
		if !h.At.IsZero() {
			when = h.At.In(a.o.Location).Format("2006-01-02") + " "
		}
		title := h.Title
		if title == "" {
			title = h.Conversation
		}
		o.items = append(o.items, fmt.Sprintf("%s%s · %s · %s", when, oneLine(sanitize(title)), h.Role, oneLine(sanitize(h.Snippet))))
	}
	o.pick = func(i int) error { return a.openHit(hits[i]) }
	a.openOverlay(o)
}

// openHit resumes the hit's conversation (unless it is the one shown) and
// puts the hit's entry at the top of the fullscreen window.
func (a *App) openHit(h SearchHit) error {
	if a.running() {
		return errors.New("a turn is running: press esc to stop it first")
	}
	if err := a.o.Resume(h.Conversation); err != nil {
		return err
	}
	a.setSnapshot(a.store.Snapshot())
	a.status = "search hit: " + oneLine(sanitize(h.Snippet))
	if a.view != nil && h.Entry != "" && !a.view.GoTo(h.Entry, -1, h.Words) {
		a.status = "the hit is no longer in this conversation's branch"
	}
	return nil
}

// ScrollTo puts the run holding entry id at the top of the window, leaving
// the live edge. An entry before the engine's document is read with its
// page, when the Pager can find it (Finder). It reports false when the
// conversation has no such entry.
func (v *viewport) ScrollTo(id string) bool {
	i, ok := v.doc.Index(id)
	if f, finds := v.Pager.(Finder); !ok && finds && v.src.Elided() > 0 {
		if at, err := f.Find(id); err == nil && at >= 0 && at < v.src.Elided() && v.pageAt(at) {
			i, ok = v.doc.Index(id)
		}
	}
	if !ok {
		return false
	}
	v.leaveEdge()
	b := runAt(v.doc, i)
	v.anchorID, v.anchorOff = v.doc.At(b.start).ID, 0
	v.settle()
	return true
}
