package history

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/foliodev/folio/transcript"
)

// The page index. Beside each version 3 log, <log>.index records, for the
// current document of every branch, each entry's ID, display group and the
// bytes of its stored JSON in the log, plus what a reader needs to continue
// reading at the log's end. Paging a conversation then costs the index's
// last commit plus the frames of the entries a page shows, never the log.
//
// The file is append-only between rebuilds:
//
//	"FOLIOIX\x03"
//	frame*  where frame = u32 n | u8 kind | n bytes | u32 CRC-32C(kind, bytes)
//	trailer = "FIXT" | u64 offset of the last state frame | u32 CRC-32C
//
// An entries frame ('E') holds a run of one branch's entries and a link to
// the run before them; a state frame ('S') is a commit: the log it
// describes (size, inode, checksum of its last record) and each branch's
// state. A message frame ('M') holds a run of one branch's model messages
// (where their record lines are in the log) and a link to the run before
// them; a fork's chain shares its parent's up to the messages it forked
// after, as its entries share the parent's runs. Each commit appends its entries frames, one state frame and a
// trailer, then fsyncs. A reader trusts the file only when its trailer and
// state frame check out and every frame it reads matches its checksum; a
// torn append fails the trailer, so the index is rebuilt.

// indexSuffix is appended to a log's path to name its page index.
const indexSuffix = ".index"

// IndexPath returns the path of the page index of the log at logPath:
// beside it (<log>.index), or for a Jazz-layout log in the data folder's
// jazz-sidecars folder (see sidecarBase). Whoever deletes a log should
// delete this file too.
func IndexPath(logPath string) string { return sidecarBase(logPath) + indexSuffix }

var (
	indexMagic   = []byte("FOLIOIX\x03")
	trailerMagic = []byte("FIXT")
	castagnoli   = crc32.MakeTable(crc32.Castagnoli)
)

const (
	frameEntries  = 'E'
	frameState    = 'S'
	frameMessages = 'M'
	frameTable    = 'T'
	trailerLen    = 16
	frameHeadLen  = 5 // u32 length, u8 kind
)

// Ref is one entry of a branch's document as the page index records it.
type Ref struct {
	ID string
	// Start and Len are the entry's stored JSON in the log.
	Start int64
	Len   int32
	// Group is the entry's display group: a user entry is a group of its
	// own, and every other entry joins the group of the entry before it
	// unless that one is a user entry.
	Group int32
	User  bool
	// Compaction marks a compaction entry.
	Compaction bool
	// Kind is the entry's content kind ("" for a kind this folio's index
	// has no code for).
	Kind transcript.Kind
	// Before is the page bytes of the groups before this entry's, each
	// followed by its comma; GroupLen and GroupN are the stored bytes and
	// the number of the entries of its group up to and including this one.
	// So the page bytes of a document's prefix ending at this entry are
	// Before + GroupBytes(Group, GroupLen, GroupN).
	Before   int64
	GroupLen int64
	GroupN   int32
}

// startsGroup reports whether an entry starts a new display group after an
// entry whose user flag is prevUser (have false: it is the first entry).
func startsGroup(have, prevUser, user bool) bool { return !have || user || prevUser }

// follow numbers r (its ID, bytes and flags set) as the entry after prev
// (have false: the document's first entry).
func follow(prev Ref, have bool, r Ref) Ref {
	if !startsGroup(have, prev.User, r.User) {
		r.Group, r.Before, r.GroupLen, r.GroupN = prev.Group, prev.Before, prev.GroupLen+int64(r.Len), prev.GroupN+1
		return r
	}
	r.Group, r.Before, r.GroupLen, r.GroupN = 0, 0, int64(r.Len), 1
	if have {
		r.Group = prev.Group + 1
		r.Before = prev.Before + GroupBytes(int(prev.Group), prev.GroupLen, int(prev.GroupN)) + 1
	}
	return r
}

