package server

import (
	"sync"
	"unicode/utf16"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/transcript"
)

// Streaming across replicas. The replica whose engine writes an answer
// sends its streaming changes to the other replicas as they are published
// (Replica.Stream), before they are saved: an open agent or reasoning
// entry whole when it opens or changes other than by appended text, and
// after that only the text appended, against the length the last message
// left. The other replicas put them into their conversation's live state
// as the engine's changes are put into the owner's, so their tabs get the
// same append events at about the same time.
//
// The saved records still come, and stay the authority: a record of an
// open entry that is behind what the messages already showed is passed
// over, and a settled record replaces whatever the messages built. A
// message that does not continue what the receiver holds (one was lost:
// see pgstore's live.go) is dropped, and the entry then grows by its saved
// records until a message continues the text a record left. An entry known
// only from messages that the log moves past without it (the owner died
// before saving it) is withdrawn by replacing the document.

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
}

// streamOut is the owner's side: per conversation, per open entry, what
// the last message left.
type streamOut struct {
	mu    sync.Mutex
	convs map[string]map[string]*streamSent
}

type streamSent struct {
	entry transcript.Entry
	rev   int64
	n16   int
	after string
}

// streamLive sends a change the engine published for conversation id to
// the other replicas, when it is streaming: an open agent or reasoning
// entry.
func (s *Server) streamLive(id string, ch Change) {
	r := s.opts.Replica
	if r == nil {
		return
	}
	o := &s.streamOut
	o.mu.Lock()
	defer o.mu.Unlock()
	sent := o.convs[id]
	switch ch.Op {
	case OpReplaced:
		delete(o.convs, id)
		return
	case OpSettle:
		if sent != nil {
			delete(sent, ch.Entry.ID)
			if len(sent) == 0 {
				delete(o.convs, id)
			}
		}
		return
	case OpUpsert:
	default:
		return
	}
	e := ch.Entry
	if k := e.Content.Kind(); k != transcript.KindAgent && k != transcript.KindReasoning {
		return
	}
	if sent == nil {
		if o.convs == nil {
			o.convs = map[string]map[string]*streamSent{}
		}
		sent = map[string]*streamSent{}
		o.convs[id] = sent
	}
	prev := sent[e.ID]
	next := &streamSent{entry: e, after: ch.After, n16: utf16Len(textOf(e)), rev: 1}
	msg := liveMsg{Entry: e.ID}
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
	b, err := json.Marshal(msg)
	if err != nil {
		return
	}
	sent[e.ID] = next
	r.Stream(id, b)
}

// remoteEntry is a receiver's state of an open entry that streaming
// messages reached: the sender's revision its text is at.
type remoteEntry struct {
	rev    int64 // 0: the chain broke; fromRecord: a saved record set it
	logged bool  // a record of the entry was read
}

// fromRecord marks text a saved record set, which a message continues by
// its offset alone.
const fromRecord = -1

// streamIn puts another replica's streaming message into conversation
// id's live state, when this replica has one with tabs following it and
// its own engine does not hold the conversation.
func (s *Server) streamIn(id string, b []byte) {
	c := s.lookupConv(id)
	if c == nil {
		return
	}
	var msg liveMsg
	if json.Unmarshal(b, &msg) != nil || msg.Entry == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.engine || !c.synced || c.syncing || len(c.subs) == 0 {
		return
	}
	if c.remote == nil {
		c.remote = map[string]*remoteEntry{}
	}
	le := c.live[msg.Entry]
	if le != nil && !le.open {
		return // settled: the record has the last word
	}
	re := c.remote[msg.Entry]
	if le == nil || re == nil {
		re = &remoteEntry{rev: fromRecord, logged: le != nil}
	}
	if msg.Open != nil {
		e, err := transcript.DecodeEntry(msg.Open)
		if err != nil || e.ID != msg.Entry {
			return
		}
		if le == nil && msg.After != c.lastID {
			// The listener wrote the records before this message to the
			// copy already: read them.
			c.pollLocked()
			le = c.live[msg.Entry]
			re.logged = le != nil
			if le == nil && msg.After != c.lastID {
				return // what comes before it is not here: its record brings it
			}
			if le != nil && !le.open {
				return
			}
		}
		if le != nil {
			if _, behind := appended(e, le.entry); behind || transcript.FingerprintOf(e) == transcript.FingerprintOf(le.entry) {
				re.rev = msg.Rev // a record already showed as much
				c.remote[msg.Entry] = re
				return
			}
		}
		if c.applyLocked(Change{Op: OpUpsert, Entry: e, After: msg.After}, 0) == nil {
			re.rev = msg.Rev
			c.remote[msg.Entry] = re
		}
		return
	}
	if le == nil {
		return
	}
	if re.rev != msg.Base && re.rev != fromRecord {
		re.rev = 0 // one went missing: wait for a record
		c.remote[msg.Entry] = re
		return
	}
	have, end := le.n16, msg.Offset+utf16Len(msg.Text)
	if msg.Offset > have {
		re.rev = 0
		c.remote[msg.Entry] = re
		return
	}
	if end <= have {
		re.rev = msg.Rev // a record already showed this
		c.remote[msg.Entry] = re
		return
	}
	text := msg.Text
	if msg.Offset < have {
		text = string(utf16.Decode(utf16.Encode([]rune(text))[have-msg.Offset:]))
	}
	if c.applyLocked(Change{Op: OpUpsert, Entry: withText(le.entry, textOf(le.entry)+text)}, 0) == nil {
		re.rev = msg.Rev
		c.remote[msg.Entry] = re
	}
}

// remoteRecordLocked is told of each entry of a record the follower reads,
// before it is applied, and reports whether to pass it over: a record of
// an open entry that streaming messages already took further. A record
// that brings a new entry while an entry known only from messages is open
// withdraws that one (the log moved past it): the document is replaced.
func (c *liveState) remoteRecordLocked(e transcript.Entry, open bool) (skip bool) {
	if len(c.remote) == 0 {
		return false
	}
	re := c.remote[e.ID]
	le := c.live[e.ID]
	if le == nil {
		// A new entry: anything only messages showed is not in the log.
		delete(c.remote, e.ID)
		for id, r := range c.remote {
			if l := c.live[id]; l == nil || !l.open {
				delete(c.remote, id)
			} else if !r.logged {
				c.withdrawLocked()
				return false
			}
		}
		return false
	}
	if re == nil {
		return false
	}
	re.logged = true
	if !open {
		delete(c.remote, e.ID)
		return false
	}
	if !le.open {
		return false
	}
	if _, behind := appended(e, le.entry); behind || transcript.FingerprintOf(e) == transcript.FingerprintOf(le.entry) {
		return true
	}
	re.rev = fromRecord
	return false
}

// withdrawLocked drops what streaming messages showed: the log is the
// document again, read afresh by every tab.
func (c *liveState) withdrawLocked() {
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
	c.replaceLocked()
}
