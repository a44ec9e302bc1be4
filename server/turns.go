package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

// This file is the server's real Engine: one engine.Engine per
// conversation that receives commands, opened lazily on the first command
// and closed when idle. It is the conversation's writer while open: it
// holds the log's lock, so a terminal cannot write the same log at the
// same time (and while a terminal does, commands are refused with
// "locked" and the conversation stays followed, read-only).
//
// Live changes flow from the engine's store to Server.Publish on one
// goroutine per conversation: open entries as upserts (streaming text at
// the store's coalesced cadence, not the follower's tick), settled ones as
// settles, replacements as "replaced", the queue, turn and approvals of
// the store's live state, and the engine's command receipts as their
// events. While the engine is open it is the conversation's only
// producer; the follower only keeps its reading of the log current.

// DefaultIdleAfter is how long a conversation's engine stays open with
// nothing running before it is closed and its log's lock released.
const DefaultIdleAfter = 10 * time.Minute

// maxAttachmentText is how much of an attachment's text reaches the model;
// larger or binary files are described instead.
const maxAttachmentText = 256 << 10

// TurnsOptions configure Turns.
type TurnsOptions struct {
	// Provider answers the turns. Required.
	Provider provider.Provider
	// Model is sent with requests and shown in the footer.
	Model string
	// ContextWindow, when above 0, sets the window used for compaction.
	ContextWindow int
	// Workspace is the folder the built-in tools work in (shell's working
	// directory, the root of the file tools). folio serve uses the folder it
	// was started in.
	Workspace string
	// Allow lists tools that run without asking ("*" for all). Every other
	// call that needs approval waits for an approve command.
	Allow []string
	// IdleAfter closes an engine with nothing running after this long
	// (default DefaultIdleAfter).
	IdleAfter time.Duration
	// StreamSaveEvery, when set, is how often a streaming answer is saved
	// at the latest (engine.WithStreamSaveEvery; default the engine's).
	StreamSaveEvery time.Duration
	// Models are the models a send may switch to (see models.go); the
	// Default one is Provider and Model. Empty: only Provider and Model.
	Models []ModelOption
	// Tools are offered beside the built-in ones in every conversation
	// (an MCP server's tools); they need approval like the others.
	Tools []tools.Tool
}

// Turns runs commands on real turn engines, one per conversation. Make it
// with NewTurns and pass it as Options.Engine; the server binds it and
// closes it on Close.
type Turns struct {
	opts TurnsOptions

	mu       sync.Mutex
	srv      *Server
	sessions map[string]*runner
	closed   bool
	stop     chan struct{}
	stopOnce sync.Once

	hooks turnsHooks // tests only; set before the first command

	mset modelSet // clients built for model switches, per-conversation choices
}

// turnsHooks let tests observe the order of saves and publications.
type turnsHooks struct {
	beforeSave func(doc transcript.Document)
	held       func(id string)          // a failure entry waits for its save
	published  func(e transcript.Entry) // an entry went to Publish
}

var _ Engine = (*Turns)(nil)

// NewTurns returns an Engine that runs real turns.
func NewTurns(o TurnsOptions) (*Turns, error) {
	if o.Provider == nil {
		return nil, errors.New("server: turns need a provider")
	}
	if o.Workspace == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("server: workspace: %w", err)
		}
		o.Workspace = wd
	}
	if o.IdleAfter <= 0 {
		o.IdleAfter = DefaultIdleAfter
	}
	return &Turns{opts: o, sessions: map[string]*runner{}, stop: make(chan struct{})}, nil
}

// bind attaches the server the engines publish to and starts closing idle
// engines.
func (t *Turns) bind(s *Server) {
	t.mu.Lock()
	t.srv = s
	t.mu.Unlock()
	go t.janitor()
}

func (t *Turns) janitor() {
	tick := time.NewTicker(max(t.opts.IdleAfter/4, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case now := <-tick.C:
			t.closeIdle(now)
		}
	}
}