// GroupOpen appends the start of display group index's JSON on a page:
// {"index":N,"entries":[ — its entries follow, joined by commas, then
// GroupClose.
func GroupOpen(dst []byte, index int) []byte {
	dst = append(dst, `{"index":`...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	return append(dst, `,"entries":[`...)
}

// GroupClose appends the end of a display group's JSON: ],"bytes":M} where
// M is the group's whole size (GroupBytes), its own digits included.
func GroupClose(dst []byte, index int, entriesLen int64, n int) []byte {
	dst = append(dst, `],"bytes":`...)
	dst = strconv.AppendInt(dst, GroupBytes(index, entriesLen, n), 10)
	return append(dst, '}')
}

// GroupBytes is the size of display group index's JSON on a page when its
// n entries' stored JSON totals entriesLen bytes. A client budgets pages
// with it, so it counts the digits of the number that states it.
func GroupBytes(index int, entriesLen int64, n int) int64 {
	size := int64(len(`{"index":`)+digits(int64(index))+len(`,"entries":[`)+len(`],"bytes":}`)) + entriesLen + int64(max(n-1, 0))
	for d := int64(1); ; d++ {
		if int64(digits(size+d)) == d {
			return size + d
		}
	}
}

// digits is the number of decimal digits of v ≥ 0.
func digits(v int64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

// entryKinds numbers the content kinds in the index (code i+1 is
// entryKinds[i]; 0 is a kind not listed, which a reader must decode the
// entry to learn). Codes are never reused: a new kind goes at the end.
var entryKinds = []transcript.Kind{
	transcript.KindUser, transcript.KindAgent, transcript.KindReasoning, transcript.KindTool,
	transcript.KindNotice, transcript.KindReport, transcript.KindHeader, transcript.KindTurnReceipt,
	transcript.KindStopped, transcript.KindExpanded, transcript.KindFailure, transcript.KindSteering,
	transcript.KindCompaction,
}

func kindCode(k transcript.Kind) uint8 {
	if i := slices.Index(entryKinds, k); i >= 0 {
		return uint8(i + 1)
	}
	return 0
}

func kindFromCode(c uint8) transcript.Kind {
	if c == 0 || int(c) > len(entryKinds) {
		return ""
	}
	return entryKinds[c-1]
}

// link points at the end of a run of entries: the first take refs of the
// entries frame at pos (size bytes, framing included). pos 0 is no run.
type link struct {
	pos  int64
	size uint32
	take uint32
}

// ixBranch is one branch's document as the index holds it.
type ixBranch struct {
	info    Branch
	uiLines int
	msgs    int
	last    link   // the settled entries' run
	count   int    // settled entries
	lastRef Ref    // the last settled entry (when count > 0)
	first   string // the first settled entry's ID (when count > 0)
	tail    []Ref
	// cov and tailCov are the compactions among the settled entries and
	// the tail, resolved to groups.
	cov, tailCov []Cov
	// groups holds each settled entry's group while building (not stored:
	// resume reads it back from the frames).
	groups []int32
	// msgChain is the branch's model messages since its last rewrite (a
	// chain of message frames, msgs of them); msgsMade says whether its
	// list was ever made (a reader's empty list is then not nil).
	msgChain link
	msgsMade bool
	// reserved is the branch's reserved IDs (rejected batches' since its
	// last snapshot), sorted; stored only while the state's extras are
	// kept (ixState.extrasLost).
	reserved []string
	// msgN is how many messages the chain and msgPending hold, msgPending
	// the ones not yet in a frame (written at the commit); not stored.
	msgN       int
	msgPending []msgRef
}

// Cov is a compaction entry of a document resolved to display groups: the
// groups of its own entry and of the first and last entries it covers (-1
// when that entry is not in the document).
type Cov struct {
	EntryID, FromID, ToID     string
	Group, FromGroup, ToGroup int32
	ordinal                   int
}

// ixState is a commit: what the log looked like and every branch's state.
type ixState struct {
	prev      int64 // the previous commit's state frame, 0 for none
	logSize   int64
	inode     uint64
	lastStart int64  // the last record's first byte
	lastSum   uint32 // CRC-32C of the log's bytes lastStart..logSize
	lines     int    // lines read (the header included)
	skipNL    bool   // the last applied line had no newline
	head      string
	branches  []*ixBranch // main first, then in fork order
	// rewriteIno and rewriteSize name the log this one was rewritten from
	// (compaction, upgrade), which held the same documents at that size; 0
	// when the log was not made by a rewrite.
	rewriteIno  uint64
	rewriteSize int64
	// What Log.LoadTail returns besides the documents (tailindex.go):
	// how many problems the log has, the newest title, the newest
	// record's at and meta updatedAt. While the log has few problems
	// (maxTailProblems) and reserved IDs (maxTailReserved), the problems
	// themselves, the unknown lines and each branch's reserved IDs are
	// kept too; past either bound extrasLost is set, for good (until a
	// rebuild), and LoadTail reads such a log whole.
	problems         int
	title            string
	lastAt, metaTime time.Time
	problemList      []Problem
	unknown          []unknownRef
	extrasLost       bool
	// idTable is the ID table frame of main's first idTableN settled
	// entries (idtable.go); pos 0 when there is none or a snapshot made
	// it stale.
	idTable  link
	idTableN int
}

// unknownRef is a line the reader keeps verbatim (Conversation.Unknown):
// its number, type and bytes in the log (without the newline).
type unknownRef struct {
	line       int
	typ        string
	start, end int64
}

// The bounds on what a state keeps of a log's problems: past them, the
// tail read declines and the log is read whole.
const (
	maxTailProblems = 64
	maxTailReserved = 4096 // reserved IDs, over every branch
)

// extrasOK reports whether the state holds every problem, unknown line and
// reserved ID of the log.
func (st *ixState) extrasOK() bool {
	return !st.extrasLost && len(st.problemList) == st.problems
}

func (st *ixState) branch(id string) *ixBranch {
	for _, b := range st.branches {
		if b.info.ID == id {
			return b
		}
	}
	return nil
}

// ---- encoding ---------------------------------------------------------------

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
	e.u32(uint32(r.Group))
	var f uint8
	if r.User {
		f |= 1
	}
	if r.Compaction {
		f |= 2
	}
	e.u8(f)
	e.u8(kindCode(r.Kind))
	e.i64(r.Before)
	e.i64(r.GroupLen)
	e.u32(uint32(r.GroupN))
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
	r := Ref{Start: d.i64(), Len: int32(d.u32()), Group: int32(d.u32())}
	f := d.u8()
	r.User, r.Compaction = f&1 != 0, f&2 != 0
	r.Kind = kindFromCode(d.u8())
	r.Before, r.GroupLen, r.GroupN = d.i64(), d.i64(), int32(d.u32())
	r.ID = d.str()
	if d.err == nil && (r.User != (r.Kind == transcript.KindUser) || r.Compaction != (r.Kind == transcript.KindCompaction)) {
		d.err = fmt.Errorf("%w: an entry's kind contradicts its flags", ErrIndexDamaged)
	}
	if d.err == nil && (r.Start < 0 || r.Len <= 0 || r.Group < 0 || r.ID == "" || r.Before < 0 || r.GroupN < 1 || r.GroupLen < int64(r.Len)) {
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
	e.link(st.idTable)
	e.u32(uint32(st.idTableN))
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
		e.covs(b.cov)
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
		e.u32(uint32(c.Group))
		e.u32(uint32(c.FromGroup))
		e.u32(uint32(c.ToGroup))
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
			Group: int32(d.u32()), FromGroup: int32(d.u32()), ToGroup: int32(d.u32()), ordinal: int(d.u32())}
		if d.err == nil && (c.Group < 0 || c.FromGroup < -1 || c.ToGroup < -1 || c.ordinal < 0) {
			d.err = fmt.Errorf("%w: an impossible compaction", ErrIndexDamaged)
		}
		out = append(out, c)
	}
	return out
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
	st.idTable, st.idTableN = d.link(), int(d.u32())
	if d.err == nil && (st.idTable.pos < 0 || st.idTable.pos >= indexEnd || (st.idTable.pos != 0 && st.idTable.pos < int64(len(indexMagic)))) {
		return nil, fmt.Errorf("%w: the state is impossible", ErrIndexDamaged)
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
		b.cov, b.tailCov = d.covs(), d.covs()
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

// entriesFrame is a decoded entries frame.
type entriesFrame struct {
	prev    link
	ordinal int
	refs    []Ref
	size    uint32 // the frame's, framing included (when read by position)
}

func encodeEntries(prev link, ordinal int, refs []Ref) []byte {
	var e enc
	e.link(prev)
	e.u32(uint32(ordinal))
	e.u32(uint32(len(refs)))
	for _, r := range refs {
		e.ref(r)
	}
	return e.b
}

func decodeEntries(p []byte, at int64) (entriesFrame, error) {
	d := dec{b: p}
	f := entriesFrame{prev: d.link(), ordinal: int(d.u32())}
	n := d.u32()
	if d.err == nil && uint64(n) > uint64(len(d.b)) {
		return f, fmt.Errorf("%w: impossible entry count", ErrIndexDamaged)
	}
	f.refs = make([]Ref, 0, n)
	for i := uint32(0); i < n && d.err == nil; i++ {
		f.refs = append(f.refs, d.ref())
	}
	if d.err != nil {
		return f, d.err
	}
	if len(d.b) != 0 || f.prev.pos < 0 || f.prev.pos >= at || (f.prev.pos == 0) != (f.ordinal == 0) {
		return f, fmt.Errorf("%w: an entries frame is impossible", ErrIndexDamaged)
	}
	return f, nil
}

// msgRef is one model message of main since its last rewrite: the bytes
// of its record's line in the log, without the newline.
type msgRef struct {
	start int64
	len   int32
}

func encodeMessages(prev link, ordinal int, refs []msgRef) []byte {
	var e enc
	e.link(prev)
	e.u32(uint32(ordinal))
	e.u32(uint32(len(refs)))
	for _, r := range refs {
		e.i64(r.start)
		e.u32(uint32(r.len))
	}
	return e.b
}

// walkMessages reads the count message refs a chain of message frames
// ends with, first to last.
func walkMessages(src frameSource, l link, count int) ([]msgRef, error) {
	return walkChain(src, l, count, frameMessages, "messages", func(d *dec) msgRef {
		m := msgRef{start: d.i64(), len: int32(d.u32())}
		if d.err == nil && (m.start <= 0 || m.len <= 0) {
			d.err = fmt.Errorf("%w: an impossible message", ErrIndexDamaged)
		}
		return m
	})
}

// walkChain reads the count items a chain of frames of one kind ends
// with, first to last, decoding each frame's items straight into place;
// what says what the items are in its errors. Every frame must continue
// the one after it exactly, or the index is damaged.
func walkChain[T any](src frameSource, l link, count int, kind byte, what string, item func(*dec) T) ([]T, error) {
	out := make([]T, count)
	next := count
	for l.pos != 0 {
		b, err := src(l)
		if err != nil {
			return nil, err
		}
		k, payload, err := parseFrame(b)
		if err != nil {
			return nil, err
		}
		if k != kind {
			return nil, fmt.Errorf("%w: a link does not point at %s", ErrIndexDamaged, what)
		}
		d := dec{b: payload}
		prev, ord, n := d.link(), int(d.u32()), d.u32()
		take := int(l.take)
		if d.err != nil || take == 0 || uint32(take) > n || ord+take != next || prev.pos < 0 || prev.pos >= l.pos || (prev.pos == 0) != (ord == 0) {
			return nil, fmt.Errorf("%w: a run of %s does not continue the one after it", ErrIndexDamaged, what)
		}
		for i := range take {
			out[ord+i] = item(&d)
		}
		if d.err != nil {
			return nil, d.err
		}
		next, l = ord, prev
	}
	if next != 0 {
		return nil, fmt.Errorf("%w: a chain of %s ends before its first", ErrIndexDamaged, what)
	}
	return out, nil
}

// decodeIndex checks a whole page index file held in memory and returns
// its last commit and every branch's document (the fuzz target). It reads
// every frame the commit's documents reach, so anything it accepts pages
// without a checksum failure.
func decodeIndex(data []byte) (*ixState, [][]Ref, error) {
	st, _, err := decodeTrailer(data)
	if err != nil {
		return nil, nil, err
	}
	src := bytesFrames(data)
	docs := make([][]Ref, len(st.branches))
	for i, b := range st.branches {
		refs, err := walk(src, b.last, b.count, b.lastRef)
		if err != nil {
			return nil, nil, err
		}
		docs[i] = refs
	}
	for _, b := range st.branches {
		if _, err := walkMessages(src, b.msgChain, b.msgs); err != nil {
			return nil, nil, err
		}
	}
	if st.idTable.pos != 0 {
		t, err := openIDTable(bytes.NewReader(data), int64(len(data)), st.idTable)
		if err != nil {
			return nil, nil, err
		}
		for b := range t.n {
			if _, err := t.bucket(b); err != nil {
				return nil, nil, err
			}
		}
	}
	return st, docs, nil
}

// decodeTrailer reads the last commit of a whole index file.
func decodeTrailer(data []byte) (*ixState, int64, error) {
	st, pos, err := decodeTrailerAt(data)
	return st, pos, err
}

func decodeTrailerAt(data []byte) (st *ixState, pos int64, err error) {
	defer func() {
		if err != nil {
			st, pos = nil, 0
		}
	}()
	if len(data) < len(indexMagic)+trailerLen || string(data[:len(indexMagic)]) != string(indexMagic) {
		return nil, 0, fmt.Errorf("%w: not a page index", ErrIndexDamaged)
	}
	t := data[len(data)-trailerLen:]
	if string(t[:4]) != string(trailerMagic) || crc32.Checksum(t[:12], castagnoli) != binary.LittleEndian.Uint32(t[12:]) {
		return nil, 0, fmt.Errorf("%w: the trailer is damaged", ErrIndexDamaged)
	}
	pos = int64(binary.LittleEndian.Uint64(t[4:]))
	end := int64(len(data) - trailerLen)
	if pos < int64(len(indexMagic)) || pos+frameHeadLen+4 > end {
		return nil, 0, fmt.Errorf("%w: the trailer points outside the file", ErrIndexDamaged)
	}
	kind, payload, err := parseFrame(data[pos:end])
	if err != nil {
		return nil, 0, err
	}
	if kind != frameState {
		return nil, 0, fmt.Errorf("%w: the trailer does not point at a state", ErrIndexDamaged)
	}
	st, err = decodeState(payload, pos)
	return st, pos, err
}

// frameSource reads whole frames by position.
type frameSource func(l link) ([]byte, error)

func bytesFrames(data []byte) frameSource {
	return func(l link) ([]byte, error) {
		end := l.pos + int64(l.size)
		if l.pos < int64(len(indexMagic)) || end > int64(len(data)) || end < l.pos {
			return nil, fmt.Errorf("%w: a link points outside the file", ErrIndexDamaged)
		}
		return data[l.pos:end], nil
	}
}

func fileFrames(f io.ReaderAt, size int64) frameSource {
	return func(l link) ([]byte, error) {
		end := l.pos + int64(l.size)
		if l.pos < int64(len(indexMagic)) || end > size || end < l.pos {
			return nil, fmt.Errorf("%w: a link points outside the file", ErrIndexDamaged)
		}
		b := make([]byte, l.size)
		if _, err := f.ReadAt(b, l.pos); err != nil {
			return nil, fmt.Errorf("read the page index: %w", err)
		}
		return b, nil
	}
}

// readRun reads the run a link ends: its refs and the link before it.
func readRun(src frameSource, l link) (ordinal int, refs []Ref, prev link, err error) {
	b, err := src(l)
	if err != nil {
		return 0, nil, link{}, err
	}
	kind, payload, err := parseFrame(b)
	if err != nil {
		return 0, nil, link{}, err
	}
	if kind != frameEntries {
		return 0, nil, link{}, fmt.Errorf("%w: a link does not point at entries", ErrIndexDamaged)
	}
	f, err := decodeEntries(payload, l.pos)
	if err != nil {
		return 0, nil, link{}, err
	}
	if int(l.take) > len(f.refs) || l.take == 0 {
		return 0, nil, link{}, fmt.Errorf("%w: a link takes more entries than its frame has", ErrIndexDamaged)
	}
	return f.ordinal, f.refs[:l.take], f.prev, nil
}

// walk reads the count settled entries a chain ends with, first to last,
// and checks them against the state's last entry and the group rule.
func walk(src frameSource, l link, count int, last Ref) ([]Ref, error) {
	out, err := walkChain(src, l, count, frameEntries, "entries", (*dec).ref)
	if err != nil {
		return nil, err
	}
	if count > 0 && out[count-1] != last {
		return nil, fmt.Errorf("%w: the last entry is not the one the state names", ErrIndexDamaged)
	}
	if err := checkGroups(out); err != nil {
		return nil, err
	}
	return out, nil
}

// checkGroups verifies that refs, a whole document, are numbered into
// groups by the rule.
func checkGroups(refs []Ref) error { return checkGroupsFrom(refs, 0) }

// ---- building ---------------------------------------------------------------

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
	// mainRuns are the entries frames of main's chain this builder wrote,
	// by their first ordinal, for the ID table.
	mainRuns []runAt
}

// runAt is an entries frame of a chain and the ordinal of its first entry.
type runAt struct {
	ord int
	pos int64
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
		b.mainRuns = append(b.mainRuns, runAt{ord: br.count, pos: pos})
	}
	b.pending = appendFrame(b.pending, frameEntries, encodeEntries(br.last, br.count, refs))
	br.last = link{pos: pos, size: uint32(len(b.pending) - n), take: uint32(len(refs))}
	br.count += len(refs)
	br.lastRef = refs[len(refs)-1]
	for _, r := range refs {
		br.groups = append(br.groups, r.Group)
	}
}

