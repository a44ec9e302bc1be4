package server

import (
	"slices"
	"time"

	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

// This file is the engine's side of live changes: one goroutine per open
// conversation publishes its store's snapshots and the engine's turn,
// queue, approvals and receipts through Server.Publish.

// liveCadence bounds how often streaming changes are published: every
// event carries the entry's whole current text, so publishing each token
// of a fast model would send the reply over and over. 30 updates a second
// still reads as streaming.
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
			// The engine signals no change when a turn's user or reply
			// entry becomes known; the store's snapshot that holds it is
			// the moment. The entries go out first, then the turn event.
			if s.control && s.turnState() != s.lastTurn {
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
		case <-s.poke:
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
	s.mu.Lock()
	saved, saveErr := s.savedDoc, s.saveErr
	s.mu.Unlock()
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

// turnState is the running turn as clients see it. It also remembers a
// send's user entry for its receipt.
func (s *runner) turnState() TurnState {
	tr, ok := s.eng.Running()
	if !ok {
		return TurnState{State: "idle"}
	}
	ts := TurnState{State: "running", Turn: tr.UserEntryID, Reply: tr.ReplyEntryID}
	s.mu.Lock()
	defer s.mu.Unlock()
	if tr.UserEntryID != "" {
		s.userEntry[tr.CommandID] = tr.UserEntryID
	} else if tk, ok := s.pending[tr.CommandID]; ok && tk.kind == CmdRetry {
		if s.retryTurn.commandID != tr.CommandID {
			s.retryTurn.commandID, s.retryTurn.userEntry = tr.CommandID, lastUser(s.store.Snapshot().Document)
		}
		ts.Turn = s.retryTurn.userEntry
	}
	return ts
}

// publishControl publishes the engine's turn, queue, approvals and the
// receipts of commands that changed state. The document goes first, so a
// receipt never announces a turn's end before its entries.
func (s *runner) publishControl() {
	// The queue and the approvals are read from the store's live state,
	// the same snapshot the terminal reads them from.
	snap := s.store.Snapshot()
	s.publishDoc(snap)
	ts := s.turnState()
	q := []QueueItem{}
	for _, c := range snap.Live.Queue.All() {
		if c.State == transcript.CommandQueued && !c.Steer {
			q = append(q, QueueItem{CommandID: c.ID, Text: c.Preview, State: string(c.State)})
		}
	}
	a := []ApprovalItem{}
	for _, ap := range snap.Live.Approvals.All() {
		a = append(a, ApprovalItem{InvocationID: ap.ID, Tool: ap.Tool, Args: ap.Args, Child: ap.Child})
	}
	if !s.control || ts != s.lastTurn {
		t := ts
		_ = s.srv.Publish(s.id, Change{Op: OpTurn, Turn: &t})
		s.lastTurn = ts
	}
	if !s.control || !slices.Equal(q, s.lastQueue) {
		_ = s.srv.Publish(s.id, Change{Op: OpQueue, Queue: q})
		s.lastQueue = q
	}
	if !s.control || !slices.Equal(a, s.lastAppr) {
		_ = s.srv.Publish(s.id, Change{Op: OpApprovals, Approvals: a})
		s.lastAppr = a
	}
	s.control = true

	s.mu.Lock()
	var changed []Receipt
	for id, tr := range s.pending {
		r, err := s.eng.Status(id)
		if err != nil {
			continue
		}
		rc := protoReceipt(r)
		rc.CommandID, rc.Conversation, rc.Kind = id, s.id, tr.kind
		rc.EntryID = s.userEntry[id]
		if rc != tr.last {
			tr.last = rc
			changed = append(changed, rc)
		}
		if final(r.State) {
			delete(s.pending, id)
			delete(s.userEntry, id)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(changed, func(a, b Receipt) int { return receiptRank(a.State) - receiptRank(b.State) })
	for i := range changed {
		_ = s.srv.Publish(s.id, Change{Op: OpReceipt, Receipt: &changed[i]})
	}
}

// onTool publishes a presentation that never reaches the document: the
// current value of an ephemeral primary item, shown only while its
// invocation is open (retained values travel inside the tool entry).
func (s *runner) onTool(ch toolview.Change) {
	if !ch.Open || ch.Record != nil || ch.Item != "" || ch.Value == nil || ch.Value.Draft || ch.Retention != toolview.Ephemeral {
		return
	}
	p := &transcript.Presentation{Schema: ch.Value.Schema, Version: ch.Value.Version,
		Revision: int64(ch.Revision), Payload: transcript.RawJSON(ch.Value.Payload)}
	_ = s.srv.Publish(s.id, Change{Op: OpPresentation, EntryID: ch.Invocation, InvocationID: ch.Invocation,
		Presentation: p, Ephemeral: true})
}
