package history

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// resumeLight is resume for an index that has an ID table: main's
// entries covered by the table are left out of the Scanner (neither stubs
// nor IDs), so it costs the entries indexed since the table was written,
// not the document. The Scanner is exact for every record lightOK
// accepts; any other needs resume (the writer's index goroutine) or the
// entries left out read back (materialize, a follower's Scanner).
//
// A branch that starts with main's first entries, as a fork of main or of
// such a branch does until a snapshot replaces its document, leaves them
// out the same way (lightBranch) and holds only the rest. The Scanner's
// tree says how many entries each state leaves out (lightForks), so a
// branch record applies exactly too.
func (ix *Index) resumeLight() (*Scanner, *idTable, error) {
	st := ix.st
	if len(st.tables) == 0 {
		return nil, nil, fmt.Errorf("%w: no ID table", errNoIndexTail)
	}
	br := st.branches[0]
	if br.uiLines == 0 && br.msgs > 0 || st.tableN() > br.count {
		return nil, nil, fmt.Errorf("%w: the ID table does not fit", errNoIndexTail)
	}
	var src io.ReaderAt = ix.f
	if ix.mem != nil {
		src = bytes.NewReader(ix.mem)
	}
	table, err := openIDTable(src, ix.end, st.tables)
	if err != nil {
		return nil, nil, err
	}
	doc, err := ix.Document(Main)
	if err != nil {
		return nil, nil, err
	}
	refs, err := doc.Refs(st.tableN(), br.count)
	if err != nil {
		return nil, nil, err
	}
	s := newScanner(false, 0)
	s.resumed, s.quiet = true, true
	r := s.r
	r.version = Version
	r.conv.Header.Version = Version
	s.lineNo, s.off, s.size, s.skipNL, s.last = st.lines, st.logSize, st.logSize, st.skipNL, '\n'
	if st.skipNL {
		s.last = 0
	}
	r.ids = newIDSet(len(refs))
	// Main's turns as its IDs are held, from its first entry after the
	// table's: a compaction entry on main resolves what it covers against
	// them and, for the entries left out, the table (farTurns).
	br.turns = make([]int32, 0, len(refs))
	for _, ref := range refs {
		r.entries = append(r.entries, transcript.Entry{ID: ref.ID})
		if !r.ids.add(ref.ID) {
			return nil, nil, fmt.Errorf("%w: entry %q is in the document twice", ErrIndexDamaged, ref.ID)
		}
		br.turns = append(br.turns, ref.Turn)
	}
	for _, ref := range br.tail {
		r.tail = append(r.tail, transcript.Entry{ID: ref.ID})
	}
	r.uiLines = br.uiLines
	if br.msgs > 0 || br.msgsMade {
		r.conv.Messages, r.msgAt = make([]message.Message, br.msgs), make([]time.Time, br.msgs)
	}
	r.reserved = br.reservedSet()
	lf := &lightForks{skip: map[string]int{Main: st.tableN()}}
	for _, b := range st.branches[1:] {
		bs, skip, err := ix.lightBranch(table, b)
		if err != nil {
			return nil, nil, err
		}
		if skip > 0 {
			lf.skip[b.info.ID] = skip
		}
		if r.tree.branches == nil {
			r.tree.branches = map[string]*branchState{}
		}
		r.tree.branches[b.info.ID] = bs
		r.tree.order = append(r.tree.order, b.info.ID)
	}
	r.tree.head = st.head
	r.conv.Title, r.lastAt, r.metaTime = st.title, st.lastAt, st.metaTime
	frames := ix.frames()
	lf.open = func() (*idTable, frameSource, func(), error) { return table, frames, func() {}, nil }
	if !lf.none() {
		r.tree.light = lf
	}
	return s, table, nil
}

// lightForks is what a Scanner from resumeLight knows of the entries its
// states leave out: branch id's first skip[id] entries (main's included)
// are main's first ones, all among the ID table's, which locate finds.
// Forks and the index builder use it to apply a branch record exactly
// without them.
type lightForks struct {
	skip map[string]int
	// open opens the ID table and the frames it points into; done
	// releases them.
	open func() (t *idTable, src frameSource, done func(), err error)
	err  error // the first failure to read them: the Scanner stops
}

