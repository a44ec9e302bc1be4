package history

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/foliodev/folio/transcript"
)

type enc struct{ b []byte }

func (e *enc) u8(v uint8)   { e.b = append(e.b, v) }
func (e *enc) u32(v uint32) { e.b = binary.LittleEndian.AppendUint32(e.b, v) }
func (e *enc) u64(v uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *enc) i64(v int64)  { e.u64(uint64(v)) }
func (e *enc) str(s string) { e.u32(uint32(len(s))); e.b = append(e.b, s...) }
func (e *enc) flag(v bool) {
	if v {
		e.u8(1)
	} else {
		e.u8(0)
	}
}

// time writes t as a zero flag, Unix seconds and nanoseconds; a reader
// gets it back in UTC, as the log reader gives every instant.
func (e *enc) time(t time.Time) {
	e.flag(t.IsZero())
	if !t.IsZero() {
		e.i64(t.Unix())
		e.u32(uint32(t.Nanosecond()))
	}
}
func (e *enc) link(l link) { e.i64(l.pos); e.u32(l.size); e.u32(l.take) }
func (e *enc) ref(r Ref) {
	e.i64(r.Start)
	e.u32(uint32(r.Len))
	e.i64(r.Prior)
	e.u32(uint32(r.Turn))
	var f uint8
	if r.User {
		f |= 1
	}
	if r.Compaction {
		f |= 2
	}
	if r.TurnStart {
		f |= 4
	}
	e.u8(f)
	e.u8(kindCode(r.Kind))
	e.str(r.ID)
}

// dec reads what enc wrote; the first fault sticks in err.
type dec struct {
	b   []byte
	err error
}