// closeIdle closes every engine that has had nothing running, queued or
// waiting for approval since before now minus IdleAfter.
func (t *Turns) closeIdle(now time.Time) {
	t.mu.Lock()
	var idle []*runner
	for id, s := range t.sessions {
		if s.ready() && s.err == nil && s.idleSince(now) >= t.opts.IdleAfter {
			delete(t.sessions, id)
			idle = append(idle, s)
		}
	}
	t.mu.Unlock()
	for _, s := range idle {
		s.close()
	}
}

// Close closes every engine: running turns stop (their partial replies and
// stopped entries are saved) and every log's lock is released.
func (t *Turns) Close() error {
	t.stopOnce.Do(func() { close(t.stop) })
	t.mu.Lock()
	t.closed = true
	all := make([]*runner, 0, len(t.sessions))
	for _, s := range t.sessions {
		all = append(all, s)
	}
	clear(t.sessions)
	t.mu.Unlock()
	var errs []error
	for _, s := range all {
		<-s.readyC
		if s.err == nil {
			errs = append(errs, s.close())
		}
	}
	return errors.Join(errs...)
}

// forget closes a conversation's engine (the conversation is being
// deleted).
func (t *Turns) forget(id string) {
	t.mu.Lock()
	s := t.sessions[id]
	delete(t.sessions, id)
	t.mu.Unlock()
	if s != nil {
		<-s.readyC
		if s.err == nil {
			s.close()
		}
	}
}

