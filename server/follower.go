package server

import (
	"io"
	"os"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// This file is a conversation's follower (the follower part): subscribing
// starts it, it reads what another process appends to the log and turns it
// into live changes of the feed (feed.go), and it hands that job to this
// server's engine and back (acquireLocked, releaseLocked). Everything here
// runs under the conversation's mutex.

// subscribe adds cn to the followers and starts the file follower with the
// first one. It reports false, and adds nothing, when the server has
// forgotten the conversation (evict): the caller looks it up again.
func (c *conversation) subscribe(cn *conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.evicted {
		return false
	}
	c.subs[cn] = struct{}{}
	if c.stop == nil {
		c.stop = make(chan struct{})
		go c.follow(c.stop)
	}
	return true
}

func (c *conversation) unsubscribe(cn *conn) {
	defer c.srv.evictLater(c)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.subs, cn)
	if len(c.subs) == 0 && c.stop != nil {
		close(c.stop)
		c.stop = nil
		// Close the file but keep how far it was read: the next follower
		// (a reconnecting tab) continues from there, so what was appended
		// meanwhile still becomes live changes its checkpoint can carry.
		if c.f != nil {
			c.f.Close()
			c.f = nil
		}
		c.shared.snap = nil // let a released capture's index go
	}
}

// follow polls the log on a tick while the conversation has followers. The
// cost per tick is one stat; only appended bytes are read.
func (c *conversation) follow(stop chan struct{}) {
	t := time.NewTicker(c.srv.opts.FollowInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-c.srv.done:
			return
		case <-t.C:
			c.mu.Lock()
			select {
			case <-c.srv.done:
				c.mu.Unlock()
				return // Close has released the files; do not reopen them
			default:
			}
			if !c.firstReadingLocked() && !c.holdRecordsLocked() {
				c.pollLocked()
			}
			c.mu.Unlock()
		}
	}
}

// acquireLocked hands live changes over from the follower to eng, which
// has just taken the log's lock: the follower first publishes whatever the
// log gained before (another writer's last records), and from then on only
// keeps its reading current.
func (c *conversation) acquireLocked(eng *engine.Engine) {
	if c.synced {
		c.pollLocked()
	}
	c.eng, c.allowed = eng, eng.Allowed
}

// releaseLocked hands live changes back to the follower once the engine
// has closed the log: what the engine wrote (and published) is read
// quietly, so the follower publishes only what comes after it.
func (c *conversation) releaseLocked() {
	if c.synced {
		c.pollLocked()
	}
	c.eng, c.allowed = nil, nil
}

// firstReadingLocked reports whether a capture is reading the log for the
// first time (capture): the follower waits for that reading rather than
// read the whole log beside it.
func (c *follower) firstReadingLocked() bool {
	return c.building != nil && !c.synced
}

// off is how far the follower has read the log.
func (c *follower) off() int64 {
	if c.sc == nil {
		return c.resumeAt
	}
	return c.sc.Offset()
}

// pollLocked reads what was appended to the log since the last poll and
// publishes it. A log that was replaced (renamed over, or shrunk) advances
// the generation.
func (c *conversation) pollLocked() {
	fi, err := os.Stat(c.path)
	if err != nil {
		return // not there (yet); a deleted conversation is announced by its handler
	}
	if c.f == nil {
		f, err := os.Open(c.path)
		if err != nil {
			return
		}
		c.f = f
		if c.fi == nil && c.synced && c.sc == nil {
			// The log appeared after a capture saw none: reading it from
			// the start publishes everything in it.
			c.fi, c.sc = fi, history.NewScanner()
		}
	}
	if c.rewrittenLocked(fi) || c.resumeLocked(fi) {
		return
	}
	if c.fi == nil || c.sc == nil || !os.SameFile(c.fi, fi) || fi.Size() < c.off() {
		// First sight of this file, or another file (or a shorter one) took
		// its place: read it whole, quietly.
		wasSynced := c.synced
		c.sc, c.lastID, c.fi = history.NewScanner(), "", fi
		if f, err := os.Open(c.path); err == nil {
			c.f.Close()
			c.f = f
		}
		c.readLocked(false)
		if wasSynced {
			c.replaceLocked()
		}
		return
	}
	if fi.Size() > c.off() {
		c.readLocked(c.eng == nil)
	}
}

// readLocked reads the lines after the follower's offset with package
// history's reader. With emit, each change of the head's document becomes
// live events; without, it only brings the follower's reading up to date
// (the engine has published those changes, or nobody needs them).
func (c *conversation) readLocked(emit bool) {
	start := c.sc.Offset()
	c.noteEmptyLocked(start)
	defer c.settleReplaceLocked()
	for rec, err := range c.sc.Records(io.NewSectionReader(c.f, start, 1<<62)) {
		if err != nil {
			// No valid header yet (a log being created): read it again at
			// the next poll.
			c.sc, c.fi = nil, nil
			break
		}
		c.applyRecordLocked(rec, emit)
	}
	c.synced = true
}

// applyRecordLocked turns one record's change of the head's document into
// live events.
func (c *conversation) applyRecordLocked(rec history.Record, emit bool) {
	ch := rec.Change
	wasEmpty := c.emptyOf == c.sc && c.sc != nil
	switch ch.Kind {
	case history.Replaced:
		doc := c.sc.Document()
		head := c.sc.Head()
		if wasEmpty && len(doc) > 0 {
			c.emptyOf = nil
		}
		if emit && c.deferReplaceLocked(wasEmpty, head, rec.End) {
			break // replica_live.go
		}
		c.lastID = lastOf(doc)
		if emit {
			c.replaceLocked()
			if head != c.head {
				c.head = head
				c.seq++
				c.broadcastLocked(eventFrame{Op: OpHead, Head: head})
			}
		}
		c.head = head
	case history.Appended, history.Opened:
		open := ch.Kind == history.Opened
		if len(ch.Entries) > 0 {
			c.emptyOf = nil
		}
		if c.replacing {
			emit = false // the document is settled at the end of the read
		}
		for _, e := range ch.Entries {
			if c.remoteRecordLocked(e, open, emit, rec.End) {
				continue // streamed messages showed it (replica_live.go)
			}
			if emit {
				op := OpSettle
				if open {
					op = OpUpsert
				}
				var at int64
				if !open {
					at = rec.End
				}
				c.applyLocked(Change{Op: op, Entry: e, After: c.lastID}, at)
			}
			// Whoever published it, it is in the log from here on.
			if l := c.live[e.ID]; l != nil && l.durableAt == 0 && !open {
				l.durableAt = rec.End
			}
			c.lastID = e.ID
		}
	}
}

func lastOf(es []transcript.Entry) string {
	if len(es) == 0 {
		return ""
	}
	return es[len(es)-1].ID
}
