package history

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/foliodev/folio/transcript"
)

// RefCursor reads a document's refs forwards, a frame at a time, from an
// entry on to its end (the provisional tail included). The index links
// frames only backwards, so the cursor keeps a checkpoint every
// cursorStride frames back from the end and walks back from the next
// checkpoint to find the frames before it: it holds a few bytes per
// cursorStride frames and never the refs, and reads each frame's head
// twice. folio log show prints a whole conversation with one in constant
// memory.
type RefCursor struct {
	d     *IndexDoc
	marks []mark      // checkpoints ahead, last first: marks[len-1] is the next
	bound int         // the runs before the next checkpoint end after bound
	seg   []mark      // the runs ahead up to the next checkpoint, last first
	next  int         // the ordinal Next returns first
	buf   []Ref       // refs of the current run from next on
	prev  Ref         // the ref before next, for the turn rule
	has   bool        // prev is set
	heads blockReader // the walks back
	runs  blockReader // the runs read forwards
}

// mark is a run: the link to it and the ordinal after its last entry.
type mark struct {
	l   link
	end int
}

// cursorStride is how many runs apart a cursor's checkpoints are.
const cursorStride = 512

// Forward returns a cursor at entry lo of d. It reads the heads of the
// frames from the end back to lo (a few bytes of each), not their refs.
func (d *IndexDoc) Forward(lo int) (*RefCursor, error) {
	if lo < 0 || lo > d.Len() {
		return nil, fmt.Errorf("history: index cursor at %d of %d", lo, d.Len())
	}
	c := &RefCursor{d: d, next: lo, bound: lo}
	if lo >= d.br.count {
		return c, nil
	}
	err := c.markTo(lo)
	if errors.Is(err, ErrIndexDamaged) {
		// Never page from a damaged index: rebuild it from the log and
		// read again.
		if err = d.ix.recover(err); err == nil {
			if err = d.reset(); err == nil {
				err = c.markTo(lo)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// runHeadLen is how much of an entries frame says where its run is: the
// frame's head, the link before it, its first ordinal and its size.
const runHeadLen = frameHeadLen + 16 + 4 + 4

// markTo sets a checkpoint every cursorStride runs from the last back to
// the one holding lo.
func (c *RefCursor) markTo(lo int) error {
	c.marks = c.marks[:0]
	i := 0
	return c.walkBack(mark{c.d.br.last, c.d.br.count}, lo, func(m mark) {
		if i%cursorStride == 0 {
			c.marks = append(c.marks, m)
		}
		i++
	})
}

// walkBack visits the runs from m back, as long as they end after bound,
// reading and checking only their frames' heads.
func (c *RefCursor) walkBack(m mark, bound int, visit func(mark)) error {
	src := c.heads.frames(c.d.ix, false)
	l, next := m.l, m.end
	for next > bound {
		if l.pos == 0 || l.size < runHeadLen {
			return fmt.Errorf("%w: a chain ends before its first entry", ErrIndexDamaged)
		}
		hd, err := src(link{pos: l.pos, size: runHeadLen})
		if err != nil {
			return err
		}
		if hd[4] != frameEntries || binary.LittleEndian.Uint32(hd)+frameHeadLen+4 != l.size {
			return fmt.Errorf("%w: a link does not point at entries", ErrIndexDamaged)
		}
		dd := dec{b: hd[frameHeadLen:]}
		prev, ord, n := dd.link(), int(dd.u32()), dd.u32()
		if dd.err != nil || l.take == 0 || l.take > n || ord+int(l.take) != next || prev.pos < 0 || prev.pos >= l.pos || (prev.pos == 0) != (ord == 0) {
			return fmt.Errorf("%w: a run does not continue the one after it", ErrIndexDamaged)
		}
		visit(mark{l, next})
		l, next = prev, ord
	}
	return nil
}

// headBlock is how much of the index file a walk back reads at a time.
const headBlock = 256 << 10

// blockReader reads frames a block of the index file at a time, keeping
// the last block: the frames a walk back visits (their heads) and the
// runs a cursor reads forwards lie close together and come in order, so
// a walk reads the stretch of the file it crosses once, in large reads,
// not a read per frame.
type blockReader struct {
	buf []byte
	off int64
}

// frames is a frame source through the block, for reads in descending
// order of position or, forward, ascending. What it returns is valid until
// the next read.
func (b *blockReader) frames(ix *Index, forward bool) frameSource {
	if ix.mem != nil {
		return bytesFrames(ix.mem)
	}
	direct := ix.frames()
	return func(l link) ([]byte, error) {
		end := l.pos + int64(l.size)
		if l.pos < int64(len(indexMagic)) || end > ix.end || end < l.pos {
			return nil, fmt.Errorf("%w: a link points outside the file", ErrIndexDamaged)
		}
		if b.buf != nil && l.pos >= b.off && end <= b.off+int64(len(b.buf)) {
			return b.buf[l.pos-b.off : end-b.off], nil
		}
		if l.size > headBlock/4 {
			return direct(l)
		}
		start := max(int64(len(indexMagic)), end-headBlock)
		if forward {
			start = l.pos
			end = min(ix.end, start+headBlock)
		}
		if b.buf == nil {
			b.buf = make([]byte, headBlock)
		}
		b.buf = b.buf[:end-start]
		if _, err := ix.f.ReadAt(b.buf, start); err != nil {
			b.buf = nil
			return nil, fmt.Errorf("read the page index: %w", err)
		}
		b.off = start
		return b.buf[l.pos-start : l.pos-start+int64(l.size)], nil
	}
}

// Next returns up to n refs from the cursor on and moves past them; none
// at the document's end.
func (c *RefCursor) Next(n int) ([]Ref, error) {
	d := c.d
	out := make([]Ref, 0, min(n, d.Len()-c.next))
	for len(out) < n && c.next < d.br.count {
		if len(c.buf) == 0 {
			if err := c.readRun(); err != nil {
				return nil, err
			}
		}
		k := min(n-len(out), len(c.buf))
		out = append(out, c.buf[:k]...)
		c.buf = c.buf[k:]
		c.next += k
	}
	if k := n - len(out); k > 0 && c.next >= d.br.count {
		t := d.br.tail[c.next-d.br.count:]
		t = t[:min(k, len(t))]
		out = append(out, t...)
		c.next += len(t)
	}
	return out, nil
}

// readRun reads the next run whole and checks it continues what came
// before.
func (c *RefCursor) readRun() error {
	d := c.d
	if len(c.seg) == 0 {
		k := len(c.marks) - 1
		if k < 0 {
			return fmt.Errorf("%w: a chain ends before its last entry", ErrIndexDamaged)
		}
		top := c.marks[k]
		if err := c.walkBack(top, c.bound, func(m mark) { c.seg = append(c.seg, m) }); err != nil {
			return err
		}
		c.marks, c.bound = c.marks[:k], top.end
		if len(c.seg) == 0 {
			return fmt.Errorf("%w: a checkpoint holds no run", ErrIndexDamaged)
		}
	}
	i := len(c.seg) - 1
	m := c.seg[i]
	ord, refs, _, err := readRun(c.runs.frames(d.ix, true), m.l)
	if err != nil {
		return err
	}
	if ord+len(refs) != m.end || c.next < ord || c.next >= m.end {
		return fmt.Errorf("%w: a run changed under the cursor", ErrIndexDamaged)
	}
	for j := range refs {
		if j == 0 && ord > 0 && !c.has {
			continue // the first ref read: its turn is taken as given
		}
		var p Ref
		if j > 0 {
			p = refs[j-1]
		} else {
			p = c.prev
		}
		if follow(p, ord+j > 0, refs[j]) != refs[j] {
			return fmt.Errorf("%w: entry %d is numbered wrong", ErrIndexDamaged, ord+j)
		}
	}
	c.prev, c.has = refs[len(refs)-1], true
	if m.end == d.br.count && refs[len(refs)-1] != d.br.lastRef {
		return fmt.Errorf("%w: the last entry is not the one the state names", ErrIndexDamaged)
	}
	c.seg = c.seg[:i]
	c.buf = refs[c.next-ord:]
	return nil
}

// Entries decodes the next n entries (fewer at the end) from log, the open
// log file the index describes, and moves past them.
func (c *RefCursor) Entries(log *os.File, n int) ([]transcript.Entry, error) {
	refs, err := c.Next(n)
	if err != nil || len(refs) == 0 {
		return nil, err
	}
	t := &tailRead{f: log, ix: c.d.ix}
	return t.decode(refs)
}

// Pos is the ordinal of the next entry the cursor reads.
func (c *RefCursor) Pos() int { return c.next }
