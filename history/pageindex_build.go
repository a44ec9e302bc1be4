package history

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/foliodev/folio/transcript"
)

// indexBuilder applies a log's records, as a Scanner reads them, to the
// index's state, and collects the frames a commit appends. base is where
// the next frame goes in the index file.
type indexBuilder struct {
	st      *ixState
	src     frameSource // the frames written before this builder's
	base    int64
	pending []byte // frames not yet written, starting at base
	// statePos is the last commit's state frame (0: none yet);
	// stateBytes is its size with the trailer's.
	statePos   int64
	stateBytes int
	// mainAt is, for each of main's entries this builder wrote (from
	// ordinal mainFrom on), the entries frame holding it, for the ID
	// table; mainFar says one of those frames lies past 4 GiB, where the
	// table cannot point.
	mainAt   []uint32
	mainFrom int
	mainFar  bool
	// spill, when set, is the new index file a rebuild writes: scan moves
	// the pending frames to it whenever they pass spillBytes, so a
	// rebuild holds at most that much of the index (spilled).
	spill *os.File
}

// spillBytes is how many pending bytes a spilling builder holds.
var spillBytes = 1 << 20

// spilled moves the pending frames to the spill file.
func (b *indexBuilder) spilled() error {
	if _, err := b.spill.WriteAt(b.pending, b.base); err != nil {
		return err
	}
	b.base += int64(len(b.pending))
	b.pending = b.pending[:0]
	b.src = fileFrames(b.spill, b.base)
	return nil
}

func newIndexBuilder() *indexBuilder {
	st := &ixState{head: Main, branches: []*ixBranch{{info: Branch{ID: Main}}}}
	return &indexBuilder{st: st, base: int64(len(indexMagic))}
}

// frame reads a frame, whether written before the builder's or pending.
func (b *indexBuilder) frame(l link) ([]byte, error) {
	if l.pos >= b.base {
		off := l.pos - b.base
		if off+int64(l.size) > int64(len(b.pending)) {
			return nil, fmt.Errorf("%w: a link points past the pending frames", ErrIndexDamaged)
		}
		return b.pending[off : off+int64(l.size)], nil
	}
	if b.src == nil {
		return nil, fmt.Errorf("%w: no frames before %d", ErrIndexDamaged, b.base)
	}
	return b.src(l)
}

// refsOf turns a UI record's batch into refs continuing after prev (have
// false: at the document's start).
func refsOf(batch []Stored, prev Ref, have bool) []Ref {
	refs := make([]Ref, len(batch))
	for i, s := range batch {
		k := s.Entry.Content.Kind()
		prev = follow(prev, have, Ref{ID: s.Entry.ID, Start: s.Start, Len: int32(s.End - s.Start),
			User: k == transcript.KindUser, Compaction: k == transcript.KindCompaction, Kind: kindFromCode(kindCode(k))})
		have = true
		refs[i] = prev
	}
	return refs
}

// appendRun adds refs to branch br's settled entries as one entries frame.
func (b *indexBuilder) appendRun(br *ixBranch, refs []Ref) {
	if len(refs) == 0 {
		return
	}
	if br.count == 0 {
		br.first = refs[0].ID
	}
	pos := b.base + int64(len(b.pending))
	n := len(b.pending)
	if br.info.ID == Main {
		if len(b.mainAt) == 0 {
			b.mainFrom = br.count
		}
		b.mainFar = b.mainFar || pos >= 1<<32
		for range refs {
			b.mainAt = append(b.mainAt, uint32(pos))
		}
	}
	b.pending = appendFrame(b.pending, frameEntries, encodeEntries(br.last, br.count, refs))
	br.last = link{pos: pos, size: uint32(len(b.pending) - n), take: uint32(len(refs))}
	br.count += len(refs)
	br.lastRef = refs[len(refs)-1]
	for _, r := range refs {
		br.turns = append(br.turns, r.Turn)
	}
}

