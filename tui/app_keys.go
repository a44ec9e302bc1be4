package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/transcript"
)

// running reports whether a top-level turn is running, read from the
// store's live state as every view reads it (the server's too), not from
// the engine.
func (a *App) running() bool {
	_, ok := a.store.Snapshot().Live.Turn()
	return ok
}

// key handles a key press: the picker, approvals, the program's own keys,
// the viewport's keys, and everything else goes to the editor.
func (a *App) key(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	a.status = ""
	if a.picker != nil {
		return a.pickerKey(s)
	}
	if a.overlay != nil {
		return a.overlayKey(s)
	}
	if cmd, ok := a.approvalKey(k); ok {
		return cmd
	}
	if a.find != nil {
		if cmd, ok := a.findKeyPress(k); ok {
			return cmd
		}
		return a.view.Update(k)
	}
	if cmd, ok := a.menuKey(s); ok {
		return cmd
	}
	if a.historyKey(s) {
		return nil
	}
	switch s {
	case "ctrl+c":
		if a.input.Value() != "" {
			a.input.Reset()
			a.layout()
			return nil
		}
		return a.quit()
	case "ctrl+d":
		if a.input.Value() == "" {
			return a.quit()
		}
	case "esc":
		if a.eng.Stop() {
			a.status = stoppingStatus
		}
		return nil
	case "enter":
		return a.submit(false)
	case "ctrl+s", "tab":
		return a.submit(true)
	case "ctrl+r":
		if _, ok := a.rejected(); !ok {
			return a.retry()
		}
		return a.takeBackDraft(true)
	case "ctrl+x":
		return a.takeBackDraft(false)
	case "ctrl+y":
		return a.copyAnswer()
	case searchKey:
		a.startSearch()
		return nil
	case findKey:
		a.openFind("")
		return nil
	}
	if a.view != nil {
		empty := a.input.Value() == ""
		if matches(s, a.view.Keys.LineUp) || matches(s, a.view.Keys.LineDown) || matches(s, a.view.Keys.PageUp) ||
			matches(s, a.view.Keys.PageDown) || matches(s, a.view.Keys.Top) || matches(s, a.view.Keys.Latest) ||
			matches(s, a.view.Keys.Expand) {
			return a.view.Update(k)
		}
		if empty {
			// With nothing typed, the plain navigation keys scroll.
			switch s {
			case "up":
				a.view.ScrollBy(-1)
				return nil
			case "down":
				a.view.ScrollBy(1)
				return nil
			case "home":
				a.view.Top()
				return nil
			case "end":
				a.view.JumpToLatest()
				return nil
			}
		}
	}
	var cmd tea.Cmd
	a.input, cmd = a.input.Update(k)
	a.layout()
	return cmd
}

func (a *App) quit() tea.Cmd {
	a.quitting = true
	a.Close()
	return tea.Quit
}

// submit sends what is typed: a slash command, a message (queued behind a
// running turn), or with steer an instruction to the running turn.
func (a *App) submit(steer bool) tea.Cmd {
	text := strings.TrimSpace(a.input.Value())
	if text == "" {
		return nil
	}
	if !steer && strings.HasPrefix(text, "/") {
		if cmd, ok := a.slash(text); ok {
			a.input.Reset()
			a.layout()
			return cmd
		}
	}
	steer = steer && a.running()
	a.remember(text)
	id := a.outbox.Add(text, steer)
	a.input.Reset()
	it, err := a.outbox.Send(context.Background(), id)
	if a.view != nil {
		// The person's own message is what they want to see next.
		a.view.JumpToLatest()
	}
	if err != nil && steer && it.Delivery == engine.Draft {
		// The turn ended (or is stopping) before the instruction got
		// there: it stays a draft the person can send with ctrl+r.
		a.status = "not steered: " + it.Reason
	} else if err != nil && it.Delivery == engine.Uncertain {
		a.status = "delivery uncertain (it will not be resent): " + err.Error()
	} else if err != nil && it.Delivery != engine.Accepted {
		a.status = "not sent: " + err.Error()
	}
	return nil
}

// rejected returns the oldest draft that came back (refused by a stop, or
// never received), as the snapshot lists it: queued messages first, then
// steers.
func (a *App) rejected() (transcript.Command, bool) {
	for _, l := range []transcript.Commands{a.snap.Live.Queue, a.snap.Live.Steers} {
		for _, c := range l.All() {
			if c.State == transcript.CommandRejected {
				return c, true
			}
		}
	}
	return transcript.Command{}, false
}

