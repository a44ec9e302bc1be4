package server

import (
	"os"
	"slices"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
)

// The owner's turn, queue, approvals and receipts on the other replicas
// (see replica_live.go for how they travel): applied to a conversation's
// live state, kept for snapshots, and the receipts that also come back
// through the inbox sent to the tabs once.

// recordGrace is how long the follower leaves records in the copy
// unread while the owner relays its changes: the relayed changes show
// them first, in the owner's order, and the records then only confirm
// them.
const recordGrace = 300 * time.Millisecond

// relayQuiet is how long after the owner's last relayed change the
// follower stops waiting for its changes.
const relayQuiet = 2 * time.Second

// holdRecordsLocked reports whether the follower should leave its copy's
// new records a moment longer: the owner relays its changes and the copy
// changed less than recordGrace ago.
func (c *conversation) holdRecordsLocked() bool {
	if c.relayAt.IsZero() || time.Since(c.relayAt) > relayQuiet || c.eng != nil {
		return false
	}
	fi, err := os.Stat(c.path)
	return err == nil && time.Since(fi.ModTime()) < recordGrace
}

// stateIn keeps the turn, queue and approvals another replica's engine
// relayed for a conversation this replica has no live state of, for a tab
// that opens it here mid-turn.
func (s *Server) stateIn(id string, b []byte) {
	var msg liveMsg
	if json.Unmarshal(b, &msg) != nil || msg.Control == nil {
		return
	}
	if c := s.lookupConv(id); c != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.eng != nil {
			return
		}
	}
	s.relayed.update(id, *msg.Control)
}

// maxReceipts bounds the commands whose receipts a conversation
// remembers, so one arriving twice (relayed, and answered through the
// inbox) is sent to its tabs once.
const maxReceipts = 256

// controlInLocked applies the owner's turn, queue, approvals, receipt or
// presentation change, and keeps the turn, queue and approvals for the
// snapshots of tabs that open meanwhile (stateLocked).
func (c *conversation) controlInLocked(ctl liveControl) {
	ch := Change{Op: ctl.Op}
	switch ctl.Op {
	case OpTurn:
		if ctl.Turn == nil {
			return
		}
		ch.Turn = ctl.Turn
	case OpQueue:
		ch.Queue, ch.Steers = ctl.Queue, ctl.Steers
	case OpApprovals:
		ch.Approvals = ctl.Approvals
	case OpReceipt:
		if ctl.Receipt == nil || !c.newReceiptLocked(*ctl.Receipt) {
			return
		}
		ch.Receipt = ctl.Receipt
	case OpPresentation:
		ch.EntryID, ch.InvocationID, ch.Presentation, ch.Ephemeral = ctl.EntryID, ctl.InvocationID, ctl.Presentation, ctl.Ephemeral
	default:
		return
	}
	c.srv.relayed.update(c.id, ctl)
	_ = c.applyLocked(ch, 0)
}

// ownerDied forgets what the dead owner of conversation id relayed of its
// turn, queue and approvals, and tells this replica's tabs, which showed
// them, that nothing runs there: without this they would show the turn
// running until an engine opened the conversation again. The recovery
// that follows records the answer the owner left unfinished as
// interrupted, and a tab's next send opens an engine as usual.
func (s *Server) ownerDied(id string) {
	had := s.relayed.get(id) != nil
	s.relayed.drop(id)
	c := s.lookupConv(id)
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.eng != nil || !had {
		return // this replica's engine holds it now, or nothing was shown
	}
	idle := []Change{
		{Op: OpTurn, Turn: &TurnState{State: turnIdle}},
		{Op: OpQueue, Queue: []QueueItem{}},
		{Op: OpApprovals, Approvals: []ApprovalItem{}},
	}
	for _, ch := range idle {
		_ = c.applyLocked(ch, 0)
	}
}

// relayedStates is, by conversation, the turn, queue and approvals the
// owner last relayed, while something runs, is queued or waits there.
type relayedStates struct {
	mu sync.Mutex
	m  map[string]controlState
}

// maxRelayedStates bounds the conversations a replica keeps them for.
const maxRelayedStates = 4096

// update applies a relayed change; other ops change nothing.
func (r *relayedStates) update(id string, ctl liveControl) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cs, ok := r.m[id]
	if !ok {
		cs = controlState{Turn: &TurnState{State: turnIdle}, Queue: []QueueItem{}, Approvals: []ApprovalItem{}}
	}
	switch ctl.Op {
	case OpTurn:
		if ctl.Turn == nil {
			return
		}
		cs.Turn = ctl.Turn
	case OpQueue:
		cs.Queue, cs.Steers = slices.Clone(ctl.Queue), slices.Clone(ctl.Steers)
		if cs.Queue == nil {
			cs.Queue = []QueueItem{}
		}
	case OpApprovals:
		cs.Approvals = slices.Clone(ctl.Approvals)
		if cs.Approvals == nil {
			cs.Approvals = []ApprovalItem{}
		}
	default:
		return
	}
	if cs.Turn.State == turnIdle && len(cs.Queue) == 0 && len(cs.Steers) == 0 && len(cs.Approvals) == 0 {
		delete(r.m, id) // the same as knowing nothing
		return
	}
	if r.m == nil {
		r.m = map[string]controlState{}
	}
	if !ok && len(r.m) >= maxRelayedStates {
		for k := range r.m {
			delete(r.m, k) // one: an owner that died with a turn running
			break
		}
	}
	r.m[id] = cs
}

// get is a conversation's relayed state; nil when nothing runs there.
func (r *relayedStates) get(id string) *controlState {
	r.mu.Lock()
	defer r.mu.Unlock()
	cs, ok := r.m[id]
	if !ok {
		return nil
	}
	return &cs
}

// drop forgets a conversation's relayed state.
func (r *relayedStates) drop(id string) {
	r.mu.Lock()
	delete(r.m, id)
	r.mu.Unlock()
}

// newReceiptLocked reports whether rc is a receipt the conversation's
// tabs have not had yet, and remembers it.
func (c *conversation) newReceiptLocked(rc Receipt) bool {
	if c.receipts == nil {
		c.receipts = map[string][]Receipt{}
	}
	had, ok := c.receipts[rc.CommandID]
	for _, h := range had {
		if h == rc {
			return false
		}
	}
	if !ok {
		if len(c.receiptOrder) >= maxReceipts {
			delete(c.receipts, c.receiptOrder[0])
			c.receiptOrder = c.receiptOrder[1:]
		}
		c.receiptOrder = append(c.receiptOrder, rc.CommandID)
	}
	c.receipts[rc.CommandID] = append(had, rc)
	return true
}

// receiptIn gives this replica's tabs a receipt of a command it forwarded,
// which the owner answered through the inbox, unless the relayed changes
// brought it already.
func (c *conversation) receiptIn(rc Receipt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !rc.State.Final() && !c.relayAt.IsZero() && time.Since(c.relayAt) < relayQuiet {
		// The owner relays: what its tabs got of the command came with
		// the rest.
		return
	}
	if c.newReceiptLocked(rc) {
		_ = c.applyLocked(Change{Op: OpReceipt, Receipt: &rc}, 0)
	}
}

// stateLocked is the turn, queue and approvals a snapshot answer carries:
// this replica's engine's, else what the owner last relayed.
func (c *conversation) stateLocked() *controlState {
	if c.eng == nil {
		if cs := c.srv.relayed.get(c.id); cs != nil {
			return cs
		}
	}
	return c.controlLocked()
}