// covsOf resolves the compaction entries of a batch (refs, at ordinal
// from) against the document's IDs, which ids indexes as turns does: by
// ordinal, or for a state a light resume left main's first entries out
// of, by ordinal after those, which far finds (nil: there are none).
func covsOf(batch []Stored, refs []Ref, from int, ids *idSet, turns []int32, tail []Ref, far func(string) int32) []Cov {
	var out []Cov
	turnOf := func(id string) int32 {
		if i := ids.index(id); i >= 0 && i < len(turns) {
			return turns[i]
		}
		for _, r := range tail {
			if r.ID == id {
				return r.Turn
			}
		}
		if far != nil {
			return far(id)
		}
		return -1
	}
	for i, s := range batch {
		c, ok := s.Entry.Content.(transcript.Compaction)
		if !ok {
			continue
		}
		// The IDs are copies: the state keeps its compactions for as long
		// as the index is open (an index writer's, as long as the log),
		// and a string read from a line would keep the whole block the
		// line was copied into.
		out = append(out, Cov{EntryID: strings.Clone(s.Entry.ID), FromID: strings.Clone(c.Covers.FromID), ToID: strings.Clone(c.Covers.ToID),
			Turn: refs[i].Turn, ordinal: from + i})
	}
	for i := range out {
		out[i].FromTurn, out[i].ToTurn = turnOf(out[i].FromID), turnOf(out[i].ToID)
	}
	return out
}

// farTurns is, for a Scanner from resumeLight whose state of branch id
// leaves main's first entries out, how covsOf finds the turn of one of
// those: through the ID table. A failure to read it is kept in *err (and
// the turn is -1). nil when the state holds the whole document.
func (s *Scanner) farTurns(id string) (func(string) int32, *error) {
	var ferr error
	lf := s.r.tree.light
	skip := lf.skipOf(id)
	if skip == 0 {
		return nil, &ferr
	}
	return func(eid string) int32 {
		ord, f, _, err := lf.locate(eid, skip)
		if err != nil {
			if ferr == nil {
				ferr = err
			}
			return -1
		}
		if ord < 0 {
			return -1
		}
		return f.refs[ord-f.ordinal].Turn
	}, &ferr
}

// idsOf is the ID set of branch id's document in the reader.
func (s *Scanner) idsOf(id string) *idSet {
	if id == Main {
		return s.r.ids
	}
	if b := s.r.tree.branches[id]; b != nil {
		return b.ids
	}
	return newIDSet(0)
}

