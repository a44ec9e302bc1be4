package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/foliodev/folio/transcript"
)

// setSnapshot shows s, a snapshot from the store's subscription. The views
// get the document as a reader should see it now (visibleDocument); the
// approval prompt takes the editor's place while a call waits.
func (a *App) setSnapshot(s transcript.Snapshot) {
	a.snap = s
	if a.status == stoppingStatus && !a.running() {
		a.status = "" // the stop is done; the transcript says so
	}
	a.shown = visibleDocument(s)
	if a.view != nil {
		a.view.SetDocument(a.shown, s.Generation)
	}
	if a.approvalFocused() {
		a.input.Blur()
	} else if !a.input.Focused() && a.picker == nil && a.overlay == nil {
		a.input.Focus()
	}
	a.layout()
}

// stoppingStatus is the status line while a stop takes effect.
const stoppingStatus = "stopping the turn"

// visibleDocument returns s's document with every open entry the pacer has
// not fully revealed cut to its visible prefix (Live.Visible). The source
// keeps all accepted text; only what the views paint is cut, and the cut
// grows until settlement shows the entry whole under the same ID. Only the
// open tail is looked at, so the cost does not grow with the conversation.
func visibleDocument(s transcript.Snapshot) transcript.Document {
	d := s.Document
	for i := d.Settled(); i < d.Len(); i++ {
		if !d.IsOpen(i) {
			continue
		}
		e := d.At(i)
		n, paced := s.Live.Revealed(e.ID)
		if !paced || n >= len(streamedText(e.Content)) {
			continue
		}
		if cut, err := d.Update(e.ID, s.Live.Visible(e)); err == nil {
			d = cut
		}
	}
	return d
}

// streamedText is the text of a kind the pacer reveals.
func streamedText(c transcript.Content) string {
	switch c := c.(type) {
	case transcript.Agent:
		return c.Markdown
	case transcript.Reasoning:
		return c.Text
	}
	return ""
}

// tick keeps a retry countdown moving: a redraw when the shown number of
// seconds changes, while a retry is pending.
func (a *App) tick() tea.Cmd {
	r := a.snap.Live.Retry
	if a.ticking || !r.Pending() {
		return nil
	}
	a.ticking = true
	in := r.In(a.o.Now())
	next := in % time.Second // the countdown shows whole seconds, rounded up
	if next == 0 {
		next = time.Second
	}
	if in == 0 {
		// The attempt is due; the engine's next snapshot ends the
		// countdown. Check again in a second in case it does not.
		next = time.Second
	}
	return tea.Tick(next, func(time.Time) tea.Msg { return tickMsg{} })
}

func (a *App) setDark(dark bool) {
	if a.theme.Dark == dark {
		return
	}
	a.theme.Dark = dark
	a.pal = a.theme.palette()
	if a.view != nil {
		a.view.Update(tea.BackgroundColorMsg{Color: bg(dark)})
	}
	if a.classic != nil {
		a.classic.cache.SetPainter(a.classic.cache.painter.WithTheme(a.theme))
	}
	a.input.SetStyles(editorStyles(a.theme))
}
