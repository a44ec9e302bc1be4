package history

import (
	"fmt"
	"os"
	"time"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// resumeFor is a Scanner to apply gained (what the log holds past the
// index; nil when unknown) with: resumeLight's, which costs the entries
// indexed since the ID table, when every record in gained is one it
// applies exactly (lightOK), else resume's, which reads every entry's ID
// back.
func (ix *Index) resumeFor(gained []byte) (*Scanner, error) {
	if len(gained) > 0 {
		if s, table, err := ix.resumeLight(); err == nil && lightOK(table, gained) {
			observed(evLightExtend)
			return s, nil
		}
	}
	return ix.resume()
}

// resume returns a Scanner positioned at the end of the log the index
// describes, in the state reading the log up to there leaves it in,
// except that entries before that point carry only their IDs and model
// messages are placeholders: enough to apply every rule to what follows.
func (ix *Index) resume() (*Scanner, error) {
	data, err := ix.whole()
	if err != nil {
		return nil, err
	}
	st := ix.st
	src := bytesFrames(data)
	s := newScanner(false, 0)
	s.resumed = true
	r := s.r
	r.version = Version
	r.conv.Header.Version = Version
	s.lineNo, s.off, s.size, s.skipNL, s.last = st.lines, st.logSize, st.logSize, st.skipNL, '\n'
	if st.skipNL {
		s.last = 0
	}
	// stubs reads a branch's entries back as ID-only entries, their ID set
	// and their turns (which the builder keeps while extending).
	stubs := func(b *ixBranch) ([]transcript.Entry, []transcript.Entry, *idSet, error) {
		refs, err := walk(src, b.last, b.count, b.lastRef)
		if err != nil {
			return nil, nil, nil, err
		}
		es := make([]transcript.Entry, len(refs), len(refs)+1)
		ids := newIDSet(len(refs))
		b.turns = make([]int32, len(refs))
		for i, ref := range refs {
			es[i].ID = ref.ID
			b.turns[i] = ref.Turn
			if !ids.add(ref.ID) {
				return nil, nil, nil, fmt.Errorf("%w: entry %q is in the document twice", ErrIndexDamaged, ref.ID)
			}
		}
		var tail []transcript.Entry
		for _, ref := range b.tail {
			tail = append(tail, transcript.Entry{ID: ref.ID})
		}
		return es, tail, ids, nil
	}
	for _, b := range st.branches {
		if b.uiLines == 0 && b.msgs > 0 {
			return nil, fmt.Errorf("%w: branch %q's document is derived from its messages", ErrNotPaged, b.info.ID)
		}
		es, tail, ids, err := stubs(b)
		if err != nil {
			return nil, err
		}
		msgs, msgAt := make([]message.Message, b.msgs), make([]time.Time, b.msgs)
		if b.msgs == 0 && !b.msgsMade {
			msgs, msgAt = nil, nil
		}
		if b.info.ID == Main {
			r.entries, r.tail, r.ids, r.uiLines = es, tail, ids, b.uiLines
			r.conv.Messages, r.msgAt = msgs, msgAt
			r.reserved = b.reservedSet()
			continue
		}
		if r.tree.branches == nil {
			r.tree.branches = map[string]*branchState{}
		}
		r.tree.branches[b.info.ID] = &branchState{info: b.info, entries: es, tail: tail, ids: ids,
			reserved: b.reservedSet(), uiLines: b.uiLines, msgs: msgs, msgAt: msgAt}
		r.tree.order = append(r.tree.order, b.info.ID)
	}
	r.tree.head = st.head
	r.conv.Title, r.lastAt, r.metaTime = st.title, st.lastAt, st.metaTime
	return s, nil
}

// reservedSet is the branch's reserved IDs as the reader holds them.
func (b *ixBranch) reservedSet() map[string]struct{} {
	m := make(map[string]struct{}, len(b.reserved))
	for _, id := range b.reserved {
		m[id] = struct{}{}
	}
	return m
}

// ResumeScanner returns a Scanner that continues reading the log at path
// after its first size bytes, set up from the log's page index (as
// OpenIndex finds or makes it) instead of by reading those bytes: its
// entries before size carry only their IDs, which is all the rules for
// what follows need. log is an open handle on the log file. A log the
// index cannot describe (ErrNotPaged) must be read from its start.
func ResumeScanner(path string, log *os.File, size int64) (*Scanner, error) {
	ix, err := OpenIndex(path, log, size)
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	if ix.f != nil && ix.st.logSize == size {
		// An index file with an ID table: hold only the entries indexed
		// since the table, and read the others back only if a line
		// needs them (Scanner.Partial).
		ifi, err := ix.f.Stat()
		if err == nil {
			if s, _, err := ix.resumeLight(); err == nil {
				s.quiet = false
				if lf := s.r.tree.light; lf != nil {
					l := &lightState{index: IndexPath(path), ifi: ifi, statePos: ix.pos, table: ix.st.tables}
					lf.open = l.openTable
					s.light = l
				}
				return s, nil
			}
		}
	}
	return ix.resume()
}
