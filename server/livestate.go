package server

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/server/pager"
	"github.com/foliodev/folio/transcript"
)

// This file is a conversation's live side: its subscribers, the follower
// of its log, the live events and the checkpoints a reconnect gets, and
// captures (with capture.go). Everything here runs under the
// conversation's mutex, except a capture's reads of the log.

// maxLive bounds the changed entries a conversation remembers for
// reconnect checkpoints. A client that missed more gets "replaced".
const maxLive = 10000

// maxLiveBytes bounds the bytes of those entries.
const maxLiveBytes = 32 << 20

// defaultHead is the single head of a linear conversation.
const defaultHead = "main"

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
			if !c.firstReadingLocked() {
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
	c.eng = eng
}

// releaseLocked hands live changes back to the follower once the engine
// has closed the log: what the engine wrote (and published) is read
// quietly, so the follower publishes only what comes after it.
func (c *conversation) releaseLocked() {
	if c.synced {
		c.pollLocked()
	}
	c.eng = nil
}

// firstReadingLocked reports whether a capture is reading the log for the
// first time (capture): the follower waits for that reading rather than
// read the whole log beside it.
func (c *conversation) firstReadingLocked() bool {
	return c.building != nil && !c.synced
}

// off is how far the follower has read the log.
func (c *conversation) off() int64 {
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
	switch ch.Kind {
	case history.Replaced:
		c.lastID = lastOf(c.sc.Document())
		head := c.sc.Head()
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
		for _, e := range ch.Entries {
			if c.remoteRecordLocked(e, open, emit) {
				c.lastID = e.ID
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
		c.broadcastLocked(eventFrame{Op: OpQueue, Items: q})
	case OpTurn:
		if ch.Turn == nil {
			return fmt.Errorf("turn change without a turn state")
		}
		c.seq++
		t := *ch.Turn
		c.broadcastLocked(eventFrame{Op: OpTurn, State: t.State, TurnID: t.Turn, Reply: t.Reply})
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
	State        string                   `json:"state,omitzero"`
	TurnID       string                   `json:"turn,omitzero"`
	Reply        string                   `json:"reply,omitzero"`
	Approvals    []ApprovalItem           `json:"approvals,omitzero"`
	Receipt      *Receipt                 `json:"receipt,omitzero"`
}

// controlLocked is the conversation's queue, turn and approvals, read from
// the store of the engine that holds it, as the terminal reads them; idle
// and empty while no engine of this server does.
func (c *conversation) controlLocked() *controlState {
	if c.eng == nil {
		return &controlState{Turn: &TurnState{State: TurnIdle}, Queue: []QueueItem{}, Approvals: []ApprovalItem{}}
	}
	cs := controlOf(c.eng.Store().Snapshot().Live)
	return &cs
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
func (c *feed) checkpointLocked(since *Since, snapSeq, snapOff int64) *checkpoint {
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

// capture builds (or shares) a snapshot of the selected branch. The
// follower's reader of the log is the source: its head's document as of
// the offset it read to is what the snapshot pages, so a capture shows
// exactly what package history reads. The first capture does that first
// read without holding the conversation's lock.
func (c *conversation) capture(head string, since *Since, opts ...pager.Option) (captured, error) {
	// One capture at a time: a later one waits for the one in progress and
	// then shares what it left (shared), when that still fits.
	c.mu.Lock()
	for c.building != nil {
		wait := c.building
		c.mu.Unlock()
		<-wait
		c.mu.Lock()
	}
	built := make(chan struct{})
	c.building = built
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.building = nil
		c.mu.Unlock()
		close(built)
	}()
	return c.build(head, since, opts)
}

// build is capture's work; only the capture in progress runs it.
func (c *conversation) build(head string, since *Since, opts []pager.Option) (captured, error) {
	c.mu.Lock()
	explicit := head != ""
	if head == "" {
		head = c.head
	}
	if !c.synced {
		c.mu.Unlock()
		err := c.firstOpen()
		c.mu.Lock()
		if err != nil {
			c.mu.Unlock()
			return captured{}, err
		}
		if !explicit {
			head = c.head
		}
	}
	c.pollLocked()
	if head != c.head {
		cur := c.head
		c.mu.Unlock()
		return captured{}, fmt.Errorf("%w: %q (selected: %q)", errHeadNotFound, head, cur)
	}
	gen, seq, off := c.gen.Load(), c.seq, c.off()
	// A snapshot captured earlier in this generation serves a later open
	// too: the checkpoint carries what changed since it was captured.
	if c.shared.snap != nil && c.shared.gen == gen && c.shared.head == head && c.shared.seq >= c.forgotten && len(opts) == 0 && c.shared.snap.TryRetain() {
		cp := c.checkpointLocked(since, c.shared.seq, c.shared.off)
		if cp.size() <= maxCheckpoint {
			snapSeq := c.shared.seq
			snap := c.shared.snap
			control := c.controlLocked()
			c.mu.Unlock()
			return captured{snap: snap, gen: gen, seq: snapSeq, head: head, checkpoint: cp, control: control}, nil
		}
		// Too much changed since that capture for one frame: capture anew,
		// so the changes travel in pages.
		c.shared.snap.Release()
	}
	fi := c.fi
	c.mu.Unlock()

	snap, err := c.snapshotIndexed(off, fi)
	if errors.Is(err, errNoIndex) {
		snap, gen, seq, off, err = c.snapshotFull(head, opts)
	}
	if err != nil {
		return captured{}, err
	}

	c.mu.Lock()
	// gen and seq stay what they were when the read ended: if the document
	// was replaced meanwhile, the token is stale at once and the client
	// already has the "replaced" event.
	cp := c.checkpointLocked(since, seq, off)
	if cp.size() > maxCheckpoint {
		// A reconnecting tab missed more than one frame holds: it rebuilds
		// from this snapshot's pages, which hold all but what is open or
		// not yet in the log.
		cp = c.checkpointLocked(nil, seq, off)
		cp.Replaced = true
	}
	c.shared.snap, c.shared.gen, c.shared.seq, c.shared.off, c.shared.head = snap, gen, seq, off, head
	control := c.controlLocked()
	c.mu.Unlock()
	return captured{snap: snap, gen: gen, seq: seq, head: head, checkpoint: cp, control: control}, nil
}

// firstRead reads the log whole, without the conversation's lock, and
// makes that reading the follower's.
func (c *conversation) firstRead() error {
	f, err := os.Open(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		c.mu.Lock()
		c.synced = true
		c.mu.Unlock()
		return nil
	}
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	sc := history.NewScanner()
	for _, err := range sc.Records(io.NewSectionReader(f, 0, fi.Size())) {
		if err != nil {
			f.Close()
			return err
		}
	}
	if sc.Offset() == 0 {
		f.Close()
		return fmt.Errorf("%w: the log is empty", history.ErrNoHeader)
	}
	doc := sc.Document()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.takeFirstReadingLocked(f, fi, sc, 0, sc.Head(), lastOf(doc)) {
		return nil
	}
	// Entries the engine published that this read found in the log.
	for _, e := range doc {
		if le := c.live[e.ID]; le != nil && le.durableAt == 0 && !le.open {
			le.durableAt = sc.Offset()
		}
	}
	return nil
}

// takeFirstReadingLocked makes a first reading of the log the follower's:
// f is the open log, fi the file read, and either sc the Scanner that read
// it or resumeAt the offset the page index describes (firstOpen). It
// reports false, closing f, when a poll got there first.
func (c *conversation) takeFirstReadingLocked(f *os.File, fi os.FileInfo, sc *history.Scanner, resumeAt int64, head, lastID string) bool {
	if c.synced {
		f.Close()
		return false
	}
	if c.f != nil {
		c.f.Close()
	}
	c.f, c.fi, c.sc, c.resumeAt, c.synced = f, fi, sc, resumeAt, true
	c.head, c.lastID = head, lastID
	return true
}

// entryItems yields a document's entries as pager items, in the canonical
// encoding package transcript writes.
func entryItems(entries []transcript.Entry) iter.Seq2[pager.Item, error] {
	return func(yield func(pager.Item, error) bool) {
		for _, e := range entries {
			raw, err := transcript.EncodeEntry(e)
			if err != nil {
				yield(pager.Item{}, fmt.Errorf("entry %q: %w", e.ID, err))
				return
			}
			it := pager.Item{ID: e.ID, Kind: e.Content.Kind(), Raw: raw}
			if cp, ok := e.Content.(transcript.Compaction); ok {
				cov := cp.Covers
				it.Covers = &cov
			}
			if !yield(it, nil) {
				return
			}
		}
	}
}
