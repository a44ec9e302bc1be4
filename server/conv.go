package server

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/server/pager"
	"github.com/foliodev/folio/transcript"
)

// maxLive bounds the changed entries a conversation remembers for
// reconnect checkpoints. A client that missed more gets "replaced".
const maxLive = 10000

// maxLiveBytes bounds the bytes of those entries.
const maxLiveBytes = 32 << 20

// defaultHead is the single head of a linear conversation.
const defaultHead = "main"

// conv is the live state of one conversation: its generation and change
// sequence, the entries changed in this generation, its subscribers, and the
// follower of its log file.
type conv struct {
	srv  *Server
	id   string
	path string

	gen atomic.Int64 // read without mu by token checks

	buildMu sync.Mutex // one capture at a time, so concurrent opens share
	shared  struct {
		snap     *pager.Snapshot
		gen, seq int64
		off      int64
		head     string // another head is another document, whatever the generation
	}

	book commandBook

	mu        sync.Mutex
	seq       int64
	head      string
	subs      map[*conn]struct{}
	live      map[string]*liveEntry
	ring      []ringItem // changes in seq order; stale items are skipped
	forgotten int64      // highest seq dropped from live
	liveBytes int        // bytes of the entries in live
	lastID    string     // the document's last entry, for "after"
	deleted   bool
	control   *controlState // the engine's latest queue, turn and approvals
	followed  string        // the branch the follower applies ("" is main)

	// The follower: the log file and how far it has been read.
	f       *os.File    // open only while followed
	fi      os.FileInfo // the file off and ids describe
	off     int64
	ids     *idSet
	synced  bool // off/ids describe the file
	syncing bool // a capture is doing the first read
	stop    chan struct{}
}

type ringItem struct {
	id  string
	rev int64
}

func newConv(s *Server, id, path string) *conv {
	c := &conv{srv: s, id: id, path: path, head: defaultHead, subs: map[*conn]struct{}{}, live: map[string]*liveEntry{}}
	c.gen.Store(1)
	return c
}

// subscribe adds cn to the followers and starts the file follower with the
// first one.
func (c *conv) subscribe(cn *conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.subs[cn] = struct{}{}
	if c.stop == nil {
		c.stop = make(chan struct{})
		go c.follow(c.stop)
	}
}

func (c *conv) unsubscribe(cn *conn) {
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
func (c *conv) follow(stop chan struct{}) {
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
			if !c.syncing {
				c.pollLocked()
			}
			c.mu.Unlock()
		}
	}
}

// pollLocked reads what was appended to the log since the last poll and
// publishes it. A log that was replaced (renamed over, or shrunk) advances
// the generation.
func (c *conv) pollLocked() {
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
		if c.fi == nil && c.synced && c.off == 0 {
			// The log appeared after a capture saw none: reading it from
			// the start publishes everything in it.
			c.fi = fi
		}
	}
	if c.fi == nil || !os.SameFile(c.fi, fi) || fi.Size() < c.off {
		// First sight of this file, or another file (or a shorter one) took
		// its place: read it whole, quietly.
		wasSynced := c.synced
		c.off, c.ids, c.lastID, c.fi = 0, newIDSet(), "", fi
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
	if fi.Size() > c.off {
		c.readLocked(true)
	}
}

// readLocked reads the complete lines after c.off. With emit, each accepted
// record becomes live events; without, it only brings the follower's state
// up to date.
func (c *conv) readLocked(emit bool) {
	r := io.NewSectionReader(c.f, c.off, 1<<62)
	start := c.off
	first := c.off == 0
	scanLines(r, func(line []byte, end int64) bool {
		c.off = start + end
		ids := c.ids
		if c.fbranch() != history.Main {
			ids = newIDSet() // main's records must not touch the followed branch's IDs
		}
		rec := parseLogLine(line, ids)
		if first {
			first = false
			return rec.typ == "conversation"
		}
		if rec.err != nil {
			return true
		}
		if rec.typ == history.TypeHead {
			c.switchFollowLocked(rec.branch, emit)
			return true
		}
		rec, ok := c.unwrapLocked(rec)
		if !ok || rec.err != nil {
			return true
		}
		switch rec.typ {
		case "ui-transcript":
			c.lastID = ""
			if emit {
				c.replaceLocked()
			}
		case "ui-append":
		default:
			return true
		}
		for _, le := range rec.entries {
			// A superseding snapshot's entries reach clients through the new
			// snapshot they open after "replaced", not as events.
			if emit && rec.typ == "ui-append" {
				c.applyLocked(Change{Op: OpSettle, Entry: le.entry, After: c.lastID}, le.raw, true)
				// The engine may have published it first; either way it is
				// in the log from here on.
				if l := c.live[le.entry.ID]; l != nil && l.durableAt == 0 {
					l.durableAt = c.off
				}
			}
			c.lastID = le.entry.ID
		}
		return true
	})
	c.synced = true
}

