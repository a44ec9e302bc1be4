package history

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
)

// Index is a log's page index as of one commit, open for reading. It is
// safe for concurrent use.
type Index struct {
	f   *os.File // the index file, holding at least end bytes; nil when held in memory
	mem []byte   // the index when it could not be written, else nil
	end int64    // the file's size at this commit
	st  *ixState
	pos int64 // where st's frame is
	// path and log are the log and the caller's handle on it, from which
	// a damaged index is rebuilt.
	path string
	log  io.ReaderAt

	mu   sync.Mutex
	data []byte // the whole file up to end, once read whole
}

// LogSize is how many bytes of the log the index describes.
func (ix *Index) LogSize() int64 { return ix.st.logSize }

// Head is the log's current branch at the index's commit.
func (ix *Index) Head() string { return ix.st.head }

// RewriteOf names the log file this one replaced when a rewrite
// (compaction, upgrade) made it: its inode and size, at which it held the
// same documents as this log at its size at (before anything was appended).
// ok is false for a log no rewrite made, or whose index was since rebuilt.
// It reads the index's commits back to its first.
func (ix *Index) RewriteOf() (ino uint64, size, at int64, ok bool) {
	st := ix.st
	for i := 0; st.prev > 0 && i < 1<<16; i++ {
		prev, err := readState(ix.frames(), st.prev)
		if err != nil || prev.logSize > st.logSize {
			return 0, 0, 0, false
		}
		st = prev
	}
	if st.prev > 0 || st.rewriteSize <= 0 {
		return 0, 0, 0, false
	}
	return st.rewriteIno, st.rewriteSize, st.logSize, true
}

// Close closes the index file.
func (ix *Index) Close() error {
	if ix.f == nil {
		return nil
	}
	return ix.f.Close()
}

// Document returns branch's document as of the index's commit: settled
// entries (read from the index file on demand) and the provisional tail.
func (ix *Index) Document(branch string) (*IndexDoc, error) {
	br := ix.st.branch(branch)
	if br == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownBranch, branch)
	}
	if br.uiLines == 0 && br.msgs > 0 {
		return nil, fmt.Errorf("%w: branch %q", ErrNotPaged, branch)
	}
	return &IndexDoc{ix: ix, br: br, cursor: br.last, from: br.count}, nil
}

// reset starts reading the branch afresh from a recovered index.
func (d *IndexDoc) reset() error {
	br := d.ix.st.branch(d.br.info.ID)
	if br == nil || br.count+len(br.tail) != d.Len() {
		return fmt.Errorf("%w: the rebuilt index disagrees", ErrIndexDamaged)
	}
	*d = IndexDoc{ix: d.ix, br: br, cursor: br.last, from: br.count}
	return nil
}

// IndexDoc is one branch's document in a page index: Len refs, read from
// the end backwards as they are asked for.
type IndexDoc struct {
	ix     *Index
	br     *ixBranch
	cursor link  // the run before the loaded ones
	from   int   // loaded refs are [from, count) of the settled ones
	loaded []Ref // settled refs from..count
	ids    map[string]int32
	// hit is the entries frame the ID table last found an entry in, and
	// that entry's ordinal: Refs reads the refs up to it backwards from
	// there, without the chain from the end.
	hit     entriesFrame
	hitOrd  int
	hitOK   bool
	hitAt   link     // where the hit frame is (take unused)
	hitFrom *idTable // the table that found it
}

// Len is the number of entries, the provisional tail included.
func (d *IndexDoc) Len() int { return d.br.count + len(d.br.tail) }

// Coverage is the document's compaction entries, resolved to turns.
func (d *IndexDoc) Coverage() []Cov {
	return append(slices.Clip(d.br.cov), d.br.tailCov...)
}

