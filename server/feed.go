package server

import (
	"fmt"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/server/pager"
	"github.com/foliodev/folio/transcript"
)

// This file is a conversation's live feed (the feed part): each change
// becomes an event to every subscriber, remembered by entry for the
// checkpoints a reconnecting client gets. Everything here runs under the
// conversation's mutex.

// maxLive bounds the changed entries a conversation remembers for
// reconnect checkpoints. A client that missed more gets "replaced".
const maxLive = 10000

// maxLiveBytes bounds the bytes of those entries.
const maxLiveBytes = 32 << 20

// defaultHead is the single head of a linear conversation.
const defaultHead = "main"

// replaceLocked starts a new generation: the document was replaced.
func (c *feed) replaceLocked() {
	g := c.gen.Add(1)
	c.seq = 0
	c.live = map[string]*liveEntry{}
	c.ring = nil
	c.forgotten = 0
	c.liveBytes = 0
	c.broadcastLocked(eventFrame{Op: OpReplaced, Generation: g})
}

// applyLocked publishes one change. durableAt, for an entry the follower
// read from the log, is the offset just past its record.
//
// There is one producer at a time (the engine while it holds the
// conversation, else the follower; see acquireLocked and releaseLocked), so an entry's
// state is taken as it comes: nothing is merged with what clients received
// before, and nothing needs de-duplicating.
func (c *feed) applyLocked(ch Change, durableAt int64) error {
	switch ch.Op {
	case OpUpsert, OpSettle:
		open := ch.Op == OpUpsert
		prev := c.live[ch.Entry.ID]
		e := ch.Entry
		raw, err := transcript.EncodeEntry(e)
		if err != nil {
			return err
		}
		after := ch.After
		if prev != nil {
			after = prev.after
		}
		grown, isAppend := "", false
		if prev != nil && prev.open && open {
			grown, isAppend = appended(prev.entry, e)
		}
		c.seq++
		le := &liveEntry{entry: e, raw: raw, rev: c.seq, open: open, after: after, durableAt: durableAt}
		switch {
		case isAppend:
			le.n16 = prev.n16 + utf16Len(grown)
		case open:
			le.n16 = utf16Len(textOf(e))
		}
		if prev != nil {
			if open {
				// A live value outlives upserts of its open entry; closure
				// ends it (the settled entry carries what is retained).
				le.pres = prev.pres
			}
			c.liveBytes -= len(prev.raw)
		}
		c.live[e.ID] = le
		c.liveBytes += len(raw)
		c.remember(e.ID)
		if prev == nil && durableAt == 0 {
			c.lastID = e.ID
		}
		if isAppend {
			// Streaming text: only what was appended travels, against the
			// revision the client must hold.
			c.broadcastLocked(eventFrame{Op: OpAppend, EntryID: e.ID, Base: prev.rev, Revision: c.seq,
				Offset: prev.n16, Text: grown})
			return nil
		}
		op := OpUpsert
		if prev != nil && prev.open && !open {
			op = OpSettle
		}
		c.broadcastLocked(eventFrame{Op: op, Entry: raw, Revision: c.seq, Open: open, After: after})
	case OpPresentation:
		if ch.Presentation == nil {
			return fmt.Errorf("presentation change without a presentation")
		}
		le := c.live[ch.EntryID]
		if le != nil && !le.open {
			return nil // closed is absorbing
		}
		if le != nil && le.pres != nil && ch.Presentation.Revision <= le.pres.p.Revision {
			return nil // stale or duplicate
		}
		if le == nil {
			return fmt.Errorf("presentation for %q, which is not an open entry", ch.EntryID)
		}
		c.seq++
		le.pres = &livePresentation{invocationID: ch.InvocationID, p: *ch.Presentation, rev: c.seq, ephemeral: ch.Ephemeral}
		le.rev = c.seq
		c.remember(ch.EntryID)
		c.broadcastLocked(eventFrame{Op: OpPresentation, EntryID: ch.EntryID, InvocationID: ch.InvocationID, Revision: c.seq, Presentation: ch.Presentation})
	case OpReplaced:
		c.replaceLocked()
	case OpHead:
		c.head = ch.Head
		c.seq++
		c.broadcastLocked(eventFrame{Op: OpHead, Head: ch.Head})
	case OpQueue:
		c.seq++
		q := ch.Queue
		if q == nil {
			q = []QueueItem{}
		}
		c.broadcastLocked(eventFrame{Op: OpQueue, Items: q, Steers: ch.Steers})
	case OpTurn:
		if ch.Turn == nil {
			return fmt.Errorf("turn change without a turn state")
		}
		c.seq++
		t := *ch.Turn
		c.broadcastLocked(eventFrame{Op: OpTurn, State: t.State, TurnID: t.Turn, Reply: t.Reply,
			Activity: t.Activity, Retry: t.Retry, Context: t.Context, Totals: t.Totals, Children: t.Children, Allowed: t.Allowed})
	case OpApprovals:
		c.seq++
		a := ch.Approvals
		if a == nil {
			a = []ApprovalItem{}
		}
		c.broadcastLocked(eventFrame{Op: OpApprovals, Approvals: a})
	case OpReceipt:
		if ch.Receipt == nil {
			return fmt.Errorf("receipt change without a receipt")
		}
		c.seq++
		c.broadcastLocked(eventFrame{Op: OpReceipt, Receipt: ch.Receipt})
	default:
		return fmt.Errorf("unknown change op %q", ch.Op)
	}
	return nil
}