// skipOf is how many of branch id's first entries the state leaves out.
func (l *lightForks) skipOf(id string) int {
	if l == nil {
		return 0
	}
	return l.skip[id]
}

// whole records that branch id's state now holds its whole document.
func (l *lightForks) whole(id string) { delete(l.skip, id) }

// none reports whether every state is whole.
func (l *lightForks) none() bool {
	for _, n := range l.skip {
		if n > 0 {
			return false
		}
	}
	return true
}

// locate finds id among main's first n entries (n within the table's):
// its ordinal (-1: not there), the entries frame holding it and where
// that frame is.
func (l *lightForks) locate(id string, n int) (int, entriesFrame, link, error) {
	t, src, done, err := l.open()
	if err != nil {
		return -1, entriesFrame{}, link{}, err
	}
	defer done()
	frames, err := t.lookup(id)
	if err != nil {
		return -1, entriesFrame{}, link{}, err
	}
	for _, pos := range frames {
		f, err := readEntriesFrame(src, pos)
		if err != nil {
			return -1, entriesFrame{}, link{}, err
		}
		for j, r := range f.refs {
			if r.ID == id && f.ordinal+j < n {
				return f.ordinal + j, f, link{pos: pos, size: f.size}, nil
			}
		}
	}
	return -1, entriesFrame{}, link{}, nil
}

// find is locate's ordinal for the reader's fork; a failure to read stops
// the Scanner (err).
func (l *lightForks) find(id string, n int) int {
	ord, _, _, err := l.locate(id, n)
	if err != nil {
		if l.err == nil {
			l.err = err
		}
		return -1
	}
	return ord
}

// forkCovLight is apply's fork of the parent's compaction entries for a
// Scanner from resumeLight, whose builder holds no turns: what each
// covers is resolved against the branch's first k entries by their refs,
// read from the parent's chain back to the entries the state left out
// (pskip) and, for those, through the ID table. The new branch's turns
// stay unknown, as its parent's are, until a full resume.
func (b *indexBuilder) forkCovLight(lf *lightForks, parent, nb *ixBranch, pskip int) error {
	k := nb.info.ForkIndex
	var covs []Cov
	for _, c := range append(slices.Clone(parent.cov), parent.tailCov...) {
		if c.ordinal < k {
			covs = append(covs, c)
		}
	}
	nb.turns = nil
	if len(covs) == 0 {
		return nil
	}
	held := map[string]int32{}
	for j, ref := range parent.tail {
		if parent.count+j < k {
			held[ref.ID] = ref.Turn
		}
	}
	for l := parent.last; l.pos != 0; {
		ord, refs, prev, err := readRun(b.frame, l)
		if err != nil {
			return err
		}
		for j, ref := range refs {
			if ord+j < k && ord+j >= pskip {
				held[ref.ID] = ref.Turn
			}
		}
		if ord <= pskip {
			break
		}
		l = prev
	}
	turnOf := func(id string) (int32, error) {
		if g, ok := held[id]; ok {
			return g, nil
		}
		if pskip == 0 || id == "" {
			return -1, nil
		}
		ord, f, _, err := lf.locate(id, min(k, pskip))
		if err != nil || ord < 0 {
			return -1, err
		}
		return f.refs[ord-f.ordinal].Turn, nil
	}
	for _, c := range covs {
		var err error
		if c.FromTurn, err = turnOf(c.FromID); err != nil {
			return err
		}
		if c.ToTurn, err = turnOf(c.ToID); err != nil {
			return err
		}
		nb.cov = append(nb.cov, c)
	}
	return nil
}