// covsOf resolves the compaction entries of a batch (refs, at ordinal
// from) against the document's IDs, which ids indexes by ordinal.
func covsOf(batch []Stored, refs []Ref, from int, ids *idSet, groups []int32, tail []Ref) []Cov {
	var out []Cov
	groupOf := func(id string) int32 {
		if i := ids.index(id); i >= 0 && i < len(groups) {
			return groups[i]
		}
		for _, r := range tail {
			if r.ID == id {
				return r.Group
			}
		}
		return -1
	}
	for i, s := range batch {
		c, ok := s.Entry.Content.(transcript.Compaction)
		if !ok {
			continue
		}
		out = append(out, Cov{EntryID: s.Entry.ID, FromID: c.Covers.FromID, ToID: c.Covers.ToID,
			Group: refs[i].Group, ordinal: from + i})
	}
	for i := range out {
		out[i].FromGroup, out[i].ToGroup = groupOf(out[i].FromID), groupOf(out[i].ToID)
	}
	return out
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
				b.st.idTable, b.st.idTableN, b.mainRuns = link{}, 0, nil
			}
			br.last, br.count, br.lastRef, br.first, br.cov, br.groups = link{}, 0, Ref{}, "", nil, nil
		}
		refs := refsOf(rec.Batch, br.lastRef, br.count > 0)
		if rec.Type == TypeUIOpen {
			br.tail = refs
			br.tailCov = covsOf(rec.Batch, refs, br.count, s.idsOf(br.info.ID), br.groups, refs)
			return nil
		}
		br.tail, br.tailCov = nil, nil
		from := br.count
		b.appendRun(br, refs)
		br.cov = append(br.cov, covsOf(rec.Batch, refs, from, s.idsOf(br.info.ID), br.groups, nil)...)
	case TypeBranch:
		info, ok := s.branchInfo(rec.Branch)
		if !ok {
			return fmt.Errorf("history: index: branch %q was not read", rec.Branch)
		}
		parent := b.st.branch(info.Parent)
		if parent == nil {
			return fmt.Errorf("history: index: parent %q of branch %q is unknown", info.Parent, info.ID)
		}
		nb := &ixBranch{info: info}
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
			nb.groups = slices.Clone(parent.groups[:min(k, len(parent.groups))])
			for _, c := range append(slices.Clone(parent.cov), parent.tailCov...) {
				if c.ordinal < k {
					// What it covers is resolved again against the branch.
					c.FromGroup, c.ToGroup = -1, -1
					if i := s.idsOf(nb.info.ID).index(c.FromID); i >= 0 && i < k {
						c.FromGroup = groupAt(parent, i)
					}
					if i := s.idsOf(nb.info.ID).index(c.ToID); i >= 0 && i < k {
						c.ToGroup = groupAt(parent, i)
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

// groupAt is the group of entry i of a branch's document, tail included.
func groupAt(b *ixBranch, i int) int32 {
	if i < len(b.groups) {
		return b.groups[i]
	}
	return b.tail[i-len(b.groups)].Group
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

// Coverage is the document's compaction entries, resolved to groups.
func (d *IndexDoc) Coverage() []Cov {
	return append(slices.Clip(d.br.cov), d.br.tailCov...)
}

// Refs returns entries lo..hi (hi exclusive) of the document. Reading
// backwards from the end costs the frames read; a read far from the end
// reads the whole index file once, unless Find last found an entry
// through the ID table: then it costs the frames from that entry's back to
// lo and, past it, forwards to hi (near).
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

// load reads settled refs back to lo.
func (d *IndexDoc) load(lo int) error {
	if lo >= d.from {
		return nil
	}
	src := d.ix.frames()
	if d.from-lo > 4096 {
		// Far back: one read of the whole file and one walk of the chain
		// beat a frame at a time.
		data, err := d.ix.whole()
		if err != nil {
			return err
		}
		all, err := walk(bytesFrames(data), d.br.last, d.br.count, d.br.lastRef)
		if err != nil {
			return err
		}
		d.loaded, d.from, d.cursor = all, 0, link{}
		return nil
	}
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
	// The groups of what was read must follow the rule, into what was
	// loaded before.
	if err := checkGroupsFrom(loaded, next); err != nil {
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
	if err := checkGroupsFrom(out, lo); err != nil {
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
func (d *IndexDoc) ahead(lo, hi int) ([]Ref, error) {
	st := d.ix.st
	src := d.ix.frames()
	cur, at := d.hit, d.hitAt
	var out []Ref
	for {
		take, succ, succAt := -1, entriesFrame{}, link{}
		if at.pos == d.br.last.pos {
			take = int(d.br.last.take)
		} else {
			var err error
			succ, succAt, err = d.successor(src, at)
			if err != nil || succAt.pos == 0 {
				return nil, err
			}
			take = int(succ.prev.take)
		}
		if take == 0 || take > len(cur.refs) {
			return nil, fmt.Errorf("%w: a link takes more entries than its frame has", ErrIndexDamaged)
		}
		if a, b := max(lo, cur.ordinal), min(hi, cur.ordinal+take); a < b {
			out = append(out, cur.refs[a-cur.ordinal:b-cur.ordinal]...)
		}
		if cur.ordinal+take >= hi {
			return out, nil
		}
		if succAt.pos == 0 || succ.ordinal != cur.ordinal+take || succ.ordinal >= st.idTableN {
			return nil, nil
		}
		cur, at = succ, succAt
	}
}

// successor finds main's entries frame after the one at at, scanning the
// index file forwards from it; a zero link when it is not found.
func (d *IndexDoc) successor(src frameSource, at link) (entriesFrame, link, error) {
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
		if f.prev.pos == at.pos && len(f.refs) > 0 && f.ordinal < d.ix.st.idTableN {
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
	if err := checkGroupsFrom(out, next); err != nil {
		return nil, err
	}
	return out[lo-next : hi-next], nil
}

// checkGroupsFrom checks the group numbering of refs, which start at
// ordinal from (the first one's group is taken as given unless from is 0).
func checkGroupsFrom(refs []Ref, from int) error {
	for i, r := range refs {
		if i == 0 && from > 0 {
			continue
		}
		var prev Ref
		if i > 0 {
			prev = refs[i-1]
		}
		if follow(prev, i > 0, r) != r {
			return fmt.Errorf("%w: entry %d is numbered wrong", ErrIndexDamaged, from+i)
		}
	}
	return nil
}

func (ix *Index) whole() ([]byte, error) {
	if ix.mem != nil {
		return ix.mem, nil
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.data != nil {
		return ix.data, nil
	}
	b := make([]byte, ix.end)
	if _, err := ix.f.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("read the page index: %w", err)
	}
	ix.data = b
	return b, nil
}

// readIndexFile opens and checks the index at path: trailer and last
// state frame. It does not look at the log.
func readIndexFile(path string) (*Index, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	// The frames a commit reaches never change once written; only the
	// end of the file does, while a commit is appended.
	unlock, err := lockIndexShared(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	defer unlock()
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	size := fi.Size()
	if size < int64(len(indexMagic)+trailerLen) {
		f.Close()
		return nil, fmt.Errorf("%w: too short", ErrIndexDamaged)
	}
	head := make([]byte, len(indexMagic))
	t := make([]byte, trailerLen)
	if _, err := f.ReadAt(head, 0); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.ReadAt(t, size-trailerLen); err != nil {
		f.Close()
		return nil, err
	}
	if string(head) != string(indexMagic) {
		f.Close()
		return nil, fmt.Errorf("%w: not a page index", ErrIndexDamaged)
	}
	if string(t[:4]) != string(trailerMagic) || crc32.Checksum(t[:12], castagnoli) != binary.LittleEndian.Uint32(t[12:]) {
		f.Close()
		return nil, fmt.Errorf("%w: the trailer is damaged", ErrIndexDamaged)
	}
	pos := int64(binary.LittleEndian.Uint64(t[4:]))
	end := size - trailerLen
	if pos < int64(len(indexMagic)) || pos+frameHeadLen+4 > end {
		f.Close()
		return nil, fmt.Errorf("%w: the trailer points outside the file", ErrIndexDamaged)
	}
	b := make([]byte, end-pos)
	if _, err := f.ReadAt(b, pos); err != nil {
		f.Close()
		return nil, err
	}
	kind, payload, err := parseFrame(b)
	if err == nil && kind != frameState {
		err = fmt.Errorf("%w: the trailer does not point at a state", ErrIndexDamaged)
	}
	var st *ixState
	if err == nil {
		st, err = decodeState(payload, pos)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Index{f: f, end: size, st: st, pos: pos}, nil
}

// readState reads the commit whose state frame is at pos.
func readState(src frameSource, pos int64) (*ixState, error) {
	hd, err := src(link{pos: pos, size: frameHeadLen})
	if err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint32(hd)
	b, err := src(link{pos: pos, size: frameHeadLen + n + 4})
	if err != nil {
		return nil, err
	}
	kind, payload, err := parseFrame(b)
	if err == nil && kind != frameState {
		err = fmt.Errorf("%w: a commit link does not point at a state", ErrIndexDamaged)
	}
	if err != nil {
		return nil, err
	}
	return decodeState(payload, pos)
}

// back returns the index as of its latest commit that describes at most
// size bytes of the log (a reader that stopped inside a write the index
// has committed extends it from there). Commits are read newest first, so
// this costs one frame per commit since.
func (ix *Index) back(size int64) (*Index, bool) {
	st, pos := ix.st, ix.pos
	for i := 0; st.logSize > size && st.prev > 0 && i < 1<<16; i++ {
		prev, err := readState(ix.frames(), st.prev)
		if err != nil || prev.logSize >= st.logSize {
			return nil, false
		}
		st, pos = prev, st.prev
	}
	if st.logSize > size {
		return nil, false
	}
	return &Index{f: ix.f, mem: ix.mem, end: ix.end, st: st, pos: pos}, true
}

// lastRecordSum is the CRC-32C of log bytes start..end.
func lastRecordSum(f io.ReaderAt, start, end int64) (uint32, error) {
	b := make([]byte, end-start)
	if _, err := f.ReadAt(b, start); err != nil {
		return 0, err
	}
	return crc32.Checksum(b, castagnoli), nil
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
	if d.br != st.branches[0] || st.idTable.pos == 0 || st.idTableN > d.br.count {
		return -1, false
	}
	// The entries since the table (the provisional tail included).
	if d.br.count+len(d.br.tail)-st.idTableN > 4096 {
		return -1, false
	}
	refs, err := d.Refs(st.idTableN, d.Len())
	if err != nil {
		return -1, false
	}
	for i, r := range refs {
		if r.ID == id {
			return st.idTableN + i, true
		}
	}
	var src io.ReaderAt = d.ix.f
	if d.ix.mem != nil {
		src = bytes.NewReader(d.ix.mem)
	}
	t, err := openIDTable(src, d.ix.end, st.idTable)
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
			if r.ID == id && f.ordinal+j < st.idTableN {
				d.hit, d.hitOrd, d.hitOK, d.hitFrom = f, f.ordinal+j, true, t
				d.hitAt = link{pos: pos, size: f.size}
				return f.ordinal + j, true
			}
		}
	}
	return -1, true
}

// readEntriesFrame reads and checks the entries frame at pos.
func readEntriesFrame(src frameSource, pos int64) (entriesFrame, error) {
	hd, err := src(link{pos: pos, size: frameHeadLen})
	if err != nil {
		return entriesFrame{}, err
	}
	b, err := src(link{pos: pos, size: frameHeadLen + binary.LittleEndian.Uint32(hd) + 4})
	if err != nil {
		return entriesFrame{}, err
	}
	kind, payload, err := parseFrame(b)
	if err == nil && kind != frameEntries {
		err = fmt.Errorf("%w: an ID table entry does not point at entries", ErrIndexDamaged)
	}
	if err != nil {
		return entriesFrame{}, err
	}
	f, err := decodeEntries(payload, pos)
	f.size = uint32(len(b))
	return f, err
}

// Close closes the index the document was read from.
func (d *IndexDoc) Close() error { return d.ix.Close() }
