package engine

import (
	"context"

	"github.com/foliodev/folio/provider"
)

// ModelChoice is a model a conversation can switch to: the client that
// answers and the model name sent with its requests.
type ModelChoice struct {
	Provider provider.Provider
	Model    string
	// ContextWindow is the window for compaction; 0 takes the built-in
	// table's value for Model.
	ContextWindow int
}

// SendWithModel is Send, and the turn it starts (and every later one) asks
// m instead of the model before. The switch happens when that turn is
// dispatched, not now: a turn already running, or sends queued before this
// one, keep the model they were sent with. The provider and model are read
// by the loop goroutine without a lock, which is safe only because they
// change on that goroutine, between turns.
func (e *Engine) SendWithModel(ctx context.Context, commandID, text string, attachments []Attachment, m ModelChoice, opts ...CommandOption) (Receipt, error) {
	if m.Provider == nil || m.Model == "" {
		return e.Send(ctx, commandID, text, attachments, opts...)
	}
	e.mu.Lock()
	_, seen := e.commands[commandID]
	if !seen && e.forgotten.maybe(commandID) {
		seen = true // perhaps a forgotten command's: Send answers it
	}
	if !seen && !e.closed {
		if e.modelFor == nil {
			e.modelFor = map[string]ModelChoice{}
		}
		e.modelFor[commandID] = m
	}
	e.mu.Unlock()
	r, err := e.Send(ctx, commandID, text, attachments, opts...)
	if err != nil && !seen {
		e.mu.Lock()
		delete(e.modelFor, commandID)
		e.mu.Unlock()
	}
	return r, err
}

// SetModel switches an idle engine to m at once, for everything that
// starts a turn later (sends, retries, edits). A host uses it to restore a
// conversation's chosen model when it reopens the engine. It returns
// ErrBusy while a turn runs or commands wait (use SendWithModel then), and
// ErrClosed after Close.
func (e *Engine) SetModel(m ModelChoice) error {
	if m.Provider == nil || m.Model == "" {
		return ErrEmpty
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	if e.turn != nil || len(e.queue) > 0 {
		return ErrBusy
	}
	// The loop reads the provider and model only while a turn runs, after
	// taking e.mu to dispatch it, so writing them here under e.mu is safe.
	e.useModelLocked(m)
	_ = e.store.Lease().SetModel(m.Model)
	return nil
}

// Model is the model name the next turn asks (after any switch already
// dispatched).
func (e *Engine) Model() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.modelName
}

// switchModelLocked applies c's model switch, if it has one; the loop calls
// it with e.mu held as it dispatches c, before the turn reads the model.
func (e *Engine) switchModelLocked(c *command) {
	if m, ok := e.modelFor[c.id]; ok {
		delete(e.modelFor, c.id)
		e.useModelLocked(m)
	}
}

// useModelLocked makes m the provider and model of turns from now on.
func (e *Engine) useModelLocked(m ModelChoice) {
	e.prov, e.model, e.modelName = m.Provider, m.Model, m.Model
	switch {
	case m.ContextWindow > 0:
		e.window = m.ContextWindow
	default:
		e.window = provider.ContextWindow(m.Model)
	}
}