// textOf is the streaming text of an agent or reasoning entry.
func textOf(e transcript.Entry) string {
	switch c := e.Content.(type) {
	case transcript.Agent:
		return c.Markdown
	case transcript.Reasoning:
		return c.Text
	}
	return ""
}

// withText returns e with its streaming text replaced.
func withText(e transcript.Entry, text string) transcript.Entry {
	switch c := e.Content.(type) {
	case transcript.Agent:
		c.Markdown = text
		e.Content = c
	case transcript.Reasoning:
		c.Text = text
		e.Content = c
	}
	return e
}

// appended reports whether next is prev with text appended to its
// streaming text and nothing else changed, and returns that text.
func appended(prev, next transcript.Entry) (string, bool) {
	before, after := textOf(prev), textOf(next)
	if len(after) <= len(before) || after[:len(before)] != before || !utf8.ValidString(after[len(before):]) {
		return "", false
	}
	// Everything but the text must be equal (compared without the text, so
	// the cost does not grow with the answer).
	if transcript.FingerprintOf(withText(prev, "")) != transcript.FingerprintOf(withText(next, "")) {
		return "", false
	}
	return after[len(before):], true
}

// utf16Len is the length of s in UTF-16 code units: the offsets of append
// events count what a browser's strings count.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// remember records a change in the ring and forgets the oldest settled
// entries past maxLive.
func (c *feed) remember(id string) {
	c.ring = append(c.ring, ringItem{id, c.seq})
	// Each pass looks at every ring item at most once, so a ring of only
	// open entries cannot spin.
	for n := len(c.ring); n > 0 && (len(c.live) > maxLive || c.liveBytes > maxLiveBytes); n-- {
		it := c.ring[0]
		c.ring = c.ring[1:]
		le := c.live[it.id]
		if le == nil || le.rev != it.rev {
			continue // a later change of this entry is further on
		}
		if le.open {
			c.ring = append(c.ring, it) // open entries are always kept
			continue
		}
		delete(c.live, it.id)
		c.liveBytes -= len(le.raw)
		c.forgotten = it.rev
	}
	// Drop the ring items that later changes made stale.
	if len(c.ring) > 2*len(c.live)+64 {
		kept := make([]ringItem, 0, len(c.live))
		for _, it := range c.ring {
			if le := c.live[it.id]; le != nil && le.rev == it.rev {
				kept = append(kept, it)
			}
		}
		c.ring = kept
	}
}

// eventFrame is the JSON of a live event.
type eventFrame struct {
	Type         string                   `json:"type"`
	Conversation string                   `json:"conversation"`
	Generation   int64                    `json:"generation"`
	Seq          int64                    `json:"seq"`
	Op           ChangeOp                 `json:"op"`
	Entry        jsontext.Value           `json:"entry,omitzero"`
	Revision     int64                    `json:"revision,omitzero"`
	Open         bool                     `json:"open,omitzero"`
	After        string                   `json:"after,omitzero"`
	EntryID      string                   `json:"entryId,omitzero"`
	Base         int64                    `json:"base,omitzero"`
	Offset       int                      `json:"offset,omitzero"`
	Text         string                   `json:"text,omitzero"`
	InvocationID string                   `json:"invocationId,omitzero"`
	Presentation *transcript.Presentation `json:"presentation,omitzero"`
	Head         string                   `json:"head,omitzero"`
	Items        []QueueItem              `json:"items,omitzero"`
	Steers       []QueueItem              `json:"steers,omitzero"`
	State        string                   `json:"state,omitzero"`
	TurnID       string                   `json:"turn,omitzero"`
	Reply        string                   `json:"reply,omitzero"`
	Activity     string                   `json:"activity,omitzero"`
	Retry        *TurnRetry               `json:"retry,omitzero"`
	Context      int64                    `json:"context,omitzero"`
	Totals       Usage                    `json:"totals,omitzero"`
	Children     []ChildState             `json:"children,omitzero"`
	Allowed      []string                 `json:"allowed,omitzero"`
	Approvals    []ApprovalItem           `json:"approvals,omitzero"`
	Receipt      *Receipt                 `json:"receipt,omitzero"`
}

