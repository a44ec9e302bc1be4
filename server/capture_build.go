package server

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/server/pager"
	"github.com/foliodev/folio/transcript"
)

// This file captures a snapshot of a conversation's selected branch for an
// open, sharing one capture between concurrent opens (capture.go reads the
// log for it).

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
func (c *conversation) capture(head string, since *sinceMark, opts ...pager.Option) (captured, error) {
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
func (c *conversation) build(head string, since *sinceMark, opts []pager.Option) (captured, error) {
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
			control := c.stateLocked()
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
	control := c.stateLocked()
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
