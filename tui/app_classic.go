package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/foliodev/folio/transcript"
)

// syncClassic brings the classic projection up to the snapshot: new lines
// join the print queue, the live region is redrawn.
func (a *App) syncClassic() tea.Cmd {
	if a.classic == nil {
		return nil
	}
	f := a.classic.Sync(a.shown, a.snap.Generation, a.width, max(a.height-a.chromeHeight()-1, 3))
	a.live = f.Live
	a.printQ = append(a.printQ, f.Print...)
	return nil
}

// setTail tells the classic projection how much of a resumed conversation
// to print, at the terminal's current height.
func (a *App) setTail() {
	t := Tail{Turns: a.o.Tail, Rows: a.height}
	if a.o.Earlier != nil {
		t.Hint = func(transcript.Document) string { return a.o.Earlier() }
	}
	a.classic.SetTail(t)
}

// resizeSettle is how long the classic view waits after a size change
// before it draws at the new size.
const resizeSettle = 80 * time.Millisecond

// resizeMsg applies the classic view's pending size if no newer one came.
type resizeMsg uint64

// applySize takes the pending size of the classic view: the live region is
// drawn again at the new width, and what is in scrollback stays as it was
// printed.
func (a *App) applySize(seq uint64) tea.Cmd {
	if seq != a.resizeSeq || a.pendingSize == nil {
		return nil
	}
	m := *a.pendingSize
	a.pendingSize = nil
	a.inline.Resize(max(m.Width, 10))
	// Draw one column short of the edge. A line that fills its row
	// leaves the cursor in the pending-wrap state, which rewrapping
	// terminals resolve differently; the writer's row count could then
	// be one short.
	a.width, a.height = max(m.Width-1, 10), max(m.Height, 4)
	a.sized = true
	a.setTail()
	a.layout()
	return a.syncClassic()
}

// drawClassic writes the classic view through the Inline writer: the lines
// that became final go into scrollback, in order and once, and the live
// region (the transcript's unsettled tail, then the chrome) is redrawn from
// its first changed line. Writing here, in the update loop, keeps printed
// lines and redraws in one ordered stream of bytes.
func (a *App) drawClassic() {
	if a.inline == nil || !a.sized || a.pendingSize != nil {
		return
	}
	f := Frame{Print: a.printQ}
	a.printQ = nil
	if a.quitting {
		// Leaving: what was live becomes final, and the chrome goes.
		f.Print = append(f.Print, a.live...)
		a.live = nil
	} else {
		f.Live = append(append(f.Live, a.liveOrPanel()...), a.chromeLines()...)
	}
	_, _ = a.inline.Write(f)
}

// liveOrPanel is what the classic view draws above its chrome: the
// picker or an overlay while one is open (in the live region, so it is
// seen and leaves no trace in scrollback), the transcript's live tail
// otherwise.
func (a *App) liveOrPanel() []string {
	room := min(12, max(a.height-a.chromeHeight(), 1))
	switch {
	case a.picker != nil:
		return a.picker.lines(a, a.width, room)
	case a.overlay != nil:
		return a.overlayLines(a.width, max(a.height-a.chromeHeight(), 1))
	}
	return a.live
}