func (c *feed) broadcastLocked(ev eventFrame) {
	ev.Type = "event"
	ev.Conversation = c.id
	ev.Generation = c.gen.Load()
	ev.Seq = c.seq
	b, err := json.Marshal(ev, json.Deterministic(true))
	if err != nil {
		return
	}
	for cn := range c.subs {
		cn.send(b, false)
	}
}

// checkpoint is the reconnect answer: current values, not a replay.
type checkpoint struct {
	Replaced      bool              `json:"replaced"`
	Entries       []checkpointEntry `json:"entries"`
	Presentations []checkpointPres  `json:"presentations"`
}

type checkpointEntry struct {
	Entry    jsontext.Value `json:"entry"`
	Revision int64          `json:"revision"`
	Open     bool           `json:"open"`
	After    string         `json:"after,omitzero"`
}

type checkpointPres struct {
	EntryID      string                  `json:"entryId"`
	InvocationID string                  `json:"invocationId"`
	Revision     int64                   `json:"revision"`
	Presentation transcript.Presentation `json:"presentation"`
}

// maxCheckpoint bounds the entries and presentations a snapshot answer
// carries, so no frame exceeds the largest page.
const maxCheckpoint = pager.MaxBudget

// size is about how many bytes the checkpoint adds to a frame.
func (cp *checkpoint) size() int {
	n := 0
	for _, e := range cp.Entries {
		n += len(e.Entry) + len(e.After) + 64
	}
	for _, p := range cp.Presentations {
		n += len(p.Presentation.Payload) + len(p.EntryID) + len(p.InvocationID) + 128
	}
	return n
}

// sinceMark is what a reconnecting client last applied.
type sinceMark struct {
	Generation int64 `json:"generation"`
	Seq        int64 `json:"seq"`
}

// checkpointLocked answers an open: the current value of every entry changed
// after snapSeq (the seq the returned snapshot reflects) or after since.Seq
// when a reconnecting client is older, plus every open entry. Pages of the
// snapshot plus this checkpoint are the current document. Replaced tells a
// reconnecting client that its own window is from another generation (or
// older than the server remembers) and must be rebuilt. Entries come in seq
// order.
//
// An entry the engine published before it reached the log (durableAt 0, or
// past snapOff, the log offset the snapshot was read to) is in neither the
// snapshot nor, by its revision, above the snapshot's seq: it goes in the
// checkpoint too, so nothing published is lost between the two.
func (c *feed) checkpointLocked(since *sinceMark, snapSeq, snapOff int64) *checkpoint {
	cp := &checkpoint{Entries: []checkpointEntry{}, Presentations: []checkpointPres{}}
	after := snapSeq
	if since != nil {
		if since.Generation != c.gen.Load() || since.Seq < c.forgotten {
			cp.Replaced = true
		} else {
			after = min(after, since.Seq)
		}
	}
	seen := map[string]bool{}
	for i := len(c.ring) - 1; i >= 0; i-- {
		it := c.ring[i]
		le := c.live[it.id]
		if le == nil || le.rev != it.rev || seen[it.id] {
			continue
		}
		seen[it.id] = true
		if le.rev > after || le.open || le.durableAt == 0 || le.durableAt > snapOff {
			cp.Entries = append(cp.Entries, checkpointEntry{Entry: le.raw, Revision: le.rev, Open: le.open, After: le.after})
			if le.pres != nil && le.open {
				cp.Presentations = append(cp.Presentations, checkpointPres{EntryID: it.id, InvocationID: le.pres.invocationID, Revision: le.pres.rev, Presentation: le.pres.p})
			}
		}
	}
	// The walk went newest first; clients apply oldest first.
	for i, j := 0, len(cp.Entries)-1; i < j; i, j = i+1, j-1 {
		cp.Entries[i], cp.Entries[j] = cp.Entries[j], cp.Entries[i]
	}
	return cp
}
