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

// conversation is everything the server keeps for one conversation, in one
// place under one mutex: its live events (generation, change sequence, the
// entries changed in this generation, its subscribers; livestate.go), the
// follower of its log (livestate.go, capture.go), the capture its opens
// share (capture), and, while Turns holds it, its open engine and the
// goroutines that publish the engine's store and own its log
// (turns_open.go, turns_publish.go).
//
// What it does not keep: the queue, the running turn, the approvals and
// the command receipts. The engine is their only authority; they are read
// from its store's transcript.Live (controlOf) and from the engine itself.
//
// mu guards every field below it, except the three groups whose comments
// name another owner: values written whole (atomics), the field the log's
// goroutine owns, and the marks the publishing goroutine owns.
type conversation struct {
	srv  *Server
	id   string
	path string

	gen atomic.Int64 // written under mu; read without it by token checks

	mu sync.Mutex

	// Live events.
	seq       int64
	head      string
	subs      map[*conn]struct{}
	live      map[string]*liveEntry
	ring      []ringItem // changes in seq order; stale items are skipped
	forgotten int64      // highest seq dropped from live
	liveBytes int        // bytes of the entries in live
	lastID    string     // the document's last entry, for "after"
	deleted   bool
	// evicted is set when the server forgot the conversation (evict): a
	// caller that found it before must look it up again.
	evicted bool
	// remote: open entries other replicas' streaming messages reached;
	// streamed: what this replica's engine streamed to the others, by
	// entry (replica_live.go).
	remote   map[string]*remoteEntry
	streamed map[string]*streamSent

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

	// The follower: the log file and the reader that has read it so far.
	f      *os.File         // open only while followed
	fi     os.FileInfo      // the file sc read
	sc     *history.Scanner // nil until the first read, or while the log is missing
	synced bool             // sc (or its absence) describes the file
	stop   chan struct{}
	// resumeAt, while sc is nil, is the offset up to which the follower's
	// reading is the log's page index (capture.go): sc is resumed from the
	// index when the log grows past it.
	resumeAt int64

	// The engine (turns_open.go). eng is set from the moment Turns opened
	// it until it is closed: it is then the conversation's only producer
	// of live changes, and the follower only keeps its reading of the log
	// current. changing is non-nil while the engine is being opened or
	// closed; commands wait for it. openErr is how the last open failed,
	// for the commands that waited on it.
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

	// Written whole, read without mu.
	lastUsed atomic.Int64              // Unix nanoseconds of the last command
	saved    atomic.Pointer[saveState] // what the engine's last save left

	// Owned by the goroutine that owns the open log (keepLog), set before
	// it starts: the log has a title, so saves no longer name it from the
	// first message.
	titled bool

	// Owned by the publishing goroutine (publish), set before it starts and
	// read after it ended: what of the engine's store went out.
	pubGen    uint64
	published int // entries before this index are published settled (or were hydrated)
	pub       map[string]pubState
	lastTurn  TurnState
	lastQueue []QueueItem
	lastAppr  []ApprovalItem
	control   bool   // queue, turn and approvals were published once
	receipts  uint64 // the engine's receipt mark published up to (engine.Receipts)
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

// pubState is what the publisher last sent of an entry.
type pubState struct {
	fp   transcript.Fingerprint
	open bool
}

func newConversation(s *Server, id, path string) *conversation {
	c := &conversation{srv: s, id: id, path: path, head: defaultHead, subs: map[*conn]struct{}{}, live: map[string]*liveEntry{}}
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
