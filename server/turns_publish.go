package server

import (
	"slices"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/transcript"
)

// This file is the engine's side of live changes: while a conversation's
// engine is open, one goroutine (publish) publishes its store's snapshots
// and the turn, queue, approvals and receipts through Server.Publish. It
// owns the publisher's marks on the conversation.

// liveCadence bounds how often streaming changes are published. Text
// travels as appends, so the bytes do not grow with the answer, but each
// event is still a frame to every tab: a fast model's tokens are batched
// into at most 30 updates a second, which still reads as streaming.
const liveCadence = 33 * time.Millisecond

// resetMarks starts the publisher's marks at snap, the store's hydrated
// snapshot: what it holds is in the log already. It runs before the
// publishing goroutine starts.
func (c *conversation) resetMarks(snap transcript.Snapshot) {
	c.pubGen, c.published, c.pub = snap.Generation, snap.Document.Len(), map[string]pubState{}
	c.lastTurn, c.lastQueue, c.lastAppr = TurnState{}, nil, nil
	c.control, c.receipts = false, 0
}

// publish is the publishing goroutine of an open engine: it publishes the
// store's snapshots (at most once per liveCadence; the latest one always
// goes out) and the engine's command changes until quit is closed, then
// once more so nothing written last is left out. saved signals a save;
// each channel received on syncs is closed once the store's current
// snapshot is published (catchUp).
func (c *conversation) publish(eng *engine.Engine, sub *transcript.Subscription, saved <-chan struct{}, syncs <-chan chan struct{}, quit <-chan struct{}, done chan<- struct{}) {
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
		c.publishDoc(snap)
		last, pending = time.Now(), false
	}
	for {
		select {
		case snap, ok := <-sub.C():
			if !ok {
				return
			}
			// The store's snapshot in which the turn's user or reply
			// entry becomes known is the moment to say so: the entries
			// go out first, then the turn event.
			if c.control && turnOf(snap.Live) != c.lastTurn {
				c.publishControl(eng)
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
		case <-eng.Changed():
			c.publishControl(eng)
			last, pending = time.Now(), false
		case <-quit:
			c.publishControl(eng)
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
	syncs, done := c.pubSync, c.pubDone
	c.mu.Unlock()
	if syncs == nil {
		return
	}
	if h := c.hooks().catchUp; h != nil {
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
func (c *conversation) publishDoc(snap transcript.Snapshot) {
	if snap.Generation != c.pubGen {
		// Replaced or cleared: clients rebuild from a new snapshot of the
		// log, which the engine's next save rewrites. Its settled entries
		// reach them that way, not as a flood of events; what is open or
		// comes later is published as usual.
		if h := c.hooks().replacing; h != nil {
			h(c.id)
		}
		c.pubGen, c.published, c.pub = snap.Generation, snap.Document.Settled(), map[string]pubState{}
		_ = c.srv.Publish(c.id, Change{Op: OpReplaced})
	}
	doc := snap.Document
	var (
		saved   transcript.Document
		saveErr error
	)
	if last := c.saved.Load(); last != nil {
		saved, saveErr = last.doc, last.err
	}
	for i := c.published; i < doc.Len(); i++ {
		e, open, fp := doc.At(i), doc.IsOpen(i), doc.Fingerprint(i)
		if p, ok := c.pub[e.ID]; ok && p.fp == fp && p.open == open {
			continue
		}
		if _, failure := e.Content.(transcript.Failure); failure && saveErr == nil {
			if _, ok := saved.Index(e.ID); !ok {
				if h := c.hooks().held; h != nil {
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
		_ = c.srv.Publish(c.id, Change{Op: op, Entry: e, After: after})
		c.pub[e.ID] = pubState{fp: fp, open: open}
		if h := c.hooks().published; h != nil {
			h(e)
		}
	}
	// Settled entries never change again: stop looking at them.
	for c.published < doc.Settled() {
		id := doc.At(c.published).ID
		if p, ok := c.pub[id]; !ok || p.open {
			break
		}
		delete(c.pub, id)
		c.published++
	}
}

// turnOf is the running top-level turn as clients see it, read from the
// store's live state.
func turnOf(l transcript.Live) TurnState {
	if t, ok := l.Turn(); ok {
		return TurnState{State: TurnRunning, Turn: t.Entry, Reply: t.Reply}
	}
	return TurnState{State: TurnIdle}
}

// publishControl publishes the turn, queue and approvals (from the store's
// live state, the snapshot the terminal reads them from) when they changed,
// and the engine's receipts that changed since the last call. The document
// goes first, so a receipt never announces a turn's end before its entries.
func (c *conversation) publishControl(eng *engine.Engine) {
	// Receipts are read before the snapshot: a turn's entries are in the
	// store before its command settles, so every entry of a receipt read
	// here is in the snapshot taken after it and goes out first.
	var changed []engine.Receipt
	changed, c.receipts = eng.Receipts(c.receipts)
	snap := eng.Store().Snapshot()
	c.publishDoc(snap)
	cs := controlOf(snap.Live)
	if !c.control || *cs.Turn != c.lastTurn {
		_ = c.srv.Publish(c.id, Change{Op: OpTurn, Turn: cs.Turn})
		c.lastTurn = *cs.Turn
	}
	if !c.control || !slices.Equal(cs.Queue, c.lastQueue) {
		_ = c.srv.Publish(c.id, Change{Op: OpQueue, Queue: cs.Queue})
		c.lastQueue = cs.Queue
	}
	if !c.control || !slices.Equal(cs.Approvals, c.lastAppr) {
		_ = c.srv.Publish(c.id, Change{Op: OpApprovals, Approvals: cs.Approvals})
		c.lastAppr = cs.Approvals
	}
	c.control = true

	for _, r := range changed {
		rc := receiptOf(c.id, r)
		_ = c.srv.Publish(c.id, Change{Op: OpReceipt, Receipt: &rc})
	}
}