// Refs returns entries lo..hi (hi exclusive) of the document. Reading
// backwards from the end costs the frames read, and the refs read are
// kept for the next read. A read far before what is kept reads forwards
// through a cursor (Forward): the heads of the frames from the end back to
// lo, then the frames of lo..hi, never the whole index file, and keeps
// nothing; unless Find last found an entry through the ID table: then it
// costs the frames from that entry's back to lo and, past it, forwards to
// hi (near).
func (d *IndexDoc) Refs(lo, hi int) ([]Ref, error) {
	n := d.br.count
	if lo < 0 || hi > d.Len() || lo > hi {
		return nil, fmt.Errorf("history: index refs %d..%d of %d", lo, hi, d.Len())
	}
	if d.hitOK && hi <= d.from && lo < hi {
		out, err := d.near(lo, hi)
		if out != nil || err != nil && !errors.Is(err, ErrIndexDamaged) {
			return out, err
		}
		// A damaged frame, or frames the hit cannot reach: the chain from
		// the end reaches them too (and rebuilds a damaged index).
		d.hitOK = err == nil
	}
	if lo < n && d.from-lo > farBack {
		out, err := d.far(lo, hi)
		if errors.Is(err, ErrIndexDamaged) {
			if err = d.ix.recover(err); err == nil {
				if err = d.reset(); err == nil {
					out, err = d.far(lo, hi)
				}
			}
		}
		return out, err
	}
	if lo < n {
		err := d.load(lo)
		if errors.Is(err, ErrIndexDamaged) {
			// Never page from a damaged index: rebuild it from the log
			// and read again.
			if err = d.ix.recover(err); err == nil {
				if err = d.reset(); err == nil {
					err = d.load(lo)
				}
			}
		}
		if err != nil {
			return nil, err
		}
	}
	out := make([]Ref, 0, hi-lo)
	if lo < n {
		out = append(out, d.loaded[lo-d.from:min(hi, n)-d.from]...)
	}
	if hi > n {
		out = append(out, d.br.tail[max(lo, n)-n:hi-n]...)
	}
	return out, nil
}

// farBack is how far before the kept refs a read goes through a cursor
// instead of reading the frames back to it and keeping them.
const farBack = 4096

// far reads refs lo..hi through a cursor at lo.
func (d *IndexDoc) far(lo, hi int) ([]Ref, error) {
	c, err := d.Forward(lo)
	if err != nil {
		return nil, err
	}
	out, err := c.Next(hi - lo)
	if err != nil {
		return nil, err
	}
	if len(out) != hi-lo {
		return nil, fmt.Errorf("%w: a cursor read %d of %d entries", ErrIndexDamaged, len(out), hi-lo)
	}
	return out, nil
}

// load reads settled refs back to lo.
func (d *IndexDoc) load(lo int) error {
	if lo >= d.from {
		return nil
	}
	src := d.ix.frames()
	var runs [][]Ref
	next := d.from
	for next > lo {
		ord, refs, prev, err := readRun(src, d.cursor)
		if err != nil {
			return err
		}
		if ord+len(refs) != next {
			return fmt.Errorf("%w: a run does not continue the one after it", ErrIndexDamaged)
		}
		runs = append(runs, refs)
		next, d.cursor = ord, prev
		if next > 0 && d.cursor.pos == 0 || next == 0 && d.cursor.pos != 0 {
			return fmt.Errorf("%w: a chain ends before its first entry", ErrIndexDamaged)
		}
	}
	loaded := make([]Ref, 0, d.br.count-next)
	for i := len(runs) - 1; i >= 0; i-- {
		loaded = append(loaded, runs[i]...)
	}
	if len(d.loaded) == 0 && len(loaded) > 0 && loaded[len(loaded)-1] != d.br.lastRef {
		return fmt.Errorf("%w: the last entry is not the one the state names", ErrIndexDamaged)
	}
	loaded = append(loaded, d.loaded...)
	// The turns of what was read must follow the rule, into what was
	// loaded before.
	if err := checkTurnsFrom(loaded, next); err != nil {
		return err
	}
	d.loaded, d.from = loaded, next
	return nil
}

// near reads settled refs lo..hi around the hit: backwards from its frame
// up to it, forwards from there past it. It returns nil refs when the
// frames after the hit cannot be told apart from other branches' there.
func (d *IndexDoc) near(lo, hi int) ([]Ref, error) {
	if hi <= d.hitOrd+1 {
		return d.back(lo, hi)
	}
	var out []Ref
	from := max(lo, d.hit.ordinal)
	if lo < from {
		b, err := d.back(lo, from)
		if err != nil {
			return nil, err
		}
		out = b
	}
	a, err := d.ahead(from, hi)
	if err != nil || a == nil {
		return nil, err
	}
	out = append(out, a...)
	if err := checkTurnsFrom(out, lo); err != nil {
		return nil, err
	}
	return out, nil
}

