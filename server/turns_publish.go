package server

import (
	"slices"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/transcript"
)

// This file is the engine's side of live changes: while a conversation's
// engine is open, one goroutine (publisher.run) publishes its store's
// snapshots and the turn, queue, approvals and receipts to the
// conversation's live feed (conversation.publish). The publisher owns its
// marks: what of the store went out.

// liveCadence bounds how often streaming changes are published. Text
// travels as appends, so the bytes do not grow with the answer, but each
// event is still a frame to every tab: a fast model's tokens are batched
// into at most 30 updates a second, which still reads as streaming.
const liveCadence = 33 * time.Millisecond

// publisher publishes one open engine's store to its conversation. Its
// fields are owned by the goroutine that runs it (run), set before it
// starts (newPublisher).
type publisher struct {
	c     *conversation // the conversation it feeds
	hooks turnsHooks

	gen uint64
	// published counts the conversation's entries (the store's Elided
	// ones included) that are published settled or were hydrated; the
	// engine drops settled entries from its store in a long session
	// (engine.WithDocumentWindow), so positions in the store move.
	published int
	pub       map[string]pubState
	lastTurn  TurnState
	lastQueue []QueueItem
	lastSteer []QueueItem
	lastAppr  []ApprovalItem
	control   bool   // queue, turn and approvals were published once
	receipts  uint64 // the engine's receipt mark published up to (engine.Receipts)
	// shared is set for an engine another program also drives (a
	// terminal chat's, lent by Server.Adopt): that program reads the
	// engine's one Changed channel, and a second reader would take
	// signals from it, so the publisher leaves the channel alone and finds
	// command changes in the store's snapshots instead (every command
	// change shows in the store's live state).
	shared bool
	// allowed reads the tools the engine allows (engine.Allowed, or an
	// owner's as it reported them); nil for none.
	allowed func() []string
}

// pubState is what the publisher last sent of an entry.
type pubState struct {
	fp   transcript.Fingerprint
	open bool
}

// newPublisher starts the publisher's marks at snap, the store's hydrated
// snapshot: what it holds is in the log already.
func (c *conversation) newPublisher(snap transcript.Snapshot, hooks turnsHooks) *publisher {
	d := snap.Document
	return &publisher{c: c, hooks: hooks, gen: snap.Generation, published: d.Elided() + d.Len(), pub: map[string]pubState{}}
}

