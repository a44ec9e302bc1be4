package server

import (
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/server/pager"
	"github.com/foliodev/folio/transcript"
)

// conversation is what the server keeps for one conversation: a few parts,
// each with one owner and one lock regime, that it composes.
//
//   - feed (feed.go): the live events clients follow: generation,
//     sequence, the entries changed in this generation, the ring of changes,
//     the subscribers. Guarded by mu; gen is also read without it.
//   - follower (follower.go, capture.go, capture_build.go): the reading
//     of a log another process writes, and the captures that share it.
//     Guarded by mu; a capture's reads of the log run outside it, one at a
//     time (building).
//   - stream (replica_live.go): what replicas relayed to each other of
//     their engines' live changes. Guarded by mu.
//   - logWriter (turns_open.go): this server's engine while it holds the log,
//     the goroutines that own the log and publish the engine's store, and
//     the conversation's model choice. Its fields are guarded by mu, except
//     lastUsed and saved, written whole (atomics). The goroutines own what
//     they work on: the open log and its title mark (heldLog, keepLog) and
//     the publisher's marks (publisher, turns_publish.go).
//
// There is one producer of live changes at a time: the follower, or the
// logWriter's engine from open to close (acquireLocked, releaseLocked).
//
// What it does not keep: the queue, the running turn, the approvals and
// the command receipts. The engine is their only authority; they are read
// from its store's transcript.Live (controlOf) and from the engine itself.
// On a replica whose engine does not hold the conversation, the server
// keeps the last ones the owner relayed, for snapshots (relayedStates).
type conversation struct {
	srv  *Server
	id   string
	path string

	mu sync.Mutex // guards every part but what the parts' comments name
	// evicted is set when the server forgot the conversation (evict): a
	// caller that found it before must look it up again. Guarded by mu.
	evicted bool

	feed
	follower
	stream
	logWriter
}

// feed is a conversation's live events. Guarded by the conversation's mu.
type feed struct {
	id  string       // the conversation's
	gen atomic.Int64 // written under mu; read without it by token checks

	seq       int64
	head      string
	subs      map[*conn]struct{}
	live      map[string]*liveEntry
	ring      []ringItem // changes in seq order; stale items are skipped
	forgotten int64      // highest seq dropped from live
	liveBytes int        // bytes of the entries in live
	lastID    string     // the document's last entry, for "after"
	deleted   bool
}

// follower is a conversation's reading of its log, and the captures that
// share it. Guarded by the conversation's mu.
type follower struct {
	// Captures, one at a time so concurrent opens share: building is
	// closed when the capture in progress ends; a later capture waits for
	// it and then reuses shared, the snapshot it left, when it still fits.
	building chan struct{}
	shared   struct {
		snap     *pager.Snapshot
		gen, seq int64
		off      int64
		head     string // another head is another document, whatever the generation
	}

	// The log file and the reader that has read it so far.
	f      *os.File         // open only while followed
	fi     os.FileInfo      // the file sc read
	sc     *history.Scanner // nil until the first read, or while the log is missing
	synced bool             // sc (or its absence) describes the file
	stop   chan struct{}
	// resumeAt, while sc is nil, is the offset up to which the follower's
	// reading is the log's page index (capture.go): sc is resumed from the
	// index when the log grows past it.
	resumeAt int64
}

// stream is what replicas stream to each other of answers not yet saved
// (replica_live.go). Guarded by the conversation's mu.
type stream struct {
	// remote: open entries other replicas' streaming messages reached;
	// streamed: what this replica's engine streamed to the others, by
	// entry.
	remote   map[string]*remoteEntry
	streamed map[string]*streamSent
	// relayAt: when the owner's last change came; receipts: the receipts of recent commands the tabs were sent, in
	// receiptOrder (oldest first).
	relayAt      time.Time // when the owner's last change came
	receipts     map[string][]Receipt
	receiptOrder []string
	// emptyOf is the follower's scanner while the document it read is
	// empty (checkedOf: the scanner that was looked at); replacing: a record of this read replaced that empty
	// document, settled at the read's end (settleReplaceLocked), at
	// replaceEnd; it waits from replaceSince for the log to catch up.
	emptyOf      *history.Scanner
	checkedOf    *history.Scanner
	replacing    bool
	replaceEnd   int64
	replaceSince time.Time
}