// ahead reads settled refs lo..hi (lo at or past the hit frame's first)
// forwards from the hit frame. The index links frames only backwards, so
// it scans the file after each of main's frames for the next one: the
// entries frame that links to it and that the ID table names for its
// first entry (only main's entries are in the table, each with the frame
// main reads it from). It returns nil refs when that cannot be told: past
// the table's entries, or a frame it cannot read where it expects one.
//
// It first takes, after each frame, the first entries frame that links to
// it, and asks the ID table about the last frame only: a frame has one
// predecessor, so when main reads the last one, main's chain back from it
// is the frames taken. Asking about every frame cost a random read of the
// table each, hundreds of disk reads when the page cache does not hold the
// index (an open at a hit deep in a cold 300,000-message log cost nine
// times an open at its end). Only when the last frame is not main's (a
// branch or an edit forked there) is the walk made again, asking about
// every frame.
func (d *IndexDoc) ahead(lo, hi int) ([]Ref, error) {
	out, last, err := d.walkAhead(lo, hi, false)
	if err != nil || last.pos == 0 && out != nil {
		return out, err
	}
	if out != nil {
		frames, err := d.hitFrom.lookup(last.id)
		if err != nil {
			return nil, err
		}
		if slices.Contains(frames, last.pos) {
			return out, nil
		}
	}
	out, _, err = d.walkAhead(lo, hi, true)
	return out, err
}

// aheadEnd is the last frame walkAhead took after the hit frame: where it
// is and its first entry's ID (a zero pos when it took none).
type aheadEnd struct {
	pos int64
	id  string
}

// walkAhead is ahead's walk; verify asks the ID table about every frame.
func (d *IndexDoc) walkAhead(lo, hi int, verify bool) ([]Ref, aheadEnd, error) {
	st := d.ix.st
	src := d.ix.forwardFrames()
	cur, at := d.hit, d.hitAt
	var out []Ref
	var last aheadEnd
	for {
		take, succ, succAt := -1, entriesFrame{}, link{}
		if at.pos == d.br.last.pos {
			take = int(d.br.last.take)
		} else {
			var err error
			succ, succAt, err = d.successor(src, at, verify)
			if err != nil || succAt.pos == 0 {
				return nil, last, err
			}
			take = int(succ.prev.take)
		}
		if take == 0 || take > len(cur.refs) {
			return nil, last, fmt.Errorf("%w: a link takes more entries than its frame has", ErrIndexDamaged)
		}
		if a, b := max(lo, cur.ordinal), min(hi, cur.ordinal+take); a < b {
			out = append(out, cur.refs[a-cur.ordinal:b-cur.ordinal]...)
		}
		if cur.ordinal+take >= hi {
			return out, last, nil
		}
		if succAt.pos == 0 || succ.ordinal != cur.ordinal+take || succ.ordinal >= st.tableN() {
			return nil, last, nil
		}
		cur, at = succ, succAt
		last = aheadEnd{pos: succAt.pos, id: succ.refs[0].ID}
	}
}

// successor finds main's entries frame after the one at at, scanning the
// index file forwards from it; a zero link when it is not found. Without
// verify it is the first entries frame that links to at, whoever's.
func (d *IndexDoc) successor(src frameSource, at link, verify bool) (entriesFrame, link, error) {
	for p := at.pos + int64(at.size); p+frameHeadLen <= d.ix.end; {
		hd, err := src(link{pos: p, size: frameHeadLen})
		if err != nil {
			return entriesFrame{}, link{}, err
		}
		if bytes.Equal(hd[:4], trailerMagic) {
			p += trailerLen
			continue
		}
		size := int64(frameHeadLen) + int64(binary.LittleEndian.Uint32(hd)) + 4
		if hd[4] != frameEntries {
			p += size
			continue
		}
		if p+size > d.ix.end {
			return entriesFrame{}, link{}, nil
		}
		f, err := readEntriesFrame(src, p)
		if err != nil {
			return entriesFrame{}, link{}, err
		}
		if f.prev.pos == at.pos && len(f.refs) > 0 && f.ordinal < d.ix.st.tableN() {
			if !verify {
				return f, link{pos: p, size: uint32(size)}, nil
			}
			frames, err := d.hitFrom.lookup(f.refs[0].ID)
			if err != nil {
				return entriesFrame{}, link{}, err
			}
			if slices.Contains(frames, p) {
				return f, link{pos: p, size: uint32(size)}, nil
			}
		}
		p += size
	}
	return entriesFrame{}, link{}, nil
}

