package server

import (
	"time"

	"github.com/foliodev/folio/transcript"
)

// The follower's side of the relay (replica_live.go): records that
// replace an empty document (a new log's first turn) wait for the end of
// the read, and send nothing when the tabs hold what they bring.

// noteEmptyLocked notes, once per scanner, whether the document the
// follower's scanner read before start is empty: only a short log's is
// looked at (a resumed scanner's document is built to answer).
func (c *conversation) noteEmptyLocked(start int64) {
	if c.checkedOf == c.sc {
		return
	}
	c.checkedOf = c.sc
	if start < 4096 && len(c.sc.Document()) == 0 {
		c.emptyOf = c.sc
	}
}

// deferReplaceLocked is told of a record the follower read that replaced
// the document (in a way no append describes), and reports whether the
// replacement waits for the end of the read: when the document it replaced
// was empty. A new log's first records (a model message, then the entries
// written instead of what that message derived) replace the document
// twice; its tabs have nothing to discard, and on a replica the owner's
// relayed entries show it already.
func (c *conversation) deferReplaceLocked(wasEmpty bool, head string, end int64) bool {
	if head != c.head || (!wasEmpty && !c.replacing) {
		return false
	}
	if !c.replacing {
		c.replaceSince = time.Now()
	}
	c.replacing, c.replaceEnd = true, end
	return true
}

// maxReplaceWait bounds how long a replaced document waits for the log
// to catch up with what the owner's messages showed.
const maxReplaceWait = 5 * time.Second

// aheadLocked reports whether messages showed entries whose records have
// not been read yet.
func (c *conversation) aheadLocked() bool {
	for id, r := range c.remote {
		if c.live[id] != nil && !r.logged {
			return true
		}
	}
	return false
}

// settleReplaceLocked ends a read whose records replaced an empty
// document: when every entry of the document read is one the tabs were
// sent as it is (or further, for an open one), they are marked read from
// the log; else the document is replaced.
func (c *conversation) settleReplaceLocked() {
	if !c.replacing {
		return
	}
	if c.sc == nil {
		c.replacing = false
		c.lastID = ""
		c.replaceLocked()
		return
	}
	doc := c.sc.Document()
	for _, e := range doc {
		le := c.live[e.ID]
		same := le != nil && sameRecord(e, le.entry)
		if !same && le != nil && le.open {
			_, same = appended(e, le.entry)
		}
		if same {
			continue
		}
		if c.aheadLocked() && time.Since(c.replaceSince) < maxReplaceWait {
			// The owner's messages showed entries the log does not have
			// yet (the model's message came first, the entries follow):
			// the next read settles it.
			return
		}
		c.replacing = false
		c.lastID = lastOf(doc)
		c.replaceLocked()
		return
	}
	c.replacing = false
	for _, e := range doc {
		le := c.live[e.ID]
		if re := c.remote[e.ID]; re != nil {
			re.logged = true
			if !le.open {
				delete(c.remote, e.ID)
			}
		}
		if !le.open && le.durableAt == 0 {
			le.durableAt = c.replaceEnd
		}
		c.recordedLocked(e.ID)
	}
}

// sameRecord reports whether e, read from a record, is shown, the entry a
// tab holds, as the log keeps it (what is shown only while a tool call is
// open is not written).
func sameRecord(e, shown transcript.Entry) bool {
	fp := transcript.FingerprintOf(e)
	if fp == transcript.FingerprintOf(shown) {
		return true
	}
	d, changed := shown.Durable()
	return changed && fp == transcript.FingerprintOf(d)
}