// run is the publishing goroutine of an open engine: it publishes the
// store's snapshots (at most once per liveCadence; the latest one always
// goes out) and the engine's command changes until quit is closed, then
// once more so nothing written last is left out. saved signals a save;
// each channel received on syncs is closed once the store's current
// snapshot is published (catchUp).
func (p *publisher) run(eng *engine.Engine, sub *transcript.Subscription, saved <-chan struct{}, syncs <-chan chan struct{}, quit <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	defer sub.Close()
	store := eng.Store()
	var (
		last    time.Time
		timer   *time.Timer
		timerC  <-chan time.Time
		pending bool
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	publish := func(snap transcript.Snapshot) {
		p.publishDoc(snap)
		// What changes as text streams (a sub-agent's last line) and
		// the engine's allowed tools go out at the live cadence too.
		if p.control {
			if t := p.turnOf(snap.Live); !t.equal(p.lastTurn) {
				_ = p.c.publish(Change{Op: OpTurn, Turn: &t})
				p.lastTurn = t
			}
		}
		last, pending = time.Now(), false
	}
	for {
		// A shared engine's Changed signals are left to the program that
		// shares it (see shared).
		var changed <-chan struct{}
		if !p.shared {
			changed = eng.Changed()
		}
		select {
		case snap, ok := <-sub.C():
			if !ok {
				return
			}
			// The store's snapshot in which the turn's user or reply
			// entry becomes known is the moment to say so: the entries
			// go out first, then the turn event.
			if p.control && p.controlChanged(snap.Live) || p.shared && p.receiptsChanged(eng) {
				p.publishControl(eng)
				last, pending = time.Now(), false
				continue
			}
			if wait := liveCadence - time.Since(last); wait > 0 {
				pending = true
				if timerC == nil {
					timer = time.NewTimer(wait)
					timerC = timer.C
				}
				continue
			}
			publish(snap)
		case <-timerC:
			timerC = nil
			if pending {
				publish(store.Snapshot())
			}
		case <-saved:
			publish(store.Snapshot())
		case ack := <-syncs:
			publish(store.Snapshot())
			close(ack)
		case <-changed:
			p.publishControl(eng)
			last, pending = time.Now(), false
		case <-quit:
			p.publishControl(eng)
			return
		}
	}
}

// catchUp returns once the publisher has published the engine store's
// snapshot as it is now, or has ended. A head switch hydrates the store
// with the new head's document, a new generation the publisher announces
// as "replaced"; a command that switched heads waits for that here, so the
// generation moves once, before its receipt and head event, and a tab that
// opens after the receipt keeps a token valid until something new happens.
func (c *conversation) catchUp() {
	c.mu.Lock()
	syncs, done, hooks := c.pubSync, c.pubDone, c.hooks
	c.mu.Unlock()
	if syncs == nil {
		return
	}
	if h := hooks.catchUp; h != nil {
		h(c.id)
	}
	ack := make(chan struct{})
	select {
	case syncs <- ack:
		<-ack
	case <-done: // it ended with a last publish of everything
	}
}

// publishDoc publishes what changed in the document since the last call:
// each new or changed entry once, open ones as upserts and settled ones as
// settles, in document order. A failure entry (and what follows it) waits
// until a save holds it, so its event never overtakes the log: a reload
// right after the event shows the same notice.
func (p *publisher) publishDoc(snap transcript.Snapshot) {
	c := p.c
	if snap.Generation != p.gen {
		// Replaced or cleared: clients rebuild from a new snapshot of the
		// log, which the engine's next save rewrites. Its settled entries
		// reach them that way, not as a flood of events; what is open or
		// comes later is published as usual.
		if h := p.hooks.replacing; h != nil {
			h(c.id)
		}
		p.gen, p.published, p.pub = snap.Generation, snap.Document.Elided()+snap.Document.Settled(), map[string]pubState{}
		_ = c.publish(Change{Op: OpReplaced})
	}
	doc := snap.Document
	base := doc.Elided()
	if p.published < base {
		// The engine dropped entries this publisher never sent (it fell
		// more than the engine's window behind). They are in the log:
		// clients take a new snapshot of it, as after a gap.
		if h := p.hooks.replacing; h != nil {
			h(c.id)
		}
		p.published, p.pub = base+doc.Settled(), map[string]pubState{}
		_ = c.publish(Change{Op: OpReplaced})
	}
	var (
		saved   transcript.Document
		saveErr error
	)
	if last := c.saved.Load(); last != nil {
		saved, saveErr = last.doc, last.err
	}
	for i := p.published - base; i < doc.Len(); i++ {
		e, open, fp := doc.At(i), doc.IsOpen(i), doc.Fingerprint(i)
		if ps, ok := p.pub[e.ID]; ok && ps.fp == fp && ps.open == open {
			continue
		}
		if _, failure := e.Content.(transcript.Failure); failure && saveErr == nil {
			if _, ok := saved.Index(e.ID); !ok {
				if h := p.hooks.held; h != nil {
					h(e.ID)
				}
				break // not saved yet: the save's signal brings us back
			}
		}
		after := ""
		if i > 0 {
			after = doc.At(i - 1).ID
		}
		op := OpSettle
		if open {
			op = OpUpsert
		}
		_ = c.publish(Change{Op: op, Entry: e, After: after})
		p.pub[e.ID] = pubState{fp: fp, open: open}
		if h := p.hooks.published; h != nil {
			h(e)
		}
	}
	// Settled entries never change again: stop looking at them.
	for p.published-base < doc.Settled() {
		id := doc.At(p.published - base).ID
		if ps, ok := p.pub[id]; !ok || ps.open {
			break
		}
		delete(p.pub, id)
		p.published++
	}
}

// controlChanged reports whether l's turn, queue or approvals differ from
// what was published last. A store that paces its readers (a terminal
// chat's, lent to a hosted server) may show the engine's change of them
// in a later snapshot than the one current when the engine signalled it.
func (p *publisher) controlChanged(l transcript.Live) bool {
	if !turnOf(l).control().equal(p.lastTurn.control()) {
		return true
	}
	cs := controlOf(l)
	return !slices.Equal(cs.Queue, p.lastQueue) || !slices.Equal(cs.Steers, p.lastSteer) || !slices.Equal(cs.Approvals, p.lastAppr)
}

// receiptsChanged reports whether a command's receipt changed since the
// last publishControl.
func (p *publisher) receiptsChanged(eng *engine.Engine) bool {
	changed, _ := eng.Receipts(p.receipts)
	return len(changed) > 0
}

// turnOf is the running top-level turn as clients see it, read from the
// store's live state.
func turnOf(l transcript.Live) TurnState {
	ts := TurnState{State: turnIdle, Context: l.PromptContext, Totals: usageOf(l.Totals), Children: childrenOf(l)}
	if t, ok := l.Turn(); ok {
		ts.State, ts.Turn, ts.Reply, ts.Activity = turnRunning, t.Entry, t.Reply, string(l.Activity)
		if r := l.Retry; r.Pending() {
			ts.Retry = &TurnRetry{Attempt: r.Attempt, Reason: r.Reason, At: r.At.UnixMilli()}
		}
	}
	return ts
}

// turnOf is the turn as published: the store's, with the tools the
// engine allows.
func (p *publisher) turnOf(l transcript.Live) TurnState {
	t := turnOf(l)
	if p.allowed != nil {
		t.Allowed = p.allowed()
	}
	return t
}

// publishControl publishes the turn, queue and approvals (from the store's
// live state, the snapshot the terminal reads them from) when they changed,
// and the engine's receipts that changed since the last call. The document
// goes first, so a receipt never announces a turn's end before its entries.
func (p *publisher) publishControl(eng *engine.Engine) {
	c := p.c
	// Receipts are read before the snapshot: a turn's entries are in the
	// store before its command settles, so every entry of a receipt read
	// here is in the snapshot taken after it and goes out first.
	var changed []engine.Receipt
	changed, p.receipts = eng.Receipts(p.receipts)
	snap := eng.Store().Snapshot()
	p.publishDoc(snap)
	cs := controlOf(snap.Live)
	*cs.Turn = p.turnOf(snap.Live)
	if !p.control || !cs.Turn.equal(p.lastTurn) {
		_ = c.publish(Change{Op: OpTurn, Turn: cs.Turn})
		p.lastTurn = *cs.Turn
	}
	if !p.control || !slices.Equal(cs.Queue, p.lastQueue) || !slices.Equal(cs.Steers, p.lastSteer) {
		_ = c.publish(Change{Op: OpQueue, Queue: cs.Queue, Steers: cs.Steers})
		p.lastQueue, p.lastSteer = cs.Queue, cs.Steers
	}
	if !p.control || !slices.Equal(cs.Approvals, p.lastAppr) {
		_ = c.publish(Change{Op: OpApprovals, Approvals: cs.Approvals})
		p.lastAppr = cs.Approvals
	}
	p.control = true

	for _, r := range changed {
		rc := receiptOf(c.id, r)
		_ = c.publish(Change{Op: OpReceipt, Receipt: &rc})
	}
}