// lightBranch is a branch's state for resumeLight: stubs of its entries
// after the first skip, which are main's first ones. Its chain is read
// back, run by run, until a run in one of main's frames that the table
// names (all written before the table, holding entries it covers): that
// run and the ones before it are main's. A chain that never reaches one
// (a snapshot replaced the branch's document) is held whole.
func (ix *Index) lightBranch(table *idTable, b *ixBranch) (bs *branchState, skip int, err error) {
	st := ix.st
	if b.uiLines == 0 && b.msgs > 0 {
		return nil, 0, fmt.Errorf("%w: branch %q's document is derived from its messages", errNoIndexTail, b.info.ID)
	}
	src := ix.frames()
	var own [][]Ref
	next, l := b.count, b.last
	for next > 0 {
		ord, refs, prev, err := readRun(src, l)
		if err != nil {
			return nil, 0, err
		}
		if ord+len(refs) != next {
			return nil, 0, fmt.Errorf("%w: a run does not continue the one after it", ErrIndexDamaged)
		}
		if l.pos < st.tables[len(st.tables)-1].at.pos && next <= st.tableN() {
			frames, err := table.lookup(refs[len(refs)-1].ID)
			if err != nil {
				return nil, 0, err
			}
			if slices.Contains(frames, l.pos) {
				break // main's frame: so is every one before it
			}
		}
		own = append(own, refs)
		next, l = ord, prev
	}
	k := next
	bs = &branchState{info: b.info, ids: newIDSet(b.count - k), reserved: b.reservedSet(), uiLines: b.uiLines}
	for i := len(own) - 1; i >= 0; i-- {
		for _, ref := range own[i] {
			bs.entries = append(bs.entries, transcript.Entry{ID: ref.ID})
			if !bs.ids.add(ref.ID) {
				return nil, 0, fmt.Errorf("%w: entry %q is in the document twice", ErrIndexDamaged, ref.ID)
			}
		}
	}
	for _, ref := range b.tail {
		bs.tail = append(bs.tail, transcript.Entry{ID: ref.ID})
	}
	b.turns = nil // only compactions read them, which take resume, and forks, which take forkCovLight
	if b.msgs > 0 || b.msgsMade {
		bs.msgs, bs.msgAt = make([]message.Message, b.msgs), make([]time.Time, b.msgs)
	}
	return bs, k, nil
}

// lightOK reports whether a Scanner from resumeLight applies the records
// of data (complete lines the log gained) exactly: each is a message,
// meta, rewrite, UI or branch record, of main or of a branch (on-branch),
// or a head record; no branch's record holds a compaction entry (main's
// resolve what they cover through the table: farTurns); and no entry's ID may
// be among those the table holds (so none is among the entries a branch
// shares with main either, which are main's first ones). A branch record
// needs no check: its fork point is among the entries the parent's state
// holds, or among those it leaves out, which the table finds exactly
// (lightForks.locate).
func lightOK(t *idTable, data []byte) bool {
	if t == nil {
		return false
	}
	s := newScanner(false, 0)
	r := s.r
	r.version, r.scan = Version, true
	ok := true
	if i := bytes.LastIndexByte(data, '\n'); i+1 < len(data) {
		// A last line cut short that is not a record is torn: the
		// Scanner leaves it unread, so it needs nothing.
		if _, err := r.decodeRecord(trimLine(data[i+1:])); err != nil {
			data = data[:i+1]
		}
	}
	splitLines(data, func(line []byte) {
		if !ok || len(line) == 0 {
			return
		}
		rec, err := r.decodeRecord(trimLine(line))
		if err == nil && rec.bad == nil && rec.typ == TypeHead {
			return
		}
		onBranch := false
		if err == nil && rec.bad == nil && rec.typ == TypeOnBranch && rec.record != nil {
			onBranch = true
			inner := rec.record
			rec, err = r.decodeRecord(inner)
			if err == nil && !wrappable[rec.typ] {
				ok = false
				return
			}
		}
		if err != nil || rec.bad != nil || rec.entriesBad != nil {
			ok = false
			return
		}
		switch rec.typ {
		case TypeMessage, TypeMeta, TypeRewrite, TypeUITranscript, TypeBranch:
		case TypeUIAppend, TypeUIOpen:
			for _, e := range rec.entries {
				if onBranch && e.Content.Kind() == transcript.KindCompaction {
					ok = false
					return
				}
				if maybe, err := t.maybe(e.ID); err != nil || maybe {
					ok = false
					return
				}
			}
		default:
			ok = false
		}
	})
	return ok
}

