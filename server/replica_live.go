package server

import (
	"time"
	"unicode/utf16"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/transcript"
)

// Live state across replicas. The replica whose engine runs a
// conversation sends every change it publishes to the other replicas as it
// is published (Replica.Stream), before any of it is saved, in the order it
// was published: each entry whole when it opens, settles or changes other
// than by appended text, and after that only the text appended, against
// the length the last message left; the turn, the queue, the approvals,
// the receipts and the presentations of open tool calls as they are. The
// other replicas put them into their conversation's live state as the
// engine's changes are put into the owner's, so their tabs get the same
// events at about the same time.
//
// The saved records still come, and stay the authority for the document:
// a record of an entry the messages already showed as far (or further) is
// passed over, and a settled record that differs replaces whatever the
// messages built. A message that does not continue what the receiver holds
// (one was lost: see pgstore's live.go) is dropped, and the entry then
// grows by its saved records until a message continues the text a record
// left. An entry known only from messages that the log moves past without
// it (the owner died before saving it) is withdrawn by replacing the
// document. Receipts of commands this replica forwarded also come back
// through the inbox (replica.go); a receipt a tab already got is not sent
// again.

// liveMsg is a streaming message between replicas.
type liveMsg struct {
	Entry string `json:"e"`
	// Rev numbers the sender's messages for the entry; Base is the one
	// this append continues.
	Rev  int64 `json:"r"`
	Base int64 `json:"b,omitzero"`
	// An append: Text goes after the first Offset UTF-16 units of the
	// entry's text.
	Offset int    `json:"o,omitzero"`
	Text   string `json:"t,omitzero"`
	// The open entry whole, and the entry it follows.
	Open  jsontext.Value `json:"x,omitzero"`
	After string         `json:"a,omitzero"`
	// Settle: Open is the entry settled.
	Settle bool `json:"s,omitzero"`
	// Control is a change that is not an entry's (Entry is then "").
	Control *liveControl `json:"c,omitzero"`
}

// liveControl is a change of the turn, the queue, the approvals, a
// receipt or an open tool call's presentation, as the owner published it.
type liveControl struct {
	Op           ChangeOp                 `json:"op"`
	Turn         *TurnState               `json:"turn,omitzero"`
	Queue        []QueueItem              `json:"queue,omitzero"`
	Steers       []QueueItem              `json:"steers,omitzero"`
	Approvals    []ApprovalItem           `json:"approvals,omitzero"`
	Receipt      *Receipt                 `json:"receipt,omitzero"`
	EntryID      string                   `json:"entry,omitzero"`
	InvocationID string                   `json:"invocation,omitzero"`
	Presentation *transcript.Presentation `json:"presentation,omitzero"`
	Ephemeral    bool                     `json:"ephemeral,omitzero"`
}

// streamSent is what the last message of an entry left, on the owner.
type streamSent struct {
	entry transcript.Entry
	rev   int64
	n16   int
	after string
}

// streamLiveLocked sends a change this replica's engine published to the
// other replicas.
func (c *conversation) streamLiveLocked(ch Change) {
	r := c.srv.rep.live
	if r == nil {
		return
	}
	c.srv.relayed.drop(c.id) // this replica's engine has the word now
	id, sent := c.id, c.streamed
	var msg liveMsg
	switch ch.Op {
	case OpReplaced:
		// The records bring the new document.
		c.streamed = nil
		return
	case OpTurn, OpQueue, OpApprovals, OpReceipt, OpPresentation:
		msg.Control = &liveControl{Op: ch.Op, Turn: ch.Turn, Queue: ch.Queue, Steers: ch.Steers, Approvals: ch.Approvals, Receipt: ch.Receipt,
			EntryID: ch.EntryID, InvocationID: ch.InvocationID, Presentation: ch.Presentation, Ephemeral: ch.Ephemeral}
	case OpSettle:
		e := ch.Entry
		prev := sent[e.ID]
		delete(sent, e.ID)
		raw, err := transcript.EncodeEntry(e)
		if err != nil {
			return
		}
		msg = liveMsg{Entry: e.ID, Rev: 1, Open: raw, After: ch.After, Settle: true}
		if prev != nil {
			msg.Rev, msg.After = prev.rev+1, prev.after
		}
	case OpUpsert:
		e := ch.Entry
		if sent == nil {
			sent = map[string]*streamSent{}
			c.streamed = sent
		}
		prev := sent[e.ID]
		next := &streamSent{entry: e, after: ch.After, n16: utf16Len(textOf(e)), rev: 1}
		msg.Entry = e.ID
		if prev != nil {
			next.after, next.rev = prev.after, prev.rev+1
			if grown, ok := appended(prev.entry, e); ok {
				msg.Base, msg.Offset, msg.Text = prev.rev, prev.n16, grown
			}
		}
		if msg.Base == 0 {
			raw, err := transcript.EncodeEntry(e)
			if err != nil {
				return
			}
			msg.Open, msg.After = raw, next.after
		}
		msg.Rev = next.rev
		sent[e.ID] = next
		if len(sent) > maxRemote {
			// Entries left open by a turn that ended otherwise: the
			// receivers go by the records for them.
			for k := range sent {
				if k != e.ID {
					delete(sent, k)
					break
				}
			}
		}
	default:
		return
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return
	}
	r.Stream(id, b)
}

