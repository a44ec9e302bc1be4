package engine

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// State is where a command is, in the one vocabulary of command states
// that package transcript defines (transcript.CommandState).
type State = transcript.CommandState

// Command states, as Send, Steer and Commands report them.
const (
	Queued   = transcript.CommandQueued   // accepted, waiting for the turn before it
	Running  = transcript.CommandRunning  // its turn is running (or, for a steer, it waits for the next boundary)
	Applied  = transcript.CommandApplied  // a steer the model received
	Done     = transcript.CommandDone     // its turn finished, or (Once) it took effect
	Failed   = transcript.CommandFailed   // its turn failed; see the failure entry
	Stopped  = transcript.CommandStopped  // its turn was stopped
	Rejected = transcript.CommandRejected // not accepted; Reason says why. The text is the caller's draft again.
	Removed  = transcript.CommandRemoved  // taken out of the queue before it started
)

// Receipt is the engine's answer about one command.
type Receipt struct {
	CommandID string
	State     State
	// Kind is what the command is: the kind the caller gave it (AsKind),
	// else "send", "steer" or "retry".
	Kind string
	// EntryID is the user entry of the command's turn, once written (for
	// a retry, the user entry of the turn it retries).
	EntryID string
	// Steer is set for steering commands.
	Steer bool
	// Text is the command's current text (after edits).
	Text string
	// Position is the place in the queue from 1 while Queued.
	Position int
	// Duplicate is set when the ID was already known: nothing new happened.
	Duplicate bool
	// Reason explains a Rejected or Failed state.
	Reason string
}

// CommandOption describes a command beyond its text, for callers that
// speak for clients (the server).
type CommandOption func(*commandTag)

type commandTag struct{ kind, digest string }

// AsKind names the command's kind in its receipts ("edit", "stop", ...).
func AsKind(kind string) CommandOption { return func(t *commandTag) { t.kind = kind } }

// WithDigest gives a digest of the command's whole body: the same command
// ID sent again with another digest is refused with ErrConflict instead
// of answered as a duplicate.
func WithDigest(d string) CommandOption { return func(t *commandTag) { t.digest = d } }

func tagOf(opts []CommandOption) commandTag {
	var t commandTag
	for _, o := range opts {
		o(&t)
	}
	return t
}

type command struct {
	id          string
	kind        string // "" for send, steer and retry (see Receipt.Kind)
	digest      string // the caller's digest of the body, "" when not given
	entryID     string // the user entry of its turn, once known
	seq         uint64 // the engine's receipt counter when its receipt last changed
	text        string
	attachments []Attachment
	steer       bool
	retry       bool // a Retry continuation: no user entry
	state       State
	reason      string
	done        chan struct{}
	log         CommandLog // where its outcome is recorded, when durable
	ctr         *uint64    // the engine's receipt counter (guarded by its lock)
}

// close settles c in state s. The engine's lock is held, so it advances the
// receipt counter of the engine that owns c (ctr).
func (c *command) close(s State, reason string) {
	if c.state.Final() {
		return
	}
	c.state, c.reason = s, reason
	c.changed()
	close(c.done)
	if c.log != nil {
		// The outcome is best kept: a failed write leaves the accepted
		// record, which a restart reads as interrupted, not as a new ID.
		_ = c.log.RecordCommand(c.record())
	}
}

// changed marks c's receipt as changed, for Receipts.
func (c *command) changed() {
	if c.ctr != nil {
		*c.ctr++
		c.seq = *c.ctr
	}
}

// record is c's current state as its sidecar line.
func (c *command) record() history.CommandRecord {
	return history.CommandRecord{ID: c.id, State: string(c.state), Reason: c.reason, Steer: c.steer,
		Kind: c.kindOf(), Digest: c.digest, Entry: c.entryID}
}

// kindOf is c's kind as receipts name it.
func (c *command) kindOf() string {
	switch {
	case c.kind != "":
		return c.kind
	case c.steer:
		return "steer"
	case c.retry:
		return "retry"
	}
	return "send"
}

// CommandLog keeps command receipts across restarts; *history.Log is one
// (a sidecar beside the log, under its lock).
type CommandLog interface {
	RecordCommand(history.CommandRecord) error
	LoadCommands() ([]history.CommandRecord, error)
}

// WithCommandLog makes commands durable: each accepted command is recorded
// before Send, Steer or Retry returns, and its outcome when it settles. New
// reads the commands recorded before, so a command ID sent again after a
// restart answers with its first receipt (Duplicate) and never starts a
// second turn. A command that had not settled when the process died is
// reported Failed, "interrupted".
func WithCommandLog(l CommandLog) Option { return func(e *Engine) { e.cmdlog = l } }

// ReasonInterrupted is the Reason of a command that was accepted but had not
// settled when the process that ran it stopped.
const ReasonInterrupted = "interrupted: folio stopped before this command finished"

// ReceiptOf is the receipt a sidecar record gives after a restart: a
// command that had not settled when the process that ran it stopped is
// Failed, ReasonInterrupted.
func ReceiptOf(r history.CommandRecord) Receipt {
	c := commandOf(r)
	return Receipt{CommandID: c.id, State: c.state, Kind: c.kindOf(), EntryID: c.entryID, Steer: c.steer, Reason: c.reason}
}