// setTitle renames through the open engine's log, which holds the lock.
// handled is false when no engine has the conversation open.
func (t *Turns) setTitle(id, title string) (handled bool, err error) {
	t.mu.Lock()
	s := t.sessions[id]
	t.mu.Unlock()
	if s == nil {
		return false, nil
	}
	<-s.readyC
	if s.err != nil {
		return false, nil
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	if s.closed {
		return false, nil
	}
	err = s.log.SetTitle(title)
	s.titled = s.titled || err == nil
	return true, err
}

// runnerFor returns the conversation's engine, opening it on first use.
func (t *Turns) runnerFor(id string) (*runner, error) {
	t.mu.Lock()
	if t.closed || t.srv == nil {
		t.mu.Unlock()
		return nil, errors.New("the server is shutting down")
	}
	s := t.sessions[id]
	if s == nil {
		s = &runner{t: t, srv: t.srv, id: id, readyC: make(chan struct{})}
		t.sessions[id] = s
		t.mu.Unlock()
		s.err = s.start()
		if s.err != nil {
			t.mu.Lock()
			if t.sessions[id] == s {
				delete(t.sessions, id) // a later command tries again (the terminal may have quit)
			}
			t.mu.Unlock()
		}
		close(s.readyC)
	} else {
		t.mu.Unlock()
		<-s.readyC
	}
	if s.err != nil {
		return nil, s.err
	}
	s.touch()
	return s, nil
}

// Receipt answers a command's receipt from the conversation's engine, or,
// while none is open, from the receipts it left in the log's sidecar (see
// Engine).
func (t *Turns) Receipt(conversation, commandID string) Receipt {
	unknown := Receipt{CommandID: commandID, Conversation: conversation, State: transcript.CommandUnknown}
	t.mu.Lock()
	s, srv := t.sessions[conversation], t.srv
	t.mu.Unlock()
	if s != nil && s.ready() && s.err == nil {
		r, err := s.eng.Status(commandID)
		if err != nil {
			return unknown
		}
		return receiptOf(conversation, r)
	}
	if srv == nil || validConversationID(conversation) != nil {
		return unknown
	}
	var recs []history.CommandRecord
	if r := srv.opts.Replica; r != nil {
		recs, _ = r.Commands(conversation) // kept in the database, not beside the copy
	} else {
		recs, _ = history.ReadCommands(srv.logPath(conversation))
	}
	for _, r := range recs {
		if r.ID == commandID {
			return receiptOf(conversation, engine.ReceiptOf(r))
		}
	}
	return unknown
}

// Do runs one command (see Engine).
func (t *Turns) Do(ctx context.Context, cmd Command) (Receipt, error) {
	// An engine closed as idle between lookup and use is opened again.
	for attempt := 0; ; attempt++ {
		s, err := t.runnerFor(cmd.Conversation)
		if err != nil {
			return Receipt{}, err
		}
		rc, err := s.do(ctx, cmd)
		if errors.Is(err, engine.ErrClosed) && attempt == 0 {
			continue
		}
		if errors.Is(err, history.ErrLockLost) && attempt == 0 {
			t.srv.lockLost(cmd.Conversation) // reopen under a new hold (replica_status.go)
			continue
		}
		return rc, err
	}
}

// runner is one conversation's open engine: it runs its commands and
// is, while open, the producer of its live changes.
type runner struct {
	t   *Turns
	srv *Server
	id  string

	readyC chan struct{} // closed once start returned; err says how
	err    error

	logMu  sync.Mutex // the log is not safe for concurrent use
	log    *history.Log
	closed bool // guarded by logMu
	// titled: the log has a title, so saves no longer name it from the
	// first message (guarded by logMu).
	titled bool

	store *transcript.Store
	host  *toolview.Host
	eng   *engine.Engine
	sub   *transcript.Subscription
	quit  chan struct{}
	done  chan struct{}
	saveC chan struct{} // a save succeeded: failures held back may go out

	// The runner keeps no conversation state of its own beyond these two
	// facts, each one value written whole: the conversation's state is
	// the engine's store and the engine (and, for clients, liveState).
	lastUsed atomic.Int64              // Unix nanoseconds of the last command
	saved    atomic.Pointer[saveState] // the last save

	// Owned by the publishing goroutine.
	gen       uint64
	published int // entries before this index are published settled (or were hydrated)
	pub       map[string]pubState
	lastTurn  TurnState
	lastQueue []QueueItem
	lastAppr  []ApprovalItem
	control   bool   // queue, turn and approvals were published once
	receipts  uint64 // the engine's receipt mark published up to (engine.Receipts)
}

// saveState is what the last save left: the document the log holds, and
// the save's error.
type saveState struct {
	doc transcript.Document
	err error
}

type pubState struct {
	fp   transcript.Fingerprint
	open bool
}

func (s *runner) ready() bool {
	select {
	case <-s.readyC:
		return true
	default:
		return false
	}
}

func (s *runner) touch() {
	s.lastUsed.Store(time.Now().UnixNano())
}

// idleSince reports how long the engine has been idle at now; 0 while a
// turn runs, something is queued or an approval waits.
func (s *runner) idleSince(now time.Time) time.Duration {
	if cs := controlOf(s.store.Snapshot().Live); cs.Turn.State == TurnRunning || len(cs.Queue) > 0 || len(cs.Approvals) > 0 {
		return 0
	}
	return now.Sub(time.Unix(0, s.lastUsed.Load()))
}

// start takes the log's lock, hydrates an engine from the log and starts
// publishing.
func (s *runner) start() error {
	path := s.srv.logPath(s.id)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("%w: no conversation %s", ErrNotFound, s.id)
	}
	log, err := s.srv.openLog(s.id, path)
	if errors.Is(err, history.ErrLocked) {
		return fmt.Errorf("%w: %v", ErrLocked, err)
	}
	if err != nil {
		return fmt.Errorf("open the conversation log: %w", err)
	}
	// A turn needs only the end of the document (engine.Open's rule):
	// pages come from the log, not from the engine's store.
	conv, err := engine.LoadTail(log)
	if err != nil {
		log.Close()
		return fmt.Errorf("load the conversation log: %w", err)
	}
	s.log = log
	s.titled = conv.Title != ""
	s.saved.Store(&saveState{doc: conv.Document})
	s.touch()
	s.store = transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	s.host = toolview.New(toolview.WithArtifactDir(s.srv.engineArtifactDir(s.id)),
		toolview.WithArtifactKept(s.srv.keepArtifact(s.id))) // on a replica, copied to the database (blobs.go)
	sp := &spawner{}
	set, err := tools.Builtin(s.t.opts.Workspace, sp)
	if err == nil && len(s.t.opts.Tools) > 0 {
		set, err = set.With(s.t.opts.Tools...)
	}
	if err != nil {
		s.host.Close()
		log.Close()
		return fmt.Errorf("tools: %w", err)
	}
	o := s.t.opts
	opts := []engine.Option{engine.WithTools(set), engine.WithHost(s.host), engine.WithSaver(saver{s}), engine.WithModel(o.Model),
		engine.WithCommandLog(log)} // receipts survive a restart (history.CommandsPath)
	if o.ContextWindow > 0 {
		opts = append(opts, engine.WithContextWindow(o.ContextWindow))
	}
	if o.StreamSaveEvery > 0 {
		opts = append(opts, engine.WithStreamSaveEvery(o.StreamSaveEvery))
	}
	if len(o.Allow) > 0 {
		opts = append(opts, engine.WithAllowed(o.Allow...))
	}
	s.eng = engine.New(s.store, o.Provider, opts...)
	sp.e = s.eng
	if err := s.eng.Resume(conv.Document, conv.Messages); err != nil {
		s.eng.Close()
		s.host.Close()
		log.Close()
		return fmt.Errorf("resume: %w", err)
	}
	// A model the conversation switched to outlives an idle close: edits
	// and retries run on it too, not only sends.
	if choice, err := s.t.modelFor(s.id, ""); err == nil && choice.Provider != nil {
		_ = s.eng.SetModel(choice) // just hydrated: idle
	}
	// The hydrated document is what the log (and so every follower) holds:
	// only what comes after it is published.
	snap := s.store.Snapshot()
	s.gen, s.published, s.pub = snap.Generation, snap.Document.Len(), map[string]pubState{}
	s.sub = s.store.Subscribe()
	s.quit, s.done = make(chan struct{}), make(chan struct{})
	s.saveC = make(chan struct{}, 1)
	// From here the engine is the conversation's one producer of live
	// changes; close hands them back to the log follower.
	s.srv.conv(s.id).acquire(s.store)
	go s.run()
	return nil
}

