package history

import (
	"hash/crc32"
	"slices"
	"time"

	"github.com/foliodev/folio/transcript"
)

// The page index. Beside each version 3 log, <log>.index records, for the
// current document of every branch, each entry's ID, turn and the bytes
// of its stored JSON in the log, plus what a reader needs to continue
// reading at the log's end. Paging a conversation then costs the index's
// last commit plus the frames of the entries a page shows, never the log.
//
// The file is append-only between rebuilds:
//
//	"FOLIOIX\x05"
//	frame*  where frame = u32 n | u8 kind | n bytes | u32 CRC-32C(kind, bytes)
//	trailer = "FIXT" | u64 offset of the last state frame | u32 CRC-32C
//
// An entries frame ('E') holds a run of one branch's entries and a link to
// the run before them; a state frame ('S') is a commit: the log it
// describes (size, inode, checksum of its last record) and each branch's
// state. A message frame ('M') holds a run of one branch's model messages
// (where their record lines are in the log) and a link to the run before
// them; a fork's chain shares its parent's up to the messages it forked
// after, as its entries share the parent's runs. A compactions frame ('C')
// holds a branch's settled compaction entries, written by a commit that
// changed them and named by the state. An ID table frame ('T') is a
// segment of the ID table (idtable.go). Each commit appends its entries frames, one state frame and a
// trailer, then fsyncs. A reader trusts the file only when its trailer and
// state frame check out and every frame it reads matches its checksum; a
// torn append fails the trailer, so the index is rebuilt.
//
// The magic's last byte is the format's version. Version 5 keeps the ID
// table (idtable.go) as segments the writer adds in steps, and a branch's
// compactions in their own frame; version 4 had one table frame, written
// by a rebuild, and every state held every compaction. Both record each
// entry in the log's own terms (its bytes, its offset among the
// document's stored entries, its turn); version 3 recorded where each
// entry fell on a web page, so a change to the page frame changed it. An
// index of another version is not a page index to this folio: it is
// rebuilt once, on its first open.

// indexSuffix is appended to a log's path to name its page index.
const indexSuffix = ".index"

// IndexPath returns the path of the page index of the log at logPath:
// beside it (<log>.index), or for a Jazz-layout log in the data folder's
// jazz-sidecars folder (see sidecarBase). Whoever deletes a log should
// delete this file too.
func IndexPath(logPath string) string { return sidecarBase(logPath) + indexSuffix }

var (
	indexMagic   = []byte("FOLIOIX\x05")
	trailerMagic = []byte("FIXT")
	castagnoli   = crc32.MakeTable(crc32.Castagnoli)
)

const (
	frameEntries  = 'E'
	frameState    = 'S'
	frameMessages = 'M'
	frameTable    = 'T'
	frameCovs     = 'C'
	trailerLen    = 16
	frameHeadLen  = 5 // u32 length, u8 kind
)

// Ref is one entry of a branch's document as the page index records it:
// where its stored JSON is in the log, how large it is, and which turn of
// the conversation it belongs to. It says nothing of how a page frames
// entries; whoever shows them does that arithmetic (server/pager).
type Ref struct {
	ID string
	// Start and Len are the entry's stored JSON in the log.
	Start int64
	Len   int32
	// Prior is the stored bytes of the document's entries before this
	// one, laid end to end: the entry's offset in the document's stored
	// JSON. The entries from ref a to ref b hold b.Prior+b.Len-a.Prior
	// bytes.
	Prior int64
	// Turn is the entry's turn, numbered from 0: a user entry is a turn
	// of its own (the user's), and the entries after it up to the next
	// user entry are one turn (the reply). TurnStart says the entry is
	// its turn's first.
	Turn      int32
	TurnStart bool
	User      bool
	// Compaction marks a compaction entry.
	Compaction bool
	// Kind is the entry's content kind ("" for a kind this folio's index
	// has no code for).
	Kind transcript.Kind
}

// startsTurn reports whether an entry starts a new turn after an entry
// whose user flag is prevUser (have false: it is the first entry).
func startsTurn(have, prevUser, user bool) bool { return !have || user || prevUser }

// follow numbers r (its ID, bytes and flags set) as the entry after prev
// (have false: the document's first entry).
func follow(prev Ref, have bool, r Ref) Ref {
	r.Turn, r.Prior, r.TurnStart = 0, 0, true
	if have {
		r.Prior = prev.Prior + int64(prev.Len)
		r.Turn = prev.Turn
		if r.TurnStart = startsTurn(have, prev.User, r.User); r.TurnStart {
			r.Turn++
		}
	}
	return r
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
	// the tail, resolved to turns. The state holds tailCov; cov is in a
	// compactions frame (covAt) written only by a commit that changed it
	// (covDirty), so a state frame stays small however many compactions
	// the log has.
	cov, tailCov []Cov
	covAt        link
	covDirty     bool
	// turns holds each settled entry's turn while building (not stored:
	// resume reads it back from the frames).
	turns []int32
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

// Cov is a compaction entry of a document resolved to turns: the turns of
// its own entry and of the first and last entries it covers (-1
// when that entry is not in the document).
type Cov struct {
	EntryID, FromID, ToID  string
	Turn, FromTurn, ToTurn int32
	ordinal                int
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
	// tables are the segments of the ID table of main's first tableN()
	// settled entries (idtable.go); none when there is no table or a
	// snapshot made it stale.
	tables []tableSeg
}

// tableN is how many of main's first settled entries the ID table holds.
func (st *ixState) tableN() int {
	if len(st.tables) == 0 {
		return 0
	}
	return st.tables[len(st.tables)-1].n
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
