package server

import (
	"slices"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/transcript"
)

// This file is the engine's side of live changes: one goroutine per open
// conversation publishes its store's snapshots and the engine's turn,
// queue, approvals and receipts through Server.Publish.

// liveCadence bounds how often streaming changes are published. Text
// travels as appends, so the bytes do not grow with the answer, but each
// event is still a frame to every tab: a fast model's tokens are batched
// into at most 30 updates a second, which still reads as streaming.
const liveCadence = 33 * time.Millisecond

// run publishes the store's snapshots (at most once per liveCadence; the
// latest one always goes out) and the engine's command changes until the
// session closes, then once more so nothing written last is left out.
func (s *runner) run() {
	defer close(s.done)
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
		s.publishDoc(snap)
		last, pending = time.Now(), false
	}
	for {
		select {
		case snap, ok := <-s.sub.C():
			if !ok {
				return
			}
			// The store's snapshot in which the turn's user or reply
			// entry becomes known is the moment to say so: the entries
			// go out first, then the turn event.
			if s.control && turnOf(snap.Live) != s.lastTurn {
				s.publishControl()
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
				publish(s.store.Snapshot())
			}
		case <-s.saveC:
			publish(s.store.Snapshot())
		case <-s.eng.Changed():
			s.publishControl()
			last, pending = time.Now(), false
		case <-s.quit:
			s.publishControl()
			return
		}
	}
}

// publishDoc publishes what changed in the document since the last call:
// each new or changed entry once, open ones as upserts and settled ones as
// settles, in document order. A failure entry (and what follows it) waits
// until a save holds it, so its event never overtakes the log: a reload
// right after the event shows the same notice.
func (s *runner) publishDoc(snap transcript.Snapshot) {
	if snap.Generation != s.gen {
		// Replaced or cleared: clients rebuild from a new snapshot of the
		// log, which the engine's next save rewrites. Its settled entries
		// reach them that way, not as a flood of events; what is open or
		// comes later is published as usual.
		s.gen, s.published, s.pub = snap.Generation, snap.Document.Settled(), map[string]pubState{}
		_ = s.srv.Publish(s.id, Change{Op: OpReplaced})
	}
	doc := snap.Document
	var (
		saved   transcript.Document
		saveErr error
	)
	if last := s.saved.Load(); last != nil {
		saved, saveErr = last.doc, last.err
	}
	for i := s.published; i < doc.Len(); i++ {
		e, open, fp := doc.At(i), doc.IsOpen(i), doc.Fingerprint(i)
		if p, ok := s.pub[e.ID]; ok && p.fp == fp && p.open == open {
			continue
		}
		if _, failure := e.Content.(transcript.Failure); failure && saveErr == nil {
			if _, ok := saved.Index(e.ID); !ok {
				if h := s.t.hooks.held; h != nil {
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
		_ = s.srv.Publish(s.id, Change{Op: op, Entry: e, After: after})
		s.pub[e.ID] = pubState{fp: fp, open: open}
		if h := s.t.hooks.published; h != nil {
			h(e)
		}
	}
	// Settled entries never change again: stop looking at them.
	for s.published < doc.Settled() {
		id := doc.At(s.published).ID
		if p, ok := s.pub[id]; !ok || p.open {
			break
		}
		delete(s.pub, id)
		s.published++
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
func (s *runner) publishControl() {
	// Receipts are read before the snapshot: a turn's entries are in the
	// store before its command settles, so every entry of a receipt read
	// here is in the snapshot taken after it and goes out first.
	var changed []engine.Receipt
	changed, s.receipts = s.eng.Receipts(s.receipts)
	snap := s.store.Snapshot()
	s.publishDoc(snap)
	cs := controlOf(snap.Live)
	if !s.control || *cs.Turn != s.lastTurn {
		_ = s.srv.Publish(s.id, Change{Op: OpTurn, Turn: cs.Turn})
		s.lastTurn = *cs.Turn
	}
	if !s.control || !slices.Equal(cs.Queue, s.lastQueue) {
		_ = s.srv.Publish(s.id, Change{Op: OpQueue, Queue: cs.Queue})
		s.lastQueue = cs.Queue
	}
	if !s.control || !slices.Equal(cs.Approvals, s.lastAppr) {
		_ = s.srv.Publish(s.id, Change{Op: OpApprovals, Approvals: cs.Approvals})
		s.lastAppr = cs.Approvals
	}
	s.control = true

	for _, r := range changed {
		rc := receiptOf(s.id, r)
		_ = s.srv.Publish(s.id, Change{Op: OpReceipt, Receipt: &rc})
	}
}