// close stops the engine (a running turn stops and is saved), publishes
// what it wrote last and releases the log's lock.
func (s *runner) close() error {
	err := s.eng.Close()
	close(s.quit)
	<-s.done
	s.sub.Close()
	s.host.Close()
	s.logMu.Lock()
	s.closed = true
	err = errors.Join(err, s.log.Close())
	s.logMu.Unlock()
	s.srv.conv(s.id).release()
	return err
}

// saver saves through the log and tells the publisher what is durable.
type saver struct{ s *runner }

func (w saver) Save(doc transcript.Document, msgs []message.Message) error {
	s := w.s
	if h := s.t.hooks.beforeSave; h != nil {
		h(doc)
	}
	s.logMu.Lock()
	err := s.log.Save(doc, msgs)
	if err == nil && !s.titled {
		// An untitled conversation is named from its first message by the
		// one rule the terminal and the listings use (history.DisplayTitle).
		// The document is saved either way; a title that could not be
		// written is tried again on the next save.
		if title := history.DisplayTitle("", msgs); title != "" {
			s.titled = s.log.SetTitle(title) == nil
		}
	}
	s.logMu.Unlock()
	if err == nil {
		s.saved.Store(&saveState{doc: doc})
	} else {
		var doc transcript.Document
		if last := s.saved.Load(); last != nil {
			doc = last.doc
		}
		s.saved.Store(&saveState{doc: doc, err: err})
	}
	select {
	case s.saveC <- struct{}{}:
	default:
	}
	return err
}

type spawner struct{ e *engine.Engine }

func (sp *spawner) Spawn(ctx context.Context, inv, label, prompt string) (string, string, error) {
	return sp.e.Spawn(ctx, inv, label, prompt)
}