// apply folds one record the Scanner s just applied into the state.
func (b *indexBuilder) apply(s *Scanner, rec Record) error {
	if !rec.Accepted {
		return nil
	}
	switch rec.Type {
	case TypeUIAppend, TypeUITranscript, TypeUIOpen:
		br := b.st.branch(rec.Branch)
		if br == nil {
			return fmt.Errorf("history: index: record of unknown branch %q", rec.Branch)
		}
		if rec.Type == TypeUITranscript {
			if br.info.ID == Main {
				b.st.tables, b.mainAt, b.mainFar = nil, nil, false
			}
			br.last, br.count, br.lastRef, br.first, br.cov, br.turns = link{}, 0, Ref{}, "", nil, nil
			br.covDirty = true
		}
		refs := refsOf(rec.Batch, br.lastRef, br.count > 0)
		far, farErr := s.farTurns(br.info.ID)
		if rec.Type == TypeUIOpen {
			br.tail = refs
			br.tailCov = covsOf(rec.Batch, refs, br.count, s.idsOf(br.info.ID), br.turns, refs, far)
			return *farErr
		}
		br.tail, br.tailCov = nil, nil
		from := br.count
		b.appendRun(br, refs)
		if covs := covsOf(rec.Batch, refs, from, s.idsOf(br.info.ID), br.turns, nil, far); len(covs) > 0 {
			br.cov, br.covDirty = append(br.cov, covs...), true
		}
		if *farErr != nil {
			return *farErr
		}
	case TypeBranch:
		info, ok := s.branchInfo(rec.Branch)
		if !ok {
			return fmt.Errorf("history: index: branch %q was not read", rec.Branch)
		}
		parent := b.st.branch(info.Parent)
		if parent == nil {
			return fmt.Errorf("history: index: parent %q of branch %q is unknown", info.Parent, info.ID)
		}
		nb := &ixBranch{info: info, covDirty: true}
		if err := b.forkMessages(parent, nb); err != nil {
			return err
		}
		k := info.ForkIndex
		lf, pskip := s.r.tree.light, s.r.tree.light.skipOf(info.Parent)
		if lf != nil {
			if err := b.forkCovLight(lf, parent, nb, pskip); err != nil {
				return err
			}
		} else {
			nb.turns = slices.Clone(parent.turns[:min(k, len(parent.turns))])
			for _, c := range append(slices.Clone(parent.cov), parent.tailCov...) {
				if c.ordinal < k {
					// What it covers is resolved again against the branch.
					c.FromTurn, c.ToTurn = -1, -1
					if i := s.idsOf(nb.info.ID).index(c.FromID); i >= 0 && i < k {
						c.FromTurn = turnAt(parent, i)
					}
					if i := s.idsOf(nb.info.ID).index(c.ToID); i >= 0 && i < k {
						c.ToTurn = turnAt(parent, i)
					}
					nb.cov = append(nb.cov, c)
				}
			}
		}
		switch {
		case k == 0:
		case k <= pskip:
			// Entry k-1 is among main's entries the light Scanner left
			// out: the ID table says which frame holds it.
			ord, f, at, err := lf.locate(info.AfterEntry, k)
			if err != nil {
				return err
			}
			if ord != k-1 {
				return fmt.Errorf("%w: branch %q forks after an entry the ID table does not hold", ErrIndexDamaged, info.ID)
			}
			nb.last = link{pos: at.pos, size: at.size, take: uint32(k - f.ordinal)}
			nb.count, nb.lastRef, nb.first = k, f.refs[k-f.ordinal-1], parent.first
		case k <= parent.count:
			// Share the parent's run up to entry k-1.
			l := parent.last
			for {
				ord, refs, prev, err := readRun(b.frame, l)
				if err != nil {
					return err
				}
				if ord < k {
					nb.last = link{pos: l.pos, size: l.size, take: uint32(k - ord)}
					nb.count, nb.lastRef, nb.first = k, refs[k-ord-1], parent.first
					break
				}
				l = prev
			}
		default:
			// The fork point is in the parent's provisional tail: the
			// shared tail entries become settled ones of the branch.
			nb.last, nb.count, nb.lastRef, nb.first = parent.last, parent.count, parent.lastRef, parent.first
			if k-parent.count > len(parent.tail) {
				return fmt.Errorf("history: index: branch %q forks past its parent's end", info.ID)
			}
			b.appendRun(nb, slices.Clone(parent.tail[:k-parent.count]))
		}
		b.st.branches = append(b.st.branches, nb)
	}
	return nil
}

// message folds what an applied record did to its branch's messages into
// the branch's chain: n is how many messages the branch has after it, so
// a message record grew the list when n is one more than the chain holds
// (one Jazz skips, a system prompt in its old format, did not). A message
// is kept as its record's line, on-branch wrapper and all.
func (b *indexBuilder) message(rec Record, n int) {
	if !rec.Accepted {
		return
	}
	br := b.st.branch(rec.Branch)
	if br == nil {
		return
	}
	switch {
	case rec.Type == TypeRewrite:
		br.msgChain, br.msgN, br.msgPending = link{}, 0, nil
	case rec.Type == TypeMessage && n == br.msgN+1:
		br.msgPending = append(br.msgPending, msgRef{start: rec.Start, len: int32(rec.End - rec.Start)})
		br.msgN++
	}
}

// msgCount is how many model messages branch id has in the Scanner.
func (s *Scanner) msgCount(id string) int {
	if id == Main {
		return len(s.r.conv.Messages)
	}
	if rb := s.r.tree.branches[id]; rb != nil {
		return len(rb.msgs)
	}
	return 0
}

// flushMessages writes a branch's pending messages as one message frame.
func (b *indexBuilder) flushMessages(br *ixBranch) {
	if len(br.msgPending) == 0 {
		return
	}
	pos := b.base + int64(len(b.pending))
	n := len(b.pending)
	b.pending = appendFrame(b.pending, frameMessages, encodeMessages(br.msgChain, br.msgN-len(br.msgPending), br.msgPending))
	br.msgChain = link{pos: pos, size: uint32(len(b.pending) - n), take: uint32(len(br.msgPending))}
	br.msgPending = nil
}

