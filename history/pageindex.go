package history

import (
	"hash/crc32"
	"slices"
	"strconv"
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