func (d *dec) need(n int) bool {
	if d.err != nil {
		return false
	}
	if n < 0 || len(d.b) < n {
		d.err = fmt.Errorf("%w: a frame ends early", ErrIndexDamaged)
		return false
	}
	return true
}
func (d *dec) u8() uint8 {
	if !d.need(1) {
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}
func (d *dec) u32() uint32 {
	if !d.need(4) {
		return 0
	}
	v := binary.LittleEndian.Uint32(d.b)
	d.b = d.b[4:]
	return v
}
func (d *dec) u64() uint64 {
	if !d.need(8) {
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}
func (d *dec) i64() int64 { return int64(d.u64()) }
func (d *dec) str() string {
	n := d.u32()
	if !d.need(int(n)) {
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
func (d *dec) flag() bool { return d.u8() != 0 }
func (d *dec) time() time.Time {
	if d.flag() {
		return time.Time{}
	}
	sec, ns := d.i64(), d.u32()
	if d.err == nil && ns >= 1e9 {
		d.err = fmt.Errorf("%w: an impossible instant", ErrIndexDamaged)
	}
	return time.Unix(sec, int64(ns)).UTC()
}
func (d *dec) link() link { return link{pos: d.i64(), size: d.u32(), take: d.u32()} }
func (d *dec) ref() Ref {
	r := Ref{Start: d.i64(), Len: int32(d.u32()), Prior: d.i64(), Turn: int32(d.u32())}
	f := d.u8()
	r.User, r.Compaction, r.TurnStart = f&1 != 0, f&2 != 0, f&4 != 0
	r.Kind = kindFromCode(d.u8())
	r.ID = d.str()
	if d.err == nil && (r.User != (r.Kind == transcript.KindUser) || r.Compaction != (r.Kind == transcript.KindCompaction)) {
		d.err = fmt.Errorf("%w: an entry's kind contradicts its flags", ErrIndexDamaged)
	}
	if d.err == nil && (f > 7 || r.Start < 0 || r.Len <= 0 || r.Turn < 0 || r.ID == "" || r.Prior < 0 || (r.Prior == 0) != (r.Turn == 0 && r.TurnStart)) {
		d.err = fmt.Errorf("%w: an entry reference is impossible", ErrIndexDamaged)
	}
	return r
}

// appendFrame appends one frame of kind holding payload.
func appendFrame(dst []byte, kind byte, payload []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(payload)))
	dst = append(dst, kind)
	dst = append(dst, payload...)
	sum := crc32.Update(crc32.Checksum([]byte{kind}, castagnoli), castagnoli, payload)
	return binary.LittleEndian.AppendUint32(dst, sum)
}

// parseFrame checks a whole frame (as appendFrame made it) and returns its
// kind and payload.
func parseFrame(b []byte) (byte, []byte, error) {
	if len(b) < frameHeadLen+4 {
		return 0, nil, fmt.Errorf("%w: a frame is cut short", ErrIndexDamaged)
	}
	n := binary.LittleEndian.Uint32(b)
	if uint64(n)+frameHeadLen+4 != uint64(len(b)) {
		return 0, nil, fmt.Errorf("%w: a frame's length does not match", ErrIndexDamaged)
	}
	kind, payload := b[4], b[frameHeadLen:frameHeadLen+n]
	sum := crc32.Update(crc32.Checksum([]byte{kind}, castagnoli), castagnoli, payload)
	if sum != binary.LittleEndian.Uint32(b[frameHeadLen+n:]) {
		return 0, nil, fmt.Errorf("%w: a frame fails its checksum", ErrIndexDamaged)
	}
	return kind, payload, nil
}

func appendTrailer(dst []byte, statePos int64) []byte {
	start := len(dst)
	dst = append(dst, trailerMagic...)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(statePos))
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

func encodeState(st *ixState) []byte {
	var e enc
	e.i64(st.prev)
	e.i64(st.logSize)
	e.u64(st.inode)
	e.i64(st.lastStart)
	e.u32(st.lastSum)
	e.u64(uint64(st.lines))
	e.flag(st.skipNL)
	e.str(st.head)
	e.u64(st.rewriteIno)
	e.i64(st.rewriteSize)
	e.u64(uint64(st.problems))
	e.str(st.title)
	e.time(st.lastAt)
	e.time(st.metaTime)
	e.flag(st.extrasLost)
	e.u32(uint32(len(st.problemList)))
	for _, p := range st.problemList {
		e.str(string(p.Kind))
		e.u64(uint64(p.Line))
		e.str(p.Type)
		e.i64(int64(p.Entry))
		e.str(p.Pointer)
		e.str(p.Msg)
	}
	e.u32(uint32(len(st.unknown)))
	for _, u := range st.unknown {
		e.u64(uint64(u.line))
		e.str(u.typ)
		e.i64(u.start)
		e.i64(u.end)
	}
	e.u32(uint32(len(st.tables)))
	for _, t := range st.tables {
		e.link(t.at)
		e.u32(uint32(t.n))
	}
	e.u32(uint32(len(st.branches)))
	for _, b := range st.branches {
		e.str(b.info.ID)
		e.str(b.info.Parent)
		e.str(b.info.AfterEntry)
		e.u32(uint32(b.info.AfterMessage))
		e.u32(uint32(b.info.ForkIndex))
		e.str(b.info.Title)
		e.i64(b.info.Created.UnixNano())
		e.u32(uint32(b.uiLines))
		e.u32(uint32(b.msgs))
		e.link(b.msgChain)
		e.flag(b.msgsMade)
		e.u32(uint32(len(b.reserved)))
		for _, id := range b.reserved {
			e.str(id)
		}
		e.link(b.last)
		e.u32(uint32(b.count))
		if b.count > 0 {
			e.ref(b.lastRef)
			e.str(b.first)
		}
		e.u32(uint32(len(b.tail)))
		for _, r := range b.tail {
			e.ref(r)
		}
		e.link(b.covAt)
		e.u32(uint32(len(b.cov)))
		e.covs(b.tailCov)
	}
	return e.b
}

func (e *enc) covs(cs []Cov) {
	e.u32(uint32(len(cs)))
	for _, c := range cs {
		e.str(c.EntryID)
		e.str(c.FromID)
		e.str(c.ToID)
		e.u32(uint32(c.Turn))
		e.u32(uint32(c.FromTurn))
		e.u32(uint32(c.ToTurn))
		e.u32(uint32(c.ordinal))
	}
}

func (d *dec) covs() []Cov {
	n := d.u32()
	if d.err == nil && uint64(n) > uint64(len(d.b)) {
		d.err = fmt.Errorf("%w: impossible compaction count", ErrIndexDamaged)
	}
	var out []Cov
	for i := uint32(0); i < n && d.err == nil; i++ {
		c := Cov{EntryID: d.str(), FromID: d.str(), ToID: d.str(),
			Turn: int32(d.u32()), FromTurn: int32(d.u32()), ToTurn: int32(d.u32()), ordinal: int(d.u32())}
		if d.err == nil && (c.Turn < 0 || c.FromTurn < -1 || c.ToTurn < -1 || c.ordinal < 0) {
			d.err = fmt.Errorf("%w: an impossible compaction", ErrIndexDamaged)
		}
		out = append(out, c)
	}
	return out
}

// loadCovs reads each branch's compactions from the frame its state names.
func (st *ixState) loadCovs(src frameSource) error {
	for _, b := range st.branches {
		n := cap(b.cov)
		if n == 0 {
			b.cov = nil
			continue
		}
		f, err := src(b.covAt)
		if err != nil {
			return err
		}
		kind, payload, err := parseFrame(f)
		if err != nil {
			return err
		}
		d := dec{b: payload}
		covs := d.covs()
		if kind != frameCovs || d.err != nil || len(d.b) != 0 || len(covs) != n {
			return fmt.Errorf("%w: branch %q's compactions frame is not what its state names", ErrIndexDamaged, b.info.ID)
		}
		b.cov = covs
	}
	return nil
}

// decodeState reads a state frame's payload; indexEnd is where the state
// frame starts, which every link must point before.
func decodeState(p []byte, indexEnd int64) (*ixState, error) {
	d := dec{b: p}
	st := &ixState{prev: d.i64(), logSize: d.i64(), inode: d.u64(), lastStart: d.i64(), lastSum: d.u32(),
		lines: int(d.u64()), skipNL: d.flag(), head: d.str(), rewriteIno: d.u64(), rewriteSize: d.i64(),
		problems: int(d.u64()), title: d.str(), lastAt: d.time(), metaTime: d.time(), extrasLost: d.flag()}
	np := d.u32()
	if d.err == nil && (np > maxTailProblems || uint64(np) > uint64(len(d.b))) {
		return nil, fmt.Errorf("%w: impossible problem count", ErrIndexDamaged)
	}
	for i := uint32(0); i < np && d.err == nil; i++ {
		p := Problem{Kind: ProblemKind(d.str()), Line: int(d.u64()), Type: d.str(), Entry: int(d.i64()), Pointer: d.str(), Msg: d.str()}
		if d.err == nil && (p.Line < 2 || p.Entry < -1) {
			d.err = fmt.Errorf("%w: an impossible problem", ErrIndexDamaged)
		}
		st.problemList = append(st.problemList, p)
	}
	nu := d.u32()
	if d.err == nil && (nu > np || uint64(nu) > uint64(len(d.b))) {
		return nil, fmt.Errorf("%w: impossible unknown line count", ErrIndexDamaged)
	}
	for i := uint32(0); i < nu && d.err == nil; i++ {
		u := unknownRef{line: int(d.u64()), typ: d.str(), start: d.i64(), end: d.i64()}
		if d.err == nil && (u.line < 2 || u.start <= 0 || u.end < u.start) {
			d.err = fmt.Errorf("%w: an impossible unknown line", ErrIndexDamaged)
		}
		st.unknown = append(st.unknown, u)
	}
	nt := d.u32()
	if d.err == nil && uint64(nt) > uint64(len(d.b)) {
		return nil, fmt.Errorf("%w: impossible ID table count", ErrIndexDamaged)
	}
	for i := uint32(0); i < nt && d.err == nil; i++ {
		t := tableSeg{at: d.link(), n: int(d.u32())}
		if d.err == nil && (t.at.pos < int64(len(indexMagic)) || t.at.pos >= indexEnd || t.n <= st.tableN()) {
			return nil, fmt.Errorf("%w: the state's ID table is impossible", ErrIndexDamaged)
		}
		st.tables = append(st.tables, t)
	}
	if d.err == nil && (st.problems < 0 || len(st.problemList) > st.problems) {
		return nil, fmt.Errorf("%w: the state is impossible", ErrIndexDamaged)
	}
	n := d.u32()
	if d.err == nil && uint64(n) > uint64(len(d.b)) {
		return nil, fmt.Errorf("%w: impossible branch count", ErrIndexDamaged)
	}
	for i := uint32(0); i < n && d.err == nil; i++ {
		b := &ixBranch{}
		b.info.ID, b.info.Parent, b.info.AfterEntry = d.str(), d.str(), d.str()
		b.info.AfterMessage, b.info.ForkIndex = int(d.u32()), int(d.u32())
		b.info.Title = d.str()
		if ns := d.i64(); ns != 0 {
			b.info.Created = time.Unix(0, ns).UTC()
		}
		b.uiLines, b.msgs = int(d.u32()), int(d.u32())
		b.msgN = b.msgs
		b.msgChain, b.msgsMade = d.link(), d.flag()
		nr := d.u32()
		if d.err == nil && (nr > maxTailReserved || uint64(nr) > uint64(len(d.b))) {
			return nil, fmt.Errorf("%w: impossible reserved count", ErrIndexDamaged)
		}
		for j := uint32(0); j < nr && d.err == nil; j++ {
			b.reserved = append(b.reserved, d.str())
		}
		b.last = d.link()
		b.count = int(d.u32())
		if b.count > 0 {
			b.lastRef = d.ref()
			b.first = d.str()
		}
		nt := d.u32()
		if d.err == nil && uint64(nt) > uint64(len(d.b)) {
			return nil, fmt.Errorf("%w: impossible tail length", ErrIndexDamaged)
		}
		for j := uint32(0); j < nt && d.err == nil; j++ {
			b.tail = append(b.tail, d.ref())
		}
		b.covAt = d.link()
		covN := int(d.u32())
		b.tailCov = d.covs()
		if d.err == nil && (b.covAt.pos < 0 || b.covAt.pos >= indexEnd || (b.covAt.pos == 0) != (covN == 0) ||
			(b.covAt.pos != 0 && b.covAt.pos < int64(len(indexMagic))) || uint64(covN) > uint64(b.covAt.size)) {
			return nil, fmt.Errorf("%w: branch %q's compactions are impossible", ErrIndexDamaged, b.info.ID)
		}
		b.cov = make([]Cov, 0, covN) // read by loadCovs
		if d.err == nil && (b.last.pos < 0 || b.last.pos >= indexEnd || (b.last.pos == 0) != (b.count == 0) ||
			(b.last.pos != 0 && int64(len(indexMagic)) > b.last.pos) ||
			b.msgChain.pos < 0 || b.msgChain.pos >= indexEnd || (b.msgChain.pos != 0 && b.msgChain.pos < int64(len(indexMagic))) ||
			(b.msgChain.pos == 0) != (b.msgs == 0) ||
			b.info.ID == "" || st.branch(b.info.ID) != nil) {
			return nil, fmt.Errorf("%w: branch %q's state is impossible", ErrIndexDamaged, b.info.ID)
		}
		st.branches = append(st.branches, b)
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w: the state frame has trailing bytes", ErrIndexDamaged)
	}
	if len(st.branches) == 0 || st.branches[0].info.ID != Main || st.branch(st.head) == nil ||
		st.logSize <= 0 || st.lastStart < 0 || st.lastStart > st.logSize || st.lines < 1 ||
		st.prev < 0 || st.prev >= indexEnd || (st.prev > 0 && st.prev < int64(len(indexMagic))) {
		return nil, fmt.Errorf("%w: the state is impossible", ErrIndexDamaged)
	}
	return st, nil
}