// logWriter is this server's engine of the conversation and what goes with
// it (turns_open.go). Guarded by the conversation's mu, but for the two
// values written whole.
type logWriter struct {
	// eng is set from the moment the engine was opened until it is
	// closed: it is then the conversation's only producer of live
	// changes, and the follower only keeps its reading of the log current.
	// changing is non-nil while the engine is being opened or closed;
	// commands wait for it. openErr is how the last open failed, for the
	// commands that waited on it.
	changing chan struct{}
	openErr  error
	eng      *engine.Engine
	// The open engine's goroutines: logOps reaches the one that owns the
	// log (keepLog), quit stops both, pubDone and logClosed say they ended,
	// and pubSync asks the publisher to catch up (catchUp).
	logOps    chan<- logOp
	quit      chan struct{}
	pubDone   chan struct{}
	pubSync   chan chan struct{}
	logClosed chan error
	// hooks are the test hooks of the server's turnHost, set at open.
	hooks turnsHooks
	// lent: eng is another's, lent by Adopt (hosted.go); only its release
	// ends it.
	lent bool
	// allowed reads the tools eng allows (an attached owner's, as it
	// reported them, for a mirror of one); nil while no engine is open.
	allowed func() []string
	// model is the model the conversation last switched to (models.go);
	// "" for the default. It outlives the engine's close.
	model string

	// Written whole, read without mu.
	lastUsed atomic.Int64              // Unix nanoseconds of the last command
	saved    atomic.Pointer[saveState] // what the engine's last save left
}

type ringItem struct {
	id  string
	rev int64
}

// saveState is what the last save left: the document the log holds, and
// the save's error.
type saveState struct {
	doc transcript.Document
	err error
}

func newConversation(s *Server, id, path string) *conversation {
	c := &conversation{srv: s, id: id, path: path}
	c.feed.id, c.head, c.subs, c.live = id, defaultHead, map[*conn]struct{}{}, map[string]*liveEntry{}
	// Generations start from the clock, so a conversation evicted and read
	// again (or a restarted server) never reuses one a client still holds.
	c.gen.Store(time.Now().UnixMicro())
	return c
}

// conv returns a conversation, creating it.
func (s *Server) conv(id string) *conversation {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.convs[id]
	if !ok {
		c = newConversation(s, id, s.localPath(id))
		s.convs[id] = c
		if r := s.rep.sync; r != nil {
			r.Hold(id) // released by evict
		}
	}
	return c
}

// lookupConv returns a conversation when the server has it.
func (s *Server) lookupConv(id string) *conversation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.convs[id]
}

// conversations lists the conversations the server has.
func (s *Server) conversations() []*conversation {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := make([]*conversation, 0, len(s.convs))
	for _, c := range s.convs {
		all = append(all, c)
	}
	return all
}

// convIdle is how long a conversation outlives its last follower and its
// engine: long enough for a dropped tab to reconnect and get only what it
// missed.
const convIdle = 2 * time.Minute

// evictLater evicts c once it has been idle for convIdle.
func (s *Server) evictLater(c *conversation) {
	if s.convIdle == 0 {
		s.evict(c)
		return
	}
	time.AfterFunc(s.convIdle, func() { s.evict(c) })
}

// evict forgets a conversation once nothing needs it: no connection
// follows it, no engine holds it (or is being opened or closed) and no
// capture is in progress. A later open reads the log again, under a new
// generation.
func (s *Server) evict(c *conversation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.subs) > 0 || c.eng != nil || c.changing != nil || c.building != nil || s.convs[c.id] != c {
		return
	}
	for _, le := range c.live {
		if le.open {
			return // an open entry only the live state knows
		}
	}
	delete(s.convs, c.id)
	c.evicted = true
	if r := s.rep.sync; r != nil {
		r.Release(c.id)
	}
	if c.f != nil {
		c.f.Close()
		c.f = nil
	}
	c.sc = nil
}

// publish applies a change this server made (its engine's publisher, a
// branch switch, a receipt) to the live feed, which sends it to every
// connection following the conversation.
func (c *conversation) publish(ch Change) error {
	if ch.Op == OpReceipt && ch.Receipt != nil && c.srv.rep.inbox != nil {
		c.srv.answer(c.id, *ch.Receipt) // a command another replica sent
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.streamLiveLocked(ch)
	if c.remote != nil {
		c.dropRemoteLocked() // another replica's streaming is over
	}
	return c.applyLocked(ch, 0)
}