// takeBackDraft takes the oldest draft that came back: with send, it goes
// out again as an ordinary message under a new command ID (the explicit
// Send action such a draft offers); without, it is dropped. Either way the
// engine is told to stop listing it (Dismiss).
func (a *App) takeBackDraft(send bool) tea.Cmd {
	c, ok := a.rejected()
	if !ok {
		return nil
	}
	// A message a stop sent back may still be accepted as far as the
	// outbox knows; asking first makes it a draft the outbox can remove,
	// so it does not come back later as a rejection of its own.
	a.outbox.Confirm(context.Background(), a.eng.StatusFunc())
	text := ""
	for _, it := range a.outbox.Items() {
		if it.CommandID == c.ID {
			text = it.Text // the whole text; the snapshot has a preview
		}
	}
	if text == "" {
		// Not one of ours: only the engine lists it, so all that can be
		// done is to dismiss it.
		send = false
	}
	_ = a.outbox.Remove(c.ID)
	// The engine lists only drafts it sent back itself; one the outbox
	// got back from the transport is not the engine's to dismiss.
	if err := a.eng.Dismiss(c.ID); err != nil && !errors.Is(err, engine.ErrUnknownCommand) {
		a.status = err.Error()
	}
	if !send {
		a.status = "dropped the draft"
		return nil
	}
	id := a.outbox.Add(text, false)
	if _, err := a.outbox.Send(context.Background(), id); err != nil {
		a.status = "not sent: " + err.Error()
	}
	if a.view != nil {
		a.view.JumpToLatest()
	}
	return nil
}

// retryable reports whether the conversation ends in a failure a retry
// may fix, with no turn running: the moment to offer one.
func (a *App) retryable() bool {
	d := a.snap.Document
	if d.Len() == 0 || a.running() {
		return false
	}
	f, ok := d.At(d.Len() - 1).Content.(transcript.Failure)
	return ok && f.Retryable
}

// retry runs the failed last turn again through the engine's Retry, the
// action a failure entry offers (the web's retry button does the same).
func (a *App) retry() tea.Cmd {
	_, err := a.eng.Retry(fmt.Sprintf("tui-retry-%x", cmdSeq.Add(1)))
	switch {
	case errors.Is(err, engine.ErrNothingToRetry):
		a.status = "nothing to retry: the last turn did not fail"
	case err != nil:
		a.status = "not retried: " + err.Error()
	default:
		a.status = "retrying the failed turn"
		if a.view != nil {
			a.view.JumpToLatest()
		}
	}
	return nil
}

// slash runs a slash command; ok is false for text that only looks like
// one, which is then sent as a message.
func (a *App) slash(text string) (tea.Cmd, bool) {
	switch strings.Fields(text)[0] {
	case "/resume":
		a.openPicker()
		return nil, true
	case "/search":
		a.searchCommand(text)
		return nil, true
	case "/find":
		a.openFind(strings.TrimSpace(strings.TrimPrefix(text, "/find")))
		return nil, true
	case "/quit", "/exit":
		return a.quit(), true
	case "/help":
		a.openHelp()
		return nil, true
	case "/retry":
		return a.retry(), true
	case "/model":
		a.openModels()
		return nil, true
	case "/new", "/clear":
		return a.newConversation(text == "/clear"), true
	case "/export":
		if a.o.Export == nil {
			a.status = "exporting is not available here"
			return nil, true
		}
		format := "text"
		if f := strings.Fields(text); len(f) > 1 {
			format = f[1]
		}
		if format != "text" && format != "html" {
			a.status = "/export writes text or html, not " + format
			return nil, true
		}
		path, err := a.o.Export(format)
		if err != nil {
			a.status = "not exported: " + err.Error()
		} else {
			a.status = "exported to " + path
		}
		return nil, true
	}
	return nil, false
}

// newConversation starts an empty conversation through the host; clear
// also empties the screen.
func (a *App) newConversation(clear bool) tea.Cmd {
	if a.o.New == nil {
		a.status = "starting a new conversation is not available here"
		return nil
	}
	if a.running() {
		a.status = "a turn is running: press esc to stop it first"
		return nil
	}
	if err := a.o.New(); err != nil {
		a.status = "no new conversation: " + err.Error()
		return nil
	}
	a.setSnapshot(a.store.Snapshot())
	a.status = "new conversation"
	if a.classic != nil {
		a.printQ = nil
		if clear && a.inline != nil {
			a.inline.Clear()
		}
		return a.syncClassic()
	}
	if clear {
		return tea.ClearScreen
	}
	return nil
}

// copyAnswer copies the latest answer's markdown source to the clipboard
// with OSC 52. The text carries no wrapping of ours.
func (a *App) copyAnswer() tea.Cmd {
	d := a.snap.Document
	for i := d.Len() - 1; i >= 0; i-- {
		ag, ok := d.At(i).Content.(transcript.Agent)
		if !ok || ag.Markdown == "" {
			continue
		}
		// Both views copy with OSC 52. The classic view's program writes
		// nowhere (the view draws itself), so the sequence goes straight
		// to the terminal, between frames; it moves no cursor.
		a.status = fmt.Sprintf("copied the answer's markdown (%d bytes) to the clipboard", len(ag.Markdown))
		if a.inline != nil {
			_, _ = io.WriteString(a.o.Output, ansi.SetSystemClipboard(ag.Markdown))
			return nil
		}
		return tea.SetClipboard(ag.Markdown)
	}
	a.status = "no answer to copy yet"
	return nil
}