// replaceLocked starts a new generation: the document was replaced.
func (c *conv) replaceLocked() {
	g := c.gen.Add(1)
	c.seq = 0
	c.live = map[string]*liveEntry{}
	c.ring = nil
	c.forgotten = 0
	c.liveBytes = 0
	c.broadcastLocked(eventFrame{Op: OpReplaced, Generation: g})
}

// applyLocked publishes one change. raw, when set, is the entry's stored
// bytes. fromLog marks entries read from the log: they are settled facts.
func (c *conv) applyLocked(ch Change, raw []byte, fromLog bool) error {
	switch ch.Op {
	case OpUpsert, OpSettle:
		open := ch.Op == OpUpsert
		prev := c.live[ch.Entry.ID]
		if prev == nil && fromLog && c.ids != nil && c.synced && ch.After == "" {
			ch.After = c.lastID
		}
		e, changed := reconcile(prev, ch.Entry, open)
		if !changed {
			return nil
		}
		if prev != nil || e.ID != ch.Entry.ID || raw == nil || !sameEntry(e, ch.Entry) {
			b, err := transcript.EncodeEntry(e)
			if err != nil {
				return err
			}
			raw = b
		}
		op := OpUpsert
		if prev != nil && prev.open && !open {
			op = OpSettle
		}
		after := ch.After
		if prev != nil {
			after = prev.after
		}
		c.seq++
		le := &liveEntry{entry: e, raw: raw, rev: c.seq, open: open, after: after}
		if fromLog {
			le.durableAt = c.off
		}
		if prev != nil {
			le.pres = prev.pres
			if !open && le.pres != nil && le.pres.ephemeral {
				le.pres = nil // an ephemeral value ends with its invocation
			}
			c.liveBytes -= len(prev.raw)
		}
		c.live[e.ID] = le
		c.liveBytes += len(raw)
		c.remember(e.ID)
		if prev == nil && !fromLog {
			c.lastID = e.ID
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
		c.controlLocked().Queue = q
		c.broadcastLocked(eventFrame{Op: OpQueue, Items: q})
	case OpTurn:
		if ch.Turn == nil {
			return fmt.Errorf("turn change without a turn state")
		}
		c.seq++
		t := *ch.Turn
		c.controlLocked().Turn = &t
		c.broadcastLocked(eventFrame{Op: OpTurn, State: t.State, TurnID: t.Turn, Reply: t.Reply})
	case OpApprovals:
		c.seq++
		a := ch.Approvals
		if a == nil {
			a = []ApprovalItem{}
		}
		c.controlLocked().Approvals = a
		c.broadcastLocked(eventFrame{Op: OpApprovals, Approvals: a})
	case OpReceipt:
		if ch.Receipt == nil {
			return fmt.Errorf("receipt change without a receipt")
		}
		c.book.update(*ch.Receipt)
		c.seq++
		c.broadcastLocked(eventFrame{Op: OpReceipt, Receipt: ch.Receipt})
	default:
		return fmt.Errorf("unknown change op %q", ch.Op)
	}
	return nil
}

func sameEntry(a, b transcript.Entry) bool {
	return transcript.FingerprintOf(a) == transcript.FingerprintOf(b)
}

// remember records a change in the ring and forgets the oldest settled
// entries past maxLive.
func (c *conv) remember(id string) {
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
	InvocationID string                   `json:"invocationId,omitzero"`
	Presentation *transcript.Presentation `json:"presentation,omitzero"`
	Head         string                   `json:"head,omitzero"`
	Items        []QueueItem              `json:"items,omitzero"`
	State        string                   `json:"state,omitzero"`
	TurnID       string                   `json:"turn,omitzero"`
	Reply        string                   `json:"reply,omitzero"`
	Approvals    []ApprovalItem           `json:"approvals,omitzero"`
	Receipt      *Receipt                 `json:"receipt,omitzero"`
}

// controlLocked returns the conversation's control state, making it.
func (c *conv) controlLocked() *controlState {
	if c.control == nil {
		c.control = &controlState{Queue: []QueueItem{}, Approvals: []ApprovalItem{}}
	}
	return c.control
}

// controlCopyLocked returns a copy of the control state, or nil when no
// engine ever reported one.
func (c *conv) controlCopyLocked() *controlState {
	if c.control == nil {
		return nil
	}
	cs := *c.control
	return &cs
}

func (c *conv) broadcastLocked(ev eventFrame) {
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

// Since is what a reconnecting client last applied.
type Since struct {
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
func (c *conv) checkpointLocked(since *Since, snapSeq, snapOff int64) *checkpoint {
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

// errHeadNotFound is returned by capture for a head that is not selected.
var errHeadNotFound = errors.New("no such head")

// captured is a snapshot and what it reflects.
type captured struct {
	snap       *pager.Snapshot
	gen, seq   int64
	head       string
	checkpoint *checkpoint
	control    *controlState
}

// capture builds (or shares) a snapshot of the selected branch. The log is
// read once, in one pass; the first capture of a followed conversation also
// brings the follower up to date with that same pass.
func (c *conv) capture(head string, since *Since, opts ...pager.Option) (captured, error) {
	c.buildMu.Lock()
	defer c.buildMu.Unlock()

	c.mu.Lock()
	explicit := head != ""
	if head == "" {
		head = c.head
	}
	// Before the first read c.head is only a guess (a log's head record
	// may name another branch): the read below checks it then.
	if head != c.head && c.synced {
		c.mu.Unlock()
		return captured{}, fmt.Errorf("%w: %q (selected: %q)", errHeadNotFound, head, c.head)
	}
	if c.synced {
		c.pollLocked()
	}
	first := !c.synced
	gen, seq, off := c.gen.Load(), c.seq, c.off
	// A snapshot captured earlier in this generation serves a later open
	// too: the checkpoint carries what changed since it was captured.
	if !first && c.shared.snap != nil && c.shared.gen == gen && c.shared.head == head && c.shared.seq >= c.forgotten && len(opts) == 0 && c.shared.snap.TryRetain() {
		cp := c.checkpointLocked(since, c.shared.seq, c.shared.off)
		snapSeq := c.shared.seq
		snap := c.shared.snap
		control := c.controlCopyLocked()
		c.mu.Unlock()
		return captured{snap: snap, gen: gen, seq: snapSeq, head: head, checkpoint: cp, control: control}, nil
	}
	if first {
		c.syncing = true
	}
	c.mu.Unlock()

	f, err := os.Open(c.path)
	var size int64
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f = nil
	case err != nil:
		c.endSync(first)
		return captured{}, err
	default:
		defer func() {
			if f != nil {
				f.Close()
			}
		}()
		if first {
			fi, err := f.Stat()
			if err != nil {
				c.endSync(first)
				return captured{}, err
			}
			size = fi.Size()
		} else {
			size = off
		}
	}
	ids := newIDSet()
	var scan logScan
	var items = emptyItems
	if f != nil {
		items = logItems(io.NewSectionReader(f, 0, size), ids, &scan)
	}
	snap, err := pager.Build(c.srv.snapDir, items, opts...)
	logHead := "" // set when the log has branches: then it, not c.head, says which is selected
	if errors.Is(err, errBranched) {
		// A branched log is read whole; the capture is its head.
		ids, scan = newIDSet(), logScan{}
		items, logHead, err = branchedItems(f, size, ids, &scan)
		if err == nil {
			snap, err = pager.Build(c.srv.snapDir, items, opts...)
		}
	}
	if err != nil {
		c.endSync(first)
		return captured{}, err
	}
	if logHead != "" {
		if explicit && head != logHead {
			snap.Release()
			c.endSync(first)
			return captured{}, fmt.Errorf("%w: %q (selected: %q)", errHeadNotFound, head, logHead)
		}
		head = logHead
	}

	c.mu.Lock()
	if first {
		c.syncing = false
		if !c.synced {
			if c.f != nil {
				c.f.Close()
			}
			c.fi = nil
			if f != nil {
				c.fi, _ = f.Stat()
			}
			c.f, f = f, nil // the follower keeps the handle (nil: no log yet)
			c.off, c.ids, c.lastID, c.synced = scan.consumed, ids, scan.lastID, true
			if logHead != "" {
				c.followed, c.head = logHead, logHead
			}
		}
	}
	// Entries the engine published that this read found in the log.
	for id, le := range c.live {
		if le.durableAt == 0 && ids.has(id) {
			le.durableAt = scan.consumed
		}
	}
	// gen and seq stay what they were when the read began: if the document
	// was replaced meanwhile, the token is stale at once and the client
	// already has the "replaced" event.
	cp := c.checkpointLocked(since, seq, scan.consumed)
	c.shared.snap, c.shared.gen, c.shared.seq, c.shared.off, c.shared.head = snap, gen, seq, scan.consumed, head
	control := c.controlCopyLocked()
	c.mu.Unlock()
	return captured{snap: snap, gen: gen, seq: seq, head: head, checkpoint: cp, control: control}, nil
}

func (c *conv) endSync(first bool) {
	if first {
		c.mu.Lock()
		c.syncing = false
		c.mu.Unlock()
	}
}

func emptyItems(func(pager.Item, error) bool) {}
