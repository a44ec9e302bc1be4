package engine

import (
	"fmt"
	"slices"
)

// Stop stops the running turn: its request and tools are cancelled, the
// partial reply and its trace stay, and a stopped entry records what was
// and was not done. Steers that had not reached the model, and messages
// queued behind the turn, are rejected and stay the caller's drafts: a stop
// never lets another turn start by itself. Stop reports whether a turn was
// running.
func (e *Engine) Stop() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stopLocked()
}

// stopLocked stops the running turn; e.mu is held.
func (e *Engine) stopLocked() bool {
	t := e.turn
	if t == nil || t.stopping {
		return false
	}
	t.stopping = true
	for _, c := range t.steers {
		e.rejectLocked(c, "the turn was stopped before the instruction was used")
	}
	t.steers = nil
	for _, c := range e.queue {
		e.rejectLocked(c, "the turn was stopped before the message was sent")
	}
	e.queue = nil
	t.cancel(errStop)
	e.signalLocked()
	return true
}

// StopTurn stops the running turn only if it is the one the caller saw:
// id is its user entry or command ID, and reply, when not empty, its first
// answer entry. A stop that arrives after its turn ended must not stop the
// next one. It returns ErrNoTurn or ErrStopConflict otherwise.
func (e *Engine) StopTurn(id, reply string) error {
	e.mu.Lock()
	t := e.turn
	switch {
	case t == nil:
		e.mu.Unlock()
		return ErrNoTurn
	case id != t.userID && id != t.cmd.id, reply != "" && reply != t.replyID:
		e.mu.Unlock()
		return ErrStopConflict
	}
	// Check and stop in one hold of the lock: released in between, the
	// named turn could end and the next queued one be stopped instead.
	e.stopLocked()
	e.mu.Unlock()
	return nil
}

// Approve decides a pending approval.
func (e *Engine) Approve(id string, d Decision) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, a := range e.approvals {
		if a.ID == id {
			e.approvals = slices.Delete(e.approvals, i, i+1)
			if d == AllowSession {
				e.allowed[a.Tool] = true
			}
			a.decide <- d
			e.signalLocked()
			return nil
		}
	}
	return fmt.Errorf("%w: %q", ErrNoApproval, id)
}

// Allow allows a tool for the rest of the session.
func (e *Engine) Allow(tool string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.allowed[tool] = true
}

// Allowed lists, sorted, the tools allowed for the rest of the session
// (by AllowSession, Allow or the engine's options).
func (e *Engine) Allowed() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, 0, len(e.allowed))
	for t, ok := range e.allowed {
		if ok {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}
