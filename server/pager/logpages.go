package pager

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/foliodev/folio/history"
)

// Doc is a branch's document as a log's page index describes it; a
// *history.IndexDoc is one. It is used by one snapshot at a time.
type Doc interface {
	Len() int
	// Refs returns entries lo..hi (hi exclusive).
	Refs(lo, hi int) ([]history.Ref, error)
	// Find returns entry id's index, or -1.
	Find(id string) (int, error)
	Coverage() []history.Cov
	Close() error
}

// FromLog returns a snapshot that copies nothing: its pages are read from
// log, an open log file, at the byte ranges doc's index gives for each
// entry's stored JSON. A log is only appended to between rewrites, and a
// rewrite replaces the file by rename, so the open file keeps every byte
// doc points at for as long as the snapshot lives. The snapshot takes over
// log and doc and closes both on its last Release. The returned snapshot
// holds one reference.
func FromLog(log *os.File, doc Doc) (*Snapshot, error) {
	lg := &logPages{f: log, doc: doc, total: doc.Len(), from: doc.Len(), to: doc.Len()}
	if err := lg.extendBack(512); err != nil {
		log.Close()
		doc.Close()
		return nil, err
	}
	s := &Snapshot{lg: lg}
	s.stats = Stats{Entries: lg.total, Groups: lg.groups, Bytes: lg.bytes}
	for _, c := range doc.Coverage() {
		s.coverage = append(s.coverage, Coverage{EntryID: c.EntryID, FromID: c.FromID, ToID: c.ToID,
			Group: int(c.Turn), FromGroup: int(c.FromTurn), ToGroup: int(c.ToTurn)})
	}
	s.stats.GraphBuilt = len(s.coverage) > 0
	s.refs.Store(1)
	return s, nil
}

// logPages are the display groups of a log-backed snapshot (the turns of
// the log's page index, one group each), learned as pages need them: from
// the end backwards, or, for an anchor before those, backwards from the
// anchor (a window), so a page there costs the refs it spans rather than
// the distance from the end. A page past a
// window's end makes the refs reach the end again.
type logPages struct {
	mu     sync.Mutex
	closed bool
	f      *os.File
	doc    Doc
	total  int   // entries
	groups int   // groups
	bytes  int64 // the groups' bytes, commas included
	refs   []history.Ref
	from   int     // refs are entries from..to
	to     int     // total, or the end of a window
	gLo    int     // groups gLo.. are whole in refs
	gHi    int     // and groups before gHi
	gStart []int32 // refs index of the first entry of each group from gLo that starts in refs
	fail   error
}

// set makes refs, entries from..to, the known ones.
func (l *logPages) set(refs []history.Ref, from, to int) {
	l.refs, l.from, l.to = refs, from, to
	if len(refs) == 0 {
		l.gLo, l.gHi, l.gStart = 0, 0, nil
		return
	}
	last := refs[len(refs)-1]
	l.gHi = int(last.Turn) // the last group may go on past a window
	if to == l.total {
		// The whole document's page bytes, from its last entry's place
		// alone (spanBytes).
		l.groups = int(last.Turn) + 1
		l.bytes = spanBytes(0, l.groups-1, last.Prior+int64(last.Len), l.total)
		l.gHi = l.groups
	}
	first := refs[0]
	l.gLo = int(first.Turn)
	if !first.TurnStart {
		l.gLo++ // its group starts before the refs
	}
	// A new slice: a page being composed may still hold the old one.
	l.gStart = make([]int32, 0, int(last.Turn)+1-l.gLo)
	for i, r := range refs {
		if int(r.Turn) >= l.gLo && (i == 0 || refs[i-1].Turn != r.Turn) {
			l.gStart = append(l.gStart, int32(i))
		}
	}
}

// extendBack makes n more entries before the known ones known (fewer at
// the start).
func (l *logPages) extendBack(n int) error {
	lo := max(0, l.from-n)
	if lo >= l.from {
		return nil
	}
	more, err := l.doc.Refs(lo, l.from)
	if err != nil {
		return err
	}
	l.set(append(more, l.refs...), lo, l.to)
	return nil
}

// extendAhead makes n more entries after the known ones known (fewer at
// the end).
func (l *logPages) extendAhead(n int) error {
	hi := min(l.total, l.to+n)
	more, err := l.doc.Refs(l.to, hi)
	if err != nil {
		return err
	}
	l.set(append(slices.Clip(l.refs), more...), l.from, hi)
	return nil
}

// ensure makes groups lo..hi whole in refs.
func (l *logPages) ensure(lo, hi int) bool {
	for hi >= l.gHi && l.to < l.total && l.fail == nil {
		l.fail = l.extendAhead(max(512, len(l.refs)))
	}
	for lo < l.gLo && l.from > 0 && l.fail == nil {
		l.fail = l.extendBack(max(512, len(l.refs)))
	}
	return l.fail == nil
}