// back reads settled refs lo..hi backwards from the frame the ID table
// found an entry in (hi-1 at most that entry), so its cost is the frames
// from there back to lo, however far they are from the end.
func (d *IndexDoc) back(lo, hi int) ([]Ref, error) {
	f := d.hit
	runs := [][]Ref{f.refs[:max(0, hi-f.ordinal)]}
	next, l := f.ordinal, f.prev
	src := d.ix.frames()
	for next > lo {
		ord, refs, prev, err := readRun(src, l)
		if err != nil {
			return nil, err
		}
		if ord+len(refs) != next {
			return nil, fmt.Errorf("%w: a run does not continue the one after it", ErrIndexDamaged)
		}
		runs = append(runs, refs)
		next, l = ord, prev
	}
	out := make([]Ref, 0, hi-next)
	for i := len(runs) - 1; i >= 0; i-- {
		out = append(out, runs[i]...)
	}
	if err := checkTurnsFrom(out, next); err != nil {
		return nil, err
	}
	return out[lo-next : hi-next], nil
}

// Find returns the index of entry id in the document, or -1. On main's
// document with an ID table it reads the entries indexed since the table
// and at most the frames the table points id at; otherwise the first call
// reads the whole document's refs.
func (d *IndexDoc) Find(id string) (int, error) {
	if d.ids == nil {
		if i, ok := d.findByTable(id); ok {
			return i, nil
		}
		refs, err := d.Refs(0, d.Len())
		if err != nil {
			return -1, err
		}
		d.ids = make(map[string]int32, len(refs))
		for i, r := range refs {
			d.ids[r.ID] = int32(i)
		}
	}
	i, ok := d.ids[id]
	if !ok {
		return -1, nil
	}
	return int(i), nil
}

// findByTable is Find through the index's ID table; ok is false when the
// table cannot answer (another branch, no table, a damaged frame).
func (d *IndexDoc) findByTable(id string) (int, bool) {
	st := d.ix.st
	if d.br != st.branches[0] || len(st.tables) == 0 || st.tableN() > d.br.count {
		return -1, false
	}
	// The entries since the table (the provisional tail included).
	// (The index writer adds to the table every tableStep entries, so a
	// current index has fewer since than this, tail included.)
	if d.br.count+len(d.br.tail)-st.tableN() > 2*tableStep {
		return -1, false
	}
	refs, err := d.Refs(st.tableN(), d.Len())
	if err != nil {
		return -1, false
	}
	for i, r := range refs {
		if r.ID == id {
			return st.tableN() + i, true
		}
	}
	var src io.ReaderAt = d.ix.f
	if d.ix.mem != nil {
		src = bytes.NewReader(d.ix.mem)
	}
	t, err := openIDTable(src, d.ix.end, st.tables)
	if err != nil {
		return -1, false
	}
	frames, err := t.lookup(id)
	if err != nil {
		return -1, false
	}
	for _, pos := range frames {
		f, err := readEntriesFrame(d.ix.frames(), pos)
		if err != nil {
			return -1, false
		}
		for j, r := range f.refs {
			if r.ID == id && f.ordinal+j < st.tableN() {
				d.hit, d.hitOrd, d.hitOK, d.hitFrom = f, f.ordinal+j, true, t
				d.hitAt = link{pos: pos, size: f.size}
				return f.ordinal + j, true
			}
		}
	}
	return -1, true
}

// Close closes the index the document was read from.
func (d *IndexDoc) Close() error { return d.ix.Close() }
