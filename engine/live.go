package engine

import (
	"fmt"
	"slices"

	"github.com/foliodev/folio/transcript"
)

// maxDropped bounds the rejected drafts kept visible, so a client that
// never dismisses them cannot grow the live state without end.
const maxDropped = 32

// rejectLocked rejects c and keeps it visible as a draft that came back.
func (e *Engine) rejectLocked(c *command, reason string) {
	if c.state != Running && c.state != Queued {
		return
	}
	c.close(Rejected, reason)
	if c.retry {
		return // a Retry has no text to give back; the failure entry offers it again
	}
	e.dropped = append(e.dropped, c)
	if n := len(e.dropped) - maxDropped; n > 0 {
		e.dropped = slices.Delete(e.dropped, 0, n)
	}
}

// Dismiss takes a rejected command out of the live state: the client took
// its draft back (sent it again under a new command ID, edited or dropped
// it). It returns ErrUnknownCommand when no rejected command has that ID.
func (e *Engine) Dismiss(commandID string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	i := slices.IndexFunc(e.dropped, func(c *command) bool { return c.id == commandID })
	if i < 0 {
		return fmt.Errorf("%w: %q is not a rejected draft", ErrUnknownCommand, commandID)
	}
	e.dropped = slices.Delete(e.dropped, i, i+1)
	e.signalLocked()
	return nil
}

// publishLocked writes the engine's queue, pending steers and approvals
// into the store's live state, so every view reads them from the same
// snapshot as the document. It runs at every change (signalLocked); the
// store publishes nothing when the lists are unchanged.
//
// It writes to the store's current generation. Clear and Resume start a
// new one (which begins with empty lists, see transcript.Store.Replace)
// and then publish what is still true: nothing queued, no approvals.
func (e *Engine) publishLocked() {
	queue, steers := e.commandsLocked()
	var approvals []transcript.PendingApproval
	if !e.staleTurnLocked() {
		for _, a := range e.approvals {
			approvals = append(approvals, transcript.PendingApproval{ID: a.ID, Tool: a.Tool, Args: transcript.Preview(a.Args), Child: a.Child})
		}
	}
	var turn *transcript.Turn
	if t := e.turn; t != nil && !e.staleTurnLocked() {
		turn = &transcript.Turn{CommandID: t.cmd.id, Entry: t.userID, Reply: t.replyID}
	}
	_ = e.store.Lease().Do(func(tx *transcript.Tx) error {
		tx.SetTurn(turn)
		tx.SetCommands(queue, steers)
		tx.SetApprovals(transcript.NewApprovals(approvals...))
		return nil
	})
}

// commandsLocked builds Live.Queue and Live.Steers from the engine's state.
// A Retry command is left out: it has no text, and the failure entry is
// what a view shows for it.
func (e *Engine) commandsLocked() (queue, steers transcript.Commands) {
	var q, s []transcript.Command
	view := func(c *command, st transcript.CommandState) transcript.Command {
		return transcript.Command{ID: c.id, Preview: transcript.Preview(c.text), Steer: c.steer, State: st, Reason: c.reason}
	}
	if t := e.turn; t != nil && !e.staleTurnLocked() {
		if !t.cmd.retry {
			q = append(q, view(t.cmd, transcript.CommandRunning))
		}
		for _, c := range t.steers {
			s = append(s, view(c, transcript.CommandRunning))
		}
	}
	for _, c := range e.queue {
		if !c.retry {
			q = append(q, view(c, transcript.CommandQueued))
		}
	}
	for _, c := range e.dropped {
		if c.steer {
			s = append(s, view(c, transcript.CommandRejected))
		} else {
			q = append(q, view(c, transcript.CommandRejected))
		}
	}
	return transcript.NewCommands(q...), transcript.NewCommands(s...)
}

// staleTurnLocked reports whether the running turn belongs to a
// conversation Clear replaced: it is being stopped, and neither its
// command, its steers nor its approvals are part of the new lifetime.
func (e *Engine) staleTurnLocked() bool { return e.turn != nil && e.turn.epoch != e.epoch }