func commandOf(r history.CommandRecord) *command {
	c := &command{id: r.ID, kind: r.Kind, digest: r.Digest, entryID: r.Entry, steer: r.Steer,
		state: State(r.State), reason: r.Reason, done: make(chan struct{})}
	if r.Kind == "retry" {
		c.kind, c.retry = "", true
	}
	if !c.state.Final() {
		c.state, c.reason = Failed, ReasonInterrupted
	}
	close(c.done)
	return c
}

// loadCommands fills e.commands with the command log's settled receipts.
func (e *Engine) loadCommands() {
	recs, err := e.cmdlog.LoadCommands()
	if err != nil && len(recs) == 0 {
		return
	}
	// The newest keepCommands answer from memory; the older ones through
	// the filter and the log (recallLocked).
	for i, r := range recs {
		if i < len(recs)-keepCommands {
			e.forgotten.add(r.ID)
			continue
		}
		e.commands[r.ID] = commandOf(r)
	}
}

// acceptLocked records a new command as accepted before the caller is told
// so; it fails when the record cannot be written. tag is what the caller
// said of the command beyond its text.
func (e *Engine) acceptLocked(c *command, tag commandTag) error {
	c.kind, c.digest, c.ctr = tag.kind, tag.digest, &e.receipts
	if e.cmdlog == nil {
		return nil
	}
	if err := e.cmdlog.RecordCommand(c.record()); err != nil {
		return fmt.Errorf("record the command: %w", err)
	}
	c.log = e.cmdlog
	return nil
}

// Status returns the receipt of a command, for clients that poll.
func (e *Engine) Status(commandID string) (Receipt, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.commands[commandID]
	if !ok && e.cmdlog != nil {
		c, ok, _ = e.recallLocked(commandID)
	}
	if !ok {
		return Receipt{}, fmt.Errorf("%w: %q", ErrUnknownCommand, commandID)
	}
	return e.receiptLocked(c), nil
}

// Receipts returns the receipts of the commands sent through Send, Steer,
// Retry or EditAndResend whose receipt changed after mark (0: since the
// engine started), in the order they changed, and the mark to pass next
// time. A command that changed twice is listed once, as it is now.
func (e *Engine) Receipts(mark uint64) ([]Receipt, uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var changed []*command
	for _, c := range e.order {
		if c.seq > mark {
			changed = append(changed, c)
		}
	}
	slices.SortFunc(changed, func(a, b *command) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]Receipt, len(changed))
	for i, c := range changed {
		out[i] = e.receiptLocked(c)
	}
	return out, e.receipts
}

// Commands lists every command in acceptance order with its state: the
// queue (State Queued, in dispatch order), the running turn and its steers,
// and finished ones.
func (e *Engine) Commands() []Receipt {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Receipt, len(e.order))
	for i, c := range e.order {
		out[i] = e.receiptLocked(c)
	}
	return out
}

// Wait blocks until the command reaches a final state and returns its
// receipt.
func (e *Engine) Wait(ctx context.Context, commandID string) (Receipt, error) {
	e.mu.Lock()
	c, ok := e.commands[commandID]
	e.mu.Unlock()
	if !ok {
		return Receipt{}, fmt.Errorf("%w: %q", ErrUnknownCommand, commandID)
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		return Receipt{}, ctx.Err()
	}
	return e.Status(commandID)
}

func (e *Engine) receiptLocked(c *command) Receipt {
	r := Receipt{CommandID: c.id, State: c.state, Kind: c.kindOf(), EntryID: c.entryID, Steer: c.steer, Text: c.text, Reason: c.reason}
	if c.state == Queued {
		r.Position = slices.Index(e.queue, c) + 1
	}
	return r
}

// keepCommands is how many finished commands the engine remembers, each of
// Send's, Steer's, Retry's and EditAndResend's and of Once's: their
// receipts answer Status, Wait, Commands and a repeated delivery. A long
// session forgets the older ones (forgetLocked), so what the engine holds
// does not grow with the conversation. A forgotten command's ID goes into
// a fixed-size filter (forgottenFilter): delivered again, it answers with
// the receipt the command log recorded, or without a command log is
// refused (ErrAlreadyDone); it never runs twice.
const keepCommands = 256

// forgetLocked drops the oldest finished commands once twice keepCommands
// are remembered, keeping the newest keepCommands of each list; commands
// still queued or running always stay. e.mu is held.
func (e *Engine) forgetLocked() {
	e.order = e.forget(e.order)
	e.onceOrder = e.forget(e.onceOrder)
}

func (e *Engine) forget(list []*command) []*command {
	if len(list) < 2*keepCommands {
		return list
	}
	cut := len(list) - keepCommands
	kept := make([]*command, 0, 2*keepCommands)
	for i, c := range list {
		if i < cut && c.state.Final() {
			if e.commands[c.id] == c {
				delete(e.commands, c.id)
				e.forgotten.add(c.id)
			}
			continue
		}
		kept = append(kept, c)
	}
	return kept
}