func (l *logPages) n() int     { return l.groups }
func (l *logPages) err() error { return l.fail }

// lastRef is the refs index of the last entry of whole group g.
func (l *logPages) lastRef(g int) int {
	i := g - l.gLo
	if i+1 < len(l.gStart) {
		return int(l.gStart[i+1]) - 1
	}
	return len(l.refs) - 1
}

func (l *logPages) span(first, last int) int64 {
	if !l.ensure(first, last) {
		return 0
	}
	i, j := int(l.gStart[first-l.gLo]), l.lastRef(last)
	start, end := l.refs[i], l.refs[j]
	return spanBytes(first, last, end.Prior+int64(end.Len)-start.Prior, j-i+1)
}

func (l *logPages) groupOf(id string) int {
	i, err := l.doc.Find(id)
	if err != nil {
		l.fail = err
		return -1
	}
	if i < 0 {
		return -1
	}
	if i < l.from || i >= l.to {
		// A window up to the anchor: the pages before it need no more,
		// and the others extend it.
		lo := max(0, i+1-512)
		refs, err := l.doc.Refs(lo, i+1)
		if err != nil {
			l.fail = err
			return -1
		}
		l.set(refs, lo, i+1)
	}
	if l.fail != nil {
		return -1
	}
	return int(l.refs[i-l.from].Turn)
}

// pageRefs returns the refs of groups first..last. The slice is never
// changed afterwards, so it can be read without the lock.
func (l *logPages) pageRefs(first, last int) ([]history.Ref, error) {
	if !l.ensure(first, last) {
		return nil, l.fail
	}
	lo := int(l.gStart[first-l.gLo])
	hi := len(l.refs)
	if last+1-l.gLo < len(l.gStart) {
		hi = int(l.gStart[last+1-l.gLo])
	}
	return l.refs[lo:hi], nil
}

// chunkBytes bounds one read of the log: a page is read in runs of nearby
// entries, at most this many bytes at a time (a longer entry alone), so
// composing a 4 MiB page needs no second 4 MiB buffer.
const chunkBytes = 256 << 10

// scratch holds the log bytes a chunk of a page is composed from.
var scratch = sync.Pool{New: func() any { b := make([]byte, chunkBytes); return &b }}

// compose appends the groups of rs, joined by commas, to dst: each group's
// framing around its entries' stored bytes, read from the log with one
// ReadAt per run of nearby entries.
func (l *logPages) compose(dst []byte, rs []history.Ref) ([]byte, error) {
	if len(rs) == 0 {
		return dst, nil
	}
	// The page's size is known from its first and last refs: grow dst once,
	// as a page read from a snapshot file does.
	first, last := rs[0], rs[len(rs)-1]
	dst = slices.Grow(dst, int(spanBytes(int(first.Turn), int(last.Turn), last.Prior+int64(last.Len)-first.Prior, len(rs))))
	bp := scratch.Get().(*[]byte)
	defer scratch.Put(bp)
	open := 0 // the open group's first ref
	for i := 0; i < len(rs); {
		// A run: the entries after rs[i] whose gaps are small, within a
		// chunk.
		start, end := rs[i].Start, rs[i].Start+int64(rs[i].Len)
		j := i + 1
		for j < len(rs) && rs[j].Start >= end && rs[j].Start-end < 16<<10 && rs[j].Start+int64(rs[j].Len)-start <= chunkBytes {
			end = rs[j].Start + int64(rs[j].Len)
			j++
		}
		buf := *bp
		if end-start > int64(len(buf)) {
			buf = make([]byte, end-start) // one entry longer than a chunk
		}
		buf = buf[:end-start]
		if _, err := l.f.ReadAt(buf, start); err != nil {
			if errors.Is(err, os.ErrClosed) {
				return nil, ErrReleased // the last Release raced this page
			}
			return nil, fmt.Errorf("read entries at %d..%d of the log: %w", start, end, err)
		}
		for k := i; k < j; k++ {
			r := rs[k]
			if k == 0 || r.Turn != rs[k-1].Turn {
				if k > 0 {
					dst = append(dst, ',')
				}
				dst = groupOpen(dst, int(r.Turn))
				open = k
			} else {
				dst = append(dst, ',')
			}
			off := r.Start - start
			dst = append(dst, buf[off:off+int64(r.Len)]...)
			if k == len(rs)-1 || rs[k+1].Turn != r.Turn {
				dst = groupClose(dst, int(r.Turn), r.Prior+int64(r.Len)-rs[open].Prior, k-open+1)
			}
		}
		i = j
	}
	return dst, nil
}

func (l *logPages) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	err := l.f.Close()
	if derr := l.doc.Close(); err == nil {
		err = derr
	}
	return err
}
