package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/foliodev/folio/transcript"
)

// Delivery is where a client's command is on its way to the engine. The
// two in flight, Pending and Uncertain, are the command states of those
// names (transcript.CommandState, as Live.Queue shows them); a draft is
// only the person's text, and an accepted command is in the state its
// Receipt says.
type Delivery string

// Deliveries.
const (
	// Draft: not sent, or sent and definitively refused. The person may
	// edit, remove or send it; nothing sends it by itself.
	Draft Delivery = "draft"
	// Pending: sent, no answer yet. It cannot be resent, edited or removed.
	Pending = Delivery(transcript.CommandPending)
	// Uncertain: the transport failed, so the engine may or may not have
	// it. It is never resent as another turn; Confirm asks the engine about
	// the same command ID.
	Uncertain = Delivery(transcript.CommandUncertain)
	// Accepted: the engine has it; Receipt says where it is.
	Accepted Delivery = "accepted"
)

// Rejection is a definitive refusal from the engine (or the server in
// front of it): the command was not taken, so it is safe to keep as a
// draft. Every other transport error leaves delivery uncertain.
type Rejection struct{ Reason string }

func (r *Rejection) Error() string { return "rejected: " + r.Reason }

// definitive reports whether err says the engine refused the command, as
// opposed to not knowing whether it arrived.
func definitive(err error) (string, bool) {
	var r *Rejection
	switch {
	case errors.As(err, &r):
		return r.Reason, true
	case errors.Is(err, ErrCancelled), errors.Is(err, ErrNoTurn), errors.Is(err, ErrEmpty), errors.Is(err, ErrClosed):
		return err.Error(), true
	}
	return "", false
}

// OutboxItem is one command as the client sees it.
type OutboxItem struct {
	CommandID string
	Text      string
	Steer     bool
	Delivery  Delivery
	// Reason says why a draft came back (a refusal) or why delivery is
	// uncertain.
	Reason  string
	Receipt Receipt
}

// Transport delivers a command: Engine.Send or Engine.Steer in process, or
// a server request. It returns the engine's receipt, a *Rejection (or an
// engine error meaning the same), or a transport error.
type Transport func(ctx context.Context, commandID, text string, steer bool) (Receipt, error)

// StatusFunc asks the engine about a command ID (Engine.Status, or a
// server request). ErrUnknownCommand means the engine never received it.
type StatusFunc func(ctx context.Context, commandID string) (Receipt, error)

// Outbox is the client side of delivery, shared by the terminal UI and the
// web app's server-side mirror: drafts, their command IDs, and the rules
// that keep a retried or uncertain delivery from becoming a second turn.
// It is safe for concurrent use.
type Outbox struct {
	send   Transport
	newID  func() string
	mirror *transcript.Store // where deliveries are published, if set

	mu    sync.Mutex
	items []*OutboxItem
}

// NewOutbox returns an outbox delivering through send and naming commands
// with newID.
func NewOutbox(send Transport, newID func() string) *Outbox {
	return &Outbox{send: send, newID: newID}
}

// Mirror publishes the outbox's deliveries into store's live state
// (transcript.Tx.SetDeliveries) at every change from now on: pending and
// uncertain commands, and drafts that came back with a reason, so a view
// reading snapshots shows them next to the engine's queue. Drafts never
// sent are the input's business and are not published.
func (o *Outbox) Mirror(store *transcript.Store) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.mirror = store
	o.publishLocked()
}

func (o *Outbox) publishLocked() {
	if o.mirror == nil {
		return
	}
	var cs []transcript.Command
	for _, it := range o.items {
		st := transcript.CommandState(it.Delivery)
		switch {
		case it.Delivery == Pending, it.Delivery == Uncertain:
		case it.Delivery == Draft && it.Reason != "":
			st = transcript.CommandRejected // a draft that came back
		default:
			continue
		}
		cs = append(cs, transcript.Command{ID: it.CommandID, Preview: transcript.Preview(it.Text), Steer: it.Steer, State: st, Reason: it.Reason})
	}
	_ = o.mirror.Lease().SetDeliveries(transcript.NewCommands(cs...))
}

// Add makes a draft and returns its command ID. The ID is fixed now, so
// every delivery attempt of this draft is the same command.
func (o *Outbox) Add(text string, steer bool) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	id := o.newID()
	o.items = append(o.items, &OutboxItem{CommandID: id, Text: text, Steer: steer, Delivery: Draft})
	return id
}

