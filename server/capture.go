package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/server/pager"
	"github.com/foliodev/folio/transcript"
)

// Opening a conversation through its page index. A capture costs the
// index's last commit (extended by whatever the log gained since it was
// written) and the page reads; the log is read whole only where the index
// cannot describe it: a version 2 log, or a document derived from model
// messages, whose entries have no stored JSON to page (see snapshotFull).

// errNoIndex says a capture must be read whole: the log has no usable
// page index.
var errNoIndex = errors.New("no page index for this log")

// firstOpen makes the follower's reading of the log the page index's, at
// the offset it describes, without reading the log: the follower resumes a
// history.Scanner from the index when the log first grows past it
// (resumeLocked). A log the index cannot describe is read whole.
func (c *conversation) firstOpen() error {
	f, err := os.Open(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		return c.firstRead()
	}
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	ix, err := history.OpenIndex(c.path, f, fi.Size())
	if err != nil {
		f.Close()
		return c.firstRead()
	}
	defer ix.Close()
	head := ix.Head()
	doc, err := ix.Document(head)
	if err != nil {
		f.Close()
		return c.firstRead()
	}
	lastID := ""
	if n := doc.Len(); n > 0 {
		refs, err := doc.Refs(n-1, n)
		if err != nil {
			f.Close()
			return c.firstRead()
		}
		lastID = refs[0].ID
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.takeFirstReadingLocked(f, fi, nil, ix.LogSize(), head, lastID) {
		return nil
	}
	// Entries the engine published that the log already holds.
	for id, le := range c.live {
		if le.durableAt == 0 && !le.open {
			if i, err := doc.Find(id); err == nil && i >= 0 {
				le.durableAt = ix.LogSize()
			}
		}
	}
	return nil
}

// resumeLocked is the first step of a poll while the follower's reading is
// still the page index's: it reports true when the log did not change, so
// there is nothing to read; else it resumes a Scanner at the index's offset
// (or, when the file was replaced or the index is gone, leaves the follower
// to read the log whole).
func (c *conversation) resumeLocked(fi os.FileInfo) bool {
	if c.resumeAt == 0 || c.sc != nil {
		return false
	}
	if c.fi != nil && c.f != nil && os.SameFile(c.fi, fi) {
		if fi.Size() == c.resumeAt {
			return true
		}
		if fi.Size() > c.resumeAt {
			if sc, err := history.ResumeScanner(c.path, c.f, c.resumeAt); err == nil {
				c.sc, c.resumeAt = sc, 0
				return false
			}
		}
	}
	c.resumeAt = 0
	return false
}

// snapshotIndexed captures the log's head document as of log offset off
// from the log's page index, as the follower reads it there (capture has
// checked the head against the follower's): the snapshot is the log file,
// opened again, and the index's document; nothing is copied. fi is the
// file the follower read, which the snapshot must be.
func (c *conversation) snapshotIndexed(off int64, fi os.FileInfo) (*pager.Snapshot, error) {
	if off == 0 || fi == nil {
		return nil, errNoIndex
	}
	f, err := os.Open(c.path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoIndex, err)
	}
	if now, err := f.Stat(); err != nil || !os.SameFile(now, fi) {
		f.Close()
		return nil, fmt.Errorf("%w: the log was replaced", errNoIndex)
	}
	ix, err := history.OpenIndex(c.path, f, off)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %v", errNoIndex, err)
	}
	doc, err := ix.Document(ix.Head())
	if err != nil {
		ix.Close()
		f.Close()
		return nil, fmt.Errorf("%w: %v", errNoIndex, err)
	}
	return pager.FromLog(f, doc)
}

// snapshotFull is the capture of a log without a usable index: the
// follower's document as it stands, encoded into a temporary file
// (pager.Build). It returns what the snapshot reflects, read with it. A
// follower that started from the index holds only IDs; then the log was
// replaced under the first attempt, and the capture tries the index again
// at what the follower reads now.
func (c *conversation) snapshotFull(head string, opts []pager.Option) (*pager.Snapshot, int64, int64, int64, error) {
	c.mu.Lock()
	c.pollLocked()
	if head != c.head {
		cur := c.head
		c.mu.Unlock()
		return nil, 0, 0, 0, fmt.Errorf("%w: %q (selected: %q)", errHeadNotFound, head, cur)
	}
	gen, seq, off, fi := c.gen.Load(), c.seq, c.off(), c.fi
	idsOnly := c.sc == nil && c.resumeAt > 0
	var entries []transcript.Entry
	switch {
	case c.sc != nil && c.sc.Partial():
		idsOnly = true // it holds only the end of the document
	case c.sc != nil:
		entries = c.sc.Document()
		if c.sc.Resumed() {
			idsOnly = slices.ContainsFunc(entries, func(e transcript.Entry) bool { return e.Content == nil })
		}
	}
	c.mu.Unlock()
	if idsOnly {
		snap, err := c.snapshotIndexed(off, fi)
		return snap, gen, seq, off, err
	}
	snap, err := pager.Build(c.srv.snapDir, entryItems(entries), opts...)
	return snap, gen, seq, off, err
}

// rewrittenLocked carries the follower over a rewrite of the log
// (compaction, upgrade): when the file that replaced the one it read says,
// in its page index, that it held the same documents the old file held at
// exactly the follower's offset, the follower continues with the new file
// from there (resumeLocked reads what was appended since) and nothing is
// replaced: the generation, and so every token, stays valid, and open
// snapshots keep reading the old file. It always reports false, so the
// poll goes on.
func (c *conversation) rewrittenLocked(fi os.FileInfo) bool {
	if !c.synced || c.fi == nil || c.f == nil || os.SameFile(c.fi, fi) {
		return false
	}
	f, err := os.Open(c.path)
	if err != nil {
		return false
	}
	nfi, err := f.Stat()
	if err != nil {
		f.Close()
		return false
	}
	ix, err := history.OpenIndex(c.path, f, nfi.Size())
	if err != nil {
		f.Close()
		return false
	}
	defer ix.Close()
	ino, size, at, ok := ix.RewriteOf()
	if !ok || ino != history.Inode(c.fi) || size != c.off() {
		f.Close()
		return false
	}
	// The new file at its first commit is the old one at the follower's
	// offset; what was appended after that is read as usual.
	c.f.Close()
	c.f, c.fi, c.sc, c.resumeAt = f, nfi, nil, at
	return false
}