// forkMessages gives a new branch its parent's first AfterMessage
// messages: a link into the parent's chain, taking the frame that holds
// the last of them up to it.
func (b *indexBuilder) forkMessages(parent, nb *ixBranch) error {
	k := nb.info.AfterMessage
	nb.msgN = k
	if k == 0 {
		return nil
	}
	if k > parent.msgN {
		return fmt.Errorf("history: index: branch %q shares %d of %d messages", nb.info.ID, k, parent.msgN)
	}
	b.flushMessages(parent)
	for l := parent.msgChain; l.pos != 0; {
		fb, err := b.frame(l)
		if err != nil {
			return err
		}
		kind, payload, err := parseFrame(fb)
		if err != nil {
			return err
		}
		if kind != frameMessages {
			return fmt.Errorf("%w: a link does not point at messages", ErrIndexDamaged)
		}
		d := dec{b: payload}
		prev, ord := d.link(), int(d.u32())
		if d.err != nil {
			return d.err
		}
		if ord < k {
			nb.msgChain = link{pos: l.pos, size: l.size, take: uint32(k - ord)}
			return nil
		}
		l = prev
	}
	return fmt.Errorf("%w: a chain of messages ends before its first", ErrIndexDamaged)
}

// turnAt is the turn of entry i of a branch's document, tail included.
func turnAt(b *ixBranch, i int) int32 {
	if i < len(b.turns) {
		return b.turns[i]
	}
	return b.tail[i-len(b.turns)].Turn
}

// commit records the Scanner's position and the reader's per-branch
// counts in a state frame, with the log's stamp.
func (b *indexBuilder) commit(s *Scanner, inode uint64, lastStart int64, lastSum uint32) {
	st := b.st
	r := s.r
	st.logSize, st.inode, st.lastStart, st.lastSum = s.off, inode, lastStart, lastSum
	st.lines, st.skipNL, st.head = s.lineNo, s.skipNL, r.tree.head
	st.title, st.lastAt, st.metaTime = r.conv.Title, r.lastAt, r.metaTime
	reserved := 0
	for _, br := range st.branches {
		b.flushMessages(br)
		var res map[string]struct{}
		if br.info.ID == Main {
			br.uiLines, br.msgs, br.msgsMade, res = r.uiLines, len(r.conv.Messages), r.conv.Messages != nil, r.reserved
		} else if rb := r.tree.branches[br.info.ID]; rb != nil {
			br.uiLines, br.msgs, br.msgsMade, res = rb.uiLines, len(rb.msgs), rb.msgs != nil, rb.reserved
			br.info.Title = rb.info.Title
		}
		reserved += len(res)
		br.reserved = slices.Sorted(maps.Keys(res))
	}
	if reserved > maxTailReserved || st.problems > maxTailProblems {
		st.extrasLost = true
	}
	if st.extrasLost {
		st.problemList, st.unknown = nil, nil
		for _, br := range st.branches {
			br.reserved = nil
		}
	}
	for _, br := range st.branches {
		if !br.covDirty {
			continue
		}
		br.covDirty, br.covAt = false, link{}
		if len(br.cov) > 0 {
			var e enc
			e.covs(br.cov)
			at := b.base + int64(len(b.pending))
			n := len(b.pending)
			b.pending = appendFrame(b.pending, frameCovs, e.b)
			br.covAt = link{pos: at, size: uint32(len(b.pending) - n)}
		}
	}
	pos := b.base + int64(len(b.pending))
	st.prev = b.statePos
	n := len(b.pending)
	b.pending = appendFrame(b.pending, frameState, encodeState(st))
	b.pending = appendTrailer(b.pending, pos)
	b.statePos, b.stateBytes = pos, len(b.pending)-n
}

// branchInfo returns what the reader knows of a branch.
func (s *Scanner) branchInfo(id string) (Branch, bool) {
	b := s.r.tree.branches[id]
	if b == nil {
		return Branch{}, false
	}
	return b.info, true
}

// ---- the index of one log ----------------------------------------------------