// remoteEntry is a receiver's state of an entry streaming messages
// reached.
type remoteEntry struct {
	rev    int64 // the sender's revision the text is at; 0: the chain broke; fromRecord: a saved record set it
	logged bool  // a record of the entry was read
	// opened: the upsert message of an entry whose place (the entry it
	// follows) is not here yet; held: append messages that did not
	// continue the text held, kept for the next record (or the upsert) to
	// catch up with.
	opened *liveMsg
	held   []liveMsg
	// settled: a message settled the entry; its record is passed over
	// when it says the same.
	settled bool
}

// fromRecord marks text a saved record set, which a message continues by
// its offset alone.
const fromRecord = -1

// maxHeld bounds the messages a receiver holds for an entry while it waits
// for a record to continue from: more than a streaming answer sends
// between two saves.
const maxHeld = 256

// maxRemote bounds the entries a conversation keeps streaming state for.
const maxRemote = 64

// streamIn puts another replica's streaming message into conversation
// id's live state, when this replica has one and its own engine does not
// hold the conversation (entries only while tabs follow it).
func (s *Server) streamIn(id string, b []byte) {
	var msg liveMsg
	if json.Unmarshal(b, &msg) != nil || (msg.Entry == "" && msg.Control == nil) {
		return
	}
	c := s.lookupConv(id)
	if c == nil {
		s.stateIn(id, b)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// While this replica tries to open an engine (c.changing; it fails
	// while the owner holds the lease) the owner's changes still apply.
	if c.eng != nil {
		return
	}
	c.relayAt = time.Now()
	if msg.Control != nil {
		c.controlInLocked(*msg.Control)
		return
	}
	if !c.synced || len(c.subs) == 0 {
		return
	}
	re := c.remote[msg.Entry]
	if le := c.live[msg.Entry]; le != nil && !le.open {
		if re != nil && (re.logged || !re.settled) {
			delete(c.remote, msg.Entry) // settled: the record has the last word
		}
		return
	}
	if re == nil {
		if len(c.remote) >= maxRemote {
			for id, r := range c.remote {
				// Settled entries whose records have not come yet are
				// kept while there is room.
				if l := c.live[id]; l == nil || (!l.open && (r.logged || len(c.remote) >= 2*maxRemote)) {
					delete(c.remote, id)
				}
			}
		}
		if c.remote == nil {
			c.remote = map[string]*remoteEntry{}
		}
		re = &remoteEntry{rev: fromRecord}
		c.remote[msg.Entry] = re
	}
	if msg.Open != nil {
		re.opened, re.held = &msg, nil // it starts over
		c.remoteOpenLocked(re)
		return
	}
	if c.live[msg.Entry] == nil && re.opened != nil {
		c.remoteOpenLocked(re)
	}
	if c.live[msg.Entry] == nil {
		re.hold(msg)
		return
	}
	if re.rev != msg.Base && re.rev != fromRecord {
		re.rev = 0 // one went missing: wait for a record
	}
	if re.rev == 0 || !c.remoteAppendLocked(re, msg) {
		re.hold(msg)
	}
}

// remoteOpenLocked applies an entry's upsert or settle message once the
// entry it follows is here, then the messages held since.
func (c *conversation) remoteOpenLocked(re *remoteEntry) {
	msg := *re.opened
	e, err := transcript.DecodeEntry(msg.Open)
	if err != nil || e.ID != msg.Entry {
		re.opened = nil
		return
	}
	le := c.live[msg.Entry]
	placed := func() bool { return msg.After == c.lastID || c.live[msg.After] != nil }
	if le == nil && !placed() {
		// The listener wrote the records before this message to the copy
		// already: read them.
		c.pollLocked()
		if le = c.live[msg.Entry]; le == nil && !placed() {
			return // its place is not here yet
		}
	}
	re.opened = nil
	if le != nil && !le.open {
		return
	}
	if msg.Settle {
		if c.applyLocked(Change{Op: OpSettle, Entry: e, After: msg.After}, 0) == nil {
			re.settled, re.held, re.rev = true, nil, msg.Rev
		}
		return
	}
	if le != nil {
		if _, behind := appended(e, le.entry); behind || transcript.FingerprintOf(e) == transcript.FingerprintOf(le.entry) {
			re.rev = msg.Rev // a record showed as much already
			c.replayLocked(re)
			return
		}
	}
	if c.applyLocked(Change{Op: OpUpsert, Entry: e, After: msg.After}, 0) == nil {
		re.rev = msg.Rev
		c.replayLocked(re)
	}
}

// remoteAppendLocked applies an append message to its open entry when it
// continues the text held (a record may have taken the entry past its
// start: the rest is applied), and reports false when it starts past that
// text (something is missing).
func (c *conversation) remoteAppendLocked(re *remoteEntry, msg liveMsg) bool {
	le := c.live[msg.Entry]
	if le == nil || !le.open {
		return true // nothing to continue any more
	}
	have, end := le.n16, msg.Offset+utf16Len(msg.Text)
	if msg.Offset > have {
		re.rev = 0
		return false
	}
	if end > have {
		text := msg.Text
		if msg.Offset < have {
			text = string(utf16.Decode(utf16.Encode([]rune(text))[have-msg.Offset:]))
		}
		if c.applyLocked(Change{Op: OpUpsert, Entry: withText(le.entry, textOf(le.entry)+text)}, 0) != nil {
			return true
		}
	}
	re.rev = msg.Rev
	return true
}

// replayLocked applies the held messages that continue the text now held.
func (c *conversation) replayLocked(re *remoteEntry) {
	held := re.held
	re.held = nil
	for _, msg := range held {
		if !c.remoteAppendLocked(re, msg) {
			re.held = append(re.held, msg)
		}
	}
}

// hold keeps a message that could not be applied yet.
func (re *remoteEntry) hold(msg liveMsg) {
	if len(re.held) == maxHeld {
		re.held = re.held[1:]
	}
	re.held = append(re.held, msg)
}

// remoteRecordLocked is told of each entry of a record the follower reads
// (end is the offset just past the record), before it is applied, and
// reports whether it is done with it: a record of an entry that streaming
// messages already took as far or further is passed over, and one that
// is not is applied here, followed by the held messages that continue
// it. A record that brings a new entry while an entry known only from
// messages is open withdraws that one (the log moved past it): the
// document is replaced.
func (c *conversation) remoteRecordLocked(e transcript.Entry, open, emit bool, end int64) (skip bool) {
	le := c.live[e.ID]
	if emit && le != nil && !le.open && (open || sameRecord(e, le.entry)) {
		// The tabs have it settled as the record says (a message settled
		// it, or an earlier record wrote it), or the record is behind.
		if re := c.remote[e.ID]; re != nil {
			delete(c.remote, e.ID)
		}
		if !open && le.durableAt == 0 {
			le.durableAt = end
		}
		c.recordedLocked(e.ID)
		return true
	}
	if len(c.remote) == 0 {
		return false
	}
	re := c.remote[e.ID]
	if le == nil {
		for id, r := range c.remote {
			l := c.live[id]
			switch {
			case id == e.ID || l == nil:
			case !r.logged && (l.open || r.settled):
				c.withdrawLocked()
				return false
			case !l.open:
				delete(c.remote, id)
			}
		}
	}
	if re == nil {
		return false
	}
	re.logged = true
	if le != nil && !le.open {
		delete(c.remote, e.ID)
		if open || sameRecord(e, le.entry) {
			// A message settled it as the record says (or the record is
			// behind): from here on it is in the log.
			if !open && le.durableAt == 0 {
				le.durableAt = end
			}
			c.recordedLocked(e.ID)
			return true
		}
		return false
	}
	if !open || !emit {
		delete(c.remote, e.ID)
		return false
	}
	if le != nil {
		k := e.Content.Kind()
		_, behind := appended(e, le.entry)
		if behind || sameRecord(e, le.entry) || (k != transcript.KindAgent && k != transcript.KindReasoning) {
			// Behind, the same, or an entry the messages carry whole,
			// whose last message is newer than a provisional record.
			c.recordedLocked(e.ID)
			return true
		}
	}
	// The record, then what held messages add to it.
	after := c.lastID
	if le != nil {
		after = le.after
	}
	c.applyLocked(Change{Op: OpUpsert, Entry: e, After: after}, 0)
	re.rev, re.opened = fromRecord, nil
	c.replayLocked(re)
	c.recordedLocked(e.ID)
	return true
}

// recordedLocked moves the follower's last entry to id, whose record it
// read, unless messages placed a later entry already: records come after
// the messages, and new entries follow the latest.
func (c *conversation) recordedLocked(id string) {
	if r := c.remote[c.lastID]; r != nil && !r.logged && c.lastID != id {
		return
	}
	c.lastID = id
}

// dropRemoteLocked forgets the streaming messages' state, withdrawing
// what only they showed: this replica's engine publishes the conversation
// from now on, or the database was lost meanwhile.
func (c *conversation) dropRemoteLocked() {
	c.srv.relayed.drop(c.id)
	for id, r := range c.remote {
		if l := c.live[id]; l != nil && (l.open || r.settled) && !r.logged {
			c.withdrawLocked()
			return
		}
	}
	c.remote = nil
}

// withdrawLocked drops what streaming messages showed: the log is the
// document again, read afresh by every tab.
func (c *conversation) withdrawLocked() {
	// The log's last entry is the one the first message-only entry
	// followed.
	for id, r := range c.remote {
		if l := c.live[id]; l != nil && !r.logged {
			if pr := c.remote[l.after]; pr == nil || pr.logged {
				c.lastID = l.after
			}
		}
	}
	c.remote = nil
	c.replacing = false
	c.replaceLocked()
}