// lightState is what a Scanner from ResumeScanner's light resume keeps to
// check lines against the index's ID table and to read the entries it
// left out when a line needs them. Both come from the index file it
// resumed from, whose frames never change while the file is not
// replaced: a rebuilt index may describe a later document.
type lightState struct {
	index    string      // the index file's path
	ifi      os.FileInfo // the index file resumed from
	statePos int64       // its commit the Scanner resumed at
	table    []tableSeg  // its ID table
}

// open opens the index file resumed from, or fails if it was replaced.
func (l *lightState) open() (*os.File, int64, error) {
	f, err := os.Open(l.index)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil || !os.SameFile(fi, l.ifi) {
		f.Close()
		return nil, 0, fmt.Errorf("%w: the page index the Scanner resumed from was replaced", ErrIndexStale)
	}
	return f, fi.Size(), nil
}

// openTable opens the ID table of the index file resumed from, for
// lightForks.
func (l *lightState) openTable() (*idTable, frameSource, func(), error) {
	f, size, err := l.open()
	if err != nil {
		return nil, nil, nil, err
	}
	t, err := openIDTable(f, size, l.table)
	if err != nil {
		f.Close()
		return nil, nil, nil, err
	}
	return t, fileFrames(f, size), func() { f.Close() }, nil
}

// judges reports whether the light Scanner applies line exactly: the ID
// table says none of its entries' IDs is among main's first entries.
func (l *lightState) judges(line []byte) bool {
	t, _, done, err := l.openTable()
	if err != nil {
		return false
	}
	defer done()
	return lightOK(t, line)
}

// materialize reads the entries the light resume left out of each
// branch's state (main's first ones, their IDs, as resume holds them) from
// the page index and puts them before the ones held, so the Scanner is as
// resume would have made it.
func (s *Scanner) materialize() error {
	l := s.light
	s.light = nil
	r := s.r
	lf := r.tree.light
	if lf == nil || lf.none() {
		return nil
	}
	f, size, err := l.open()
	if err != nil {
		return err
	}
	defer f.Close()
	src := fileFrames(f, size)
	st, err := readState(src, l.statePos)
	if err != nil {
		return err
	}
	b := st.branches[0]
	refs, err := walk(src, b.last, b.count, b.lastRef)
	if err != nil {
		return err
	}
	whole := func(k int, held []transcript.Entry) ([]transcript.Entry, *idSet, error) {
		if len(refs) < k {
			return nil, nil, fmt.Errorf("%w: the commit resumed from has %d entries, not %d", ErrIndexDamaged, len(refs), k)
		}
		entries := make([]transcript.Entry, 0, k+len(held))
		for _, ref := range refs[:k] {
			entries = append(entries, transcript.Entry{ID: ref.ID})
		}
		entries = append(entries, held...)
		ids := newIDSet(len(entries))
		for _, e := range entries {
			if !ids.add(e.ID) {
				return nil, nil, fmt.Errorf("%w: entry %q is in the document twice", ErrIndexDamaged, e.ID)
			}
		}
		return entries, ids, nil
	}
	for id, k := range lf.skip {
		if k == 0 {
			continue
		}
		if id == Main {
			if r.entries, r.ids, err = whole(k, r.entries); err != nil {
				return err
			}
			continue
		}
		bs := r.tree.branches[id]
		if bs == nil {
			return fmt.Errorf("%w: branch %q is not in the Scanner", ErrIndexDamaged, id)
		}
		if bs.entries, bs.ids, err = whole(k, bs.entries); err != nil {
			return err
		}
	}
	clear(lf.skip)
	return nil
}