func (o *Outbox) find(id string) (*OutboxItem, error) {
	for _, it := range o.items {
		if it.CommandID == id {
			return it, nil
		}
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownCommand, id)
}

// Edit changes a draft's text.
func (o *Outbox) Edit(id, text string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	it, err := o.find(id)
	if err != nil {
		return err
	}
	switch it.Delivery {
	case Pending, Uncertain:
		return ErrInFlight
	case Accepted:
		return ErrNotEditable // the engine holds it now
	}
	it.Text = text
	o.publishLocked()
	return nil
}

// Remove drops a draft.
func (o *Outbox) Remove(id string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	it, err := o.find(id)
	if err != nil {
		return err
	}
	if it.Delivery == Pending || it.Delivery == Uncertain {
		return ErrInFlight
	}
	if it.Delivery == Accepted {
		return ErrNotEditable
	}
	o.items = slices.DeleteFunc(o.items, func(x *OutboxItem) bool { return x == it })
	o.publishLocked()
	return nil
}

// Send delivers a draft. Only a draft can be sent: a pending or uncertain
// one returns ErrInFlight, so a double click or a reconnect never makes a
// second turn.
func (o *Outbox) Send(ctx context.Context, id string) (OutboxItem, error) {
	o.mu.Lock()
	it, err := o.find(id)
	if err != nil {
		o.mu.Unlock()
		return OutboxItem{}, err
	}
	if it.Delivery != Draft {
		o.mu.Unlock()
		if it.Delivery == Accepted {
			return *it, nil
		}
		return *it, ErrInFlight
	}
	it.Delivery, it.Reason = Pending, ""
	text, steer := it.Text, it.Steer
	o.publishLocked()
	o.mu.Unlock()

	r, err := o.send(ctx, id, text, steer)

	o.mu.Lock()
	defer o.mu.Unlock()
	switch reason, def := definitive(err); {
	case err == nil:
		o.accept(it, r)
	case def:
		it.Delivery, it.Reason = Draft, reason
	default:
		it.Delivery, it.Reason = Uncertain, err.Error()
	}
	o.publishLocked()
	return *it, err
}

// accept records a receipt. A command the engine later rejected (a steer
// refused because the turn was stopped) is a draft again, with a Send
// action, never sent by itself.
func (o *Outbox) accept(it *OutboxItem, r Receipt) {
	it.Receipt = r
	if r.State == Rejected {
		it.Delivery, it.Reason = Draft, r.Reason
		return
	}
	it.Delivery, it.Reason = Accepted, ""
}

// Confirm polls the engine about uncertain and accepted commands by their
// own IDs. A command the engine has becomes (or stays) accepted; one it
// definitively never received becomes a draft; a failed poll changes
// nothing.
func (o *Outbox) Confirm(ctx context.Context, status StatusFunc) {
	o.mu.Lock()
	var ids []string
	for _, it := range o.items {
		if it.Delivery == Uncertain || (it.Delivery == Accepted && !final(it.Receipt.State)) {
			ids = append(ids, it.CommandID)
		}
	}
	o.mu.Unlock()
	for _, id := range ids {
		r, err := status(ctx, id)
		o.mu.Lock()
		if it, ferr := o.find(id); ferr == nil {
			switch {
			case err == nil:
				o.accept(it, r)
			case errors.Is(err, ErrUnknownCommand) && it.Delivery == Uncertain:
				it.Delivery, it.Reason = Draft, "the engine never received it"
			}
		}
		o.publishLocked()
		o.mu.Unlock()
	}
}

func final(s State) bool { return s.Final() }

// Items lists the commands in the order they were added.
func (o *Outbox) Items() []OutboxItem {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]OutboxItem, len(o.items))
	for i, it := range o.items {
		out[i] = *it
	}
	return out
}

// Transport returns the in-process transport for e.
func (e *Engine) Transport() Transport {
	return func(ctx context.Context, id, text string, steer bool) (Receipt, error) {
		if steer {
			return e.Steer(id, text)
		}
		return e.Send(ctx, id, text, nil)
	}
}

// StatusFunc returns the in-process status query for e.
func (e *Engine) StatusFunc() StatusFunc {
	return func(_ context.Context, id string) (Receipt, error) { return e.Status(id) }
}
