package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

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
// settles, replacements as "replaced", and the engine's queue, turn,
// approvals and command receipts as their events. The log follower reads
// the same entries again once they are saved; the reconciliation rules
// make that second delivery a no-op.

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
	sessions map[string]*session
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
	return &Turns{opts: o, sessions: map[string]*session{}, stop: make(chan struct{})}, nil
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
	var idle []*session
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
	all := make([]*session, 0, len(t.sessions))
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
	return true, s.log.SetTitle(title)
}

// session returns the conversation's engine, opening it on first use.
func (t *Turns) session(id string) (*session, error) {
	t.mu.Lock()
	if t.closed || t.srv == nil {
		t.mu.Unlock()
		return nil, errors.New("the server is shutting down")
	}
	s := t.sessions[id]
	if s == nil {
		s = &session{t: t, srv: t.srv, id: id, readyC: make(chan struct{})}
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

// Do runs one command (see Engine).
func (t *Turns) Do(ctx context.Context, cmd Command) (Receipt, error) {
	// An engine closed as idle between lookup and use is opened again.
	for attempt := 0; ; attempt++ {
		s, err := t.session(cmd.Conversation)
		if err != nil {
			return Receipt{}, err
		}
		rc, err := s.do(ctx, cmd)
		if errors.Is(err, engine.ErrClosed) && attempt == 0 {
			continue
		}
		return rc, err
	}
}

// session is one conversation's open engine.
type session struct {
	t   *Turns
	srv *Server
	id  string

	readyC chan struct{} // closed once start returned; err says how
	err    error

	logMu  sync.Mutex // the log is not safe for concurrent use
	log    *history.Log
	closed bool // guarded by logMu

	store *transcript.Store
	host  *toolview.Host
	eng   *engine.Engine
	sub   *transcript.Subscription
	unsub func()
	quit  chan struct{}
	done  chan struct{}
	saveC chan struct{} // a save succeeded: failures held back may go out
	poke  chan struct{} // a command was tracked: publish its receipt if it moved

	mu        sync.Mutex
	lastUsed  time.Time
	savedDoc  transcript.Document // the last document the log holds
	saveErr   error               // the last save's error
	pending   map[string]*tracked // commands whose receipt may still change
	userEntry map[string]string   // command ID → its turn's user entry
	// retryTurn names a running retry: it writes no user entry of its own,
	// so clients see the failed turn's user entry as its turn, and a stop
	// naming that entry means the retry's command.
	retryTurn struct{ userEntry, commandID string }

	// Owned by the publishing goroutine.
	gen       uint64
	published int // entries before this index are published settled (or were hydrated)
	pub       map[string]pubState
	lastTurn  TurnState
	lastQueue []QueueItem
	lastAppr  []ApprovalItem
	control   bool // queue, turn and approvals were published once
}

type pubState struct {
	fp   transcript.Fingerprint
	open bool
}

type tracked struct {
	kind string
	last Receipt
}

func (s *session) ready() bool {
	select {
	case <-s.readyC:
		return true
	default:
		return false
	}
}

func (s *session) touch() {
	s.mu.Lock()
	s.lastUsed = time.Now()
	s.mu.Unlock()
}

// idleSince reports how long the engine has been idle at now; 0 while a
// turn runs, something is queued or an approval waits.
func (s *session) idleSince(now time.Time) time.Duration {
	if _, running := s.eng.Running(); running || len(s.eng.Queue()) > 0 || len(s.eng.Approvals()) > 0 {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return now.Sub(s.lastUsed)
}

// start takes the log's lock, hydrates an engine from the log and starts
// publishing.
func (s *session) start() error {
	path := s.srv.logPath(s.id)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("%w: no conversation %s", ErrNotFound, s.id)
	}
	log, err := history.Open(path)
	if errors.Is(err, history.ErrLocked) {
		return fmt.Errorf("%w: %v", ErrLocked, err)
	}
	if err != nil {
		return fmt.Errorf("open the conversation log: %w", err)
	}
	conv, err := log.Load()
	if err != nil {
		log.Close()
		return fmt.Errorf("load the conversation log: %w", err)
	}
	s.log = log
	s.savedDoc = conv.Document
	s.pending = map[string]*tracked{}
	s.userEntry = map[string]string{}
	s.store = transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	s.host = toolview.New(toolview.WithArtifactDir(filepath.Join(s.srv.opts.DataDir, "artifacts")))
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
	opts := []engine.Option{engine.WithTools(set), engine.WithHost(s.host), engine.WithSaver(saver{s}), engine.WithModel(o.Model)}
	if o.ContextWindow > 0 {
		opts = append(opts, engine.WithContextWindow(o.ContextWindow))
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
	s.unsub = s.host.Subscribe(s.onTool)
	s.quit, s.done = make(chan struct{}), make(chan struct{})
	s.saveC, s.poke = make(chan struct{}, 1), make(chan struct{}, 1)
	go s.run()
	return nil
}

// close stops the engine (a running turn stops and is saved), publishes
// what it wrote last and releases the log's lock.
func (s *session) close() error {
	err := s.eng.Close()
	close(s.quit)
	<-s.done
	s.unsub()
	s.sub.Close()
	s.host.Close()
	s.logMu.Lock()
	defer s.logMu.Unlock()
	s.closed = true
	return errors.Join(err, s.log.Close())
}

// saver saves through the log and tells the publisher what is durable.
type saver struct{ s *session }

func (w saver) Save(doc transcript.Document, msgs []message.Message) error {
	s := w.s
	if h := s.t.hooks.beforeSave; h != nil {
		h(doc)
	}
	s.logMu.Lock()
	err := s.log.Save(doc, msgs)
	s.logMu.Unlock()
	s.mu.Lock()
	s.saveErr = err
	if err == nil {
		s.savedDoc = doc
	}
	s.mu.Unlock()
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

// liveCadence bounds how often streaming changes are published: every
// event carries the entry's whole current text, so publishing each token
// of a fast model would send the reply over and over. 30 updates a second
// still reads as streaming.
const liveCadence = 33 * time.Millisecond

// run publishes the store's snapshots (at most once per liveCadence; the
// latest one always goes out) and the engine's command changes until the
// session closes, then once more so nothing written last is left out.
func (s *session) run() {
	defer close(s.done)
	var (
		last    time.Time
		timer   *time.Timer
		timerC  <-chan time.Time
		pending bool
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	publish := func(snap transcript.Snapshot) {
		s.publishDoc(snap)
		last, pending = time.Now(), false
	}
	for {
		select {
		case snap, ok := <-s.sub.C():
			if !ok {
				return
			}
			// The engine signals no change when a turn's user or reply
			// entry becomes known; the store's snapshot that holds it is
			// the moment. The entries go out first, then the turn event.
			if s.control && s.turnState() != s.lastTurn {
				s.publishControl()
				last, pending = time.Now(), false
				continue
			}
			if wait := liveCadence - time.Since(last); wait > 0 {
				pending = true
				if timerC == nil {
					timer = time.NewTimer(wait)
					timerC = timer.C
				}
				continue
			}
			publish(snap)
		case <-timerC:
			timerC = nil
			if pending {
				publish(s.store.Snapshot())
			}
		case <-s.saveC:
			publish(s.store.Snapshot())
		case <-s.eng.Changed():
			s.publishControl()
			last, pending = time.Now(), false
		case <-s.poke:
			s.publishControl()
			last, pending = time.Now(), false
		case <-s.quit:
			s.publishControl()
			return
		}
	}
}

// publishDoc publishes what changed in the document since the last call:
// each new or changed entry once, open ones as upserts and settled ones as
// settles, in document order. A failure entry (and what follows it) waits
// until a save holds it, so its event never overtakes the log: a reload
// right after the event shows the same notice.
func (s *session) publishDoc(snap transcript.Snapshot) {
	if snap.Generation != s.gen {
		// Replaced or cleared: clients rebuild from a new snapshot of the
		// log, which the engine's next save rewrites. Its settled entries
		// reach them that way, not as a flood of events; what is open or
		// comes later is published as usual.
		s.gen, s.published, s.pub = snap.Generation, snap.Document.Settled(), map[string]pubState{}
		_ = s.srv.Publish(s.id, Change{Op: OpReplaced})
	}
	doc := snap.Document
	s.mu.Lock()
	saved, saveErr := s.savedDoc, s.saveErr
	s.mu.Unlock()
	for i := s.published; i < doc.Len(); i++ {
		e, open, fp := doc.At(i), doc.IsOpen(i), doc.Fingerprint(i)
		if p, ok := s.pub[e.ID]; ok && p.fp == fp && p.open == open {
			continue
		}
		if _, failure := e.Content.(transcript.Failure); failure && saveErr == nil {
			if _, ok := saved.Index(e.ID); !ok {
				if h := s.t.hooks.held; h != nil {
					h(e.ID)
				}
				break // not saved yet: the save's signal brings us back
			}
		}
		after := ""
		if i > 0 {
			after = doc.At(i - 1).ID
		}
		op := OpSettle
		if open {
			op = OpUpsert
		}
		_ = s.srv.Publish(s.id, Change{Op: op, Entry: e, After: after})
		s.pub[e.ID] = pubState{fp: fp, open: open}
		if h := s.t.hooks.published; h != nil {
			h(e)
		}
	}
	// Settled entries never change again: stop looking at them.
	for s.published < doc.Settled() {
		id := doc.At(s.published).ID
		if p, ok := s.pub[id]; !ok || p.open {
			break
		}
		delete(s.pub, id)
		s.published++
	}
}

// turnState is the running turn as clients see it. It also remembers a
// send's user entry for its receipt.
func (s *session) turnState() TurnState {
	tr, ok := s.eng.Running()
	if !ok {
		return TurnState{State: "idle"}
	}
	ts := TurnState{State: "running", Turn: tr.UserEntryID, Reply: tr.ReplyEntryID}
	s.mu.Lock()
	defer s.mu.Unlock()
	if tr.UserEntryID != "" {
		s.userEntry[tr.CommandID] = tr.UserEntryID
	} else if tk, ok := s.pending[tr.CommandID]; ok && tk.kind == CmdRetry {
		if s.retryTurn.commandID != tr.CommandID {
			s.retryTurn.commandID, s.retryTurn.userEntry = tr.CommandID, lastUser(s.store.Snapshot().Document)
		}
		ts.Turn = s.retryTurn.userEntry
	}
	return ts
}

// publishControl publishes the engine's turn, queue, approvals and the
// receipts of commands that changed state. The document goes first, so a
// receipt never announces a turn's end before its entries.
func (s *session) publishControl() {
	s.publishDoc(s.store.Snapshot())
	ts := s.turnState()
	q := []QueueItem{}
	for _, r := range s.eng.Queue() {
		q = append(q, QueueItem{CommandID: r.CommandID, Text: r.Text, State: StateQueued})
	}
	a := []ApprovalItem{}
	for _, ap := range s.eng.Approvals() {
		a = append(a, ApprovalItem{InvocationID: ap.ID, Tool: ap.Tool, Args: ap.Args, Child: ap.Child})
	}
	if !s.control || ts != s.lastTurn {
		t := ts
		_ = s.srv.Publish(s.id, Change{Op: OpTurn, Turn: &t})
		s.lastTurn = ts
	}
	if !s.control || !slices.Equal(q, s.lastQueue) {
		_ = s.srv.Publish(s.id, Change{Op: OpQueue, Queue: q})
		s.lastQueue = q
	}
	if !s.control || !slices.Equal(a, s.lastAppr) {
		_ = s.srv.Publish(s.id, Change{Op: OpApprovals, Approvals: a})
		s.lastAppr = a
	}
	s.control = true

	s.mu.Lock()
	var changed []Receipt
	for id, tr := range s.pending {
		r, err := s.eng.Status(id)
		if err != nil {
			continue
		}
		rc := protoReceipt(r)
		rc.CommandID, rc.Conversation, rc.Kind = id, s.id, tr.kind
		rc.EntryID = s.userEntry[id]
		if rc != tr.last {
			tr.last = rc
			changed = append(changed, rc)
		}
		if final(r.State) {
			delete(s.pending, id)
			delete(s.userEntry, id)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(changed, func(a, b Receipt) int { return receiptRank(a.State) - receiptRank(b.State) })
	for i := range changed {
		_ = s.srv.Publish(s.id, Change{Op: OpReceipt, Receipt: &changed[i]})
	}
}

// onTool publishes a presentation that never reaches the document: the
// current value of an ephemeral primary item, shown only while its
// invocation is open (retained values travel inside the tool entry).
func (s *session) onTool(ch toolview.Change) {
	if !ch.Open || ch.Record != nil || ch.Item != "" || ch.Value == nil || ch.Value.Draft || ch.Retention != toolview.Ephemeral {
		return
	}
	p := &transcript.Presentation{Schema: ch.Value.Schema, Version: ch.Value.Version,
		Revision: int64(ch.Revision), Payload: transcript.RawJSON(ch.Value.Payload)}
	_ = s.srv.Publish(s.id, Change{Op: OpPresentation, EntryID: ch.Invocation, InvocationID: ch.Invocation,
		Presentation: p, Ephemeral: true})
}

// track remembers a command whose receipt the engine will change later.
func (s *session) track(cmd Command, rc Receipt) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pending[cmd.CommandID]; !ok {
		s.pending[cmd.CommandID] = &tracked{kind: cmd.Kind, last: rc}
	}
}

func (s *session) do(ctx context.Context, cmd Command) (Receipt, error) {
	e := s.eng
	switch cmd.Kind {
	case CmdEdit:
		return s.edit(ctx, cmd)
	case CmdSelectBranch:
		return s.selectBranch(cmd)
	case CmdSend:
		if cmd.Head != "" {
			if cur, err := (saver{s}).Head(); err != nil || cmd.Head != cur {
				return Receipt{}, fmt.Errorf("%w: head %q is not the selected head %q", ErrNotFound, clip(cmd.Head), cur)
			}
		}
		atts, err := readAttachments(cmd.Attachments)
		if err != nil {
			return Receipt{}, err
		}
		choice, err := s.t.modelFor(s.id, cmd.Model)
		if err != nil {
			return Receipt{}, err
		}
		r, err := e.SendWithModel(ctx, cmd.CommandID, cmd.Text, atts, choice)
		if errors.Is(err, engine.ErrEmpty) {
			return Receipt{State: StateRejected, Code: "bad-request", Reason: "send: the text is empty"}, nil
		}
		if err != nil {
			return Receipt{}, err
		}
		return s.answer(cmd, r), nil
	case CmdSteer:
		r, err := e.Steer(cmd.CommandID, cmd.Text)
		switch {
		case errors.Is(err, engine.ErrEmpty):
			return Receipt{State: StateRejected, Code: "bad-request", Reason: "steer: the text is empty"}, nil
		case errors.Is(err, engine.ErrNoTurn):
			return Receipt{}, fmt.Errorf("%w: send it as a message instead", ErrNotRunning)
		case errors.Is(err, engine.ErrCancelled):
			return Receipt{}, fmt.Errorf("%w: the turn is being stopped; the instruction stays a draft", ErrCancelled)
		case err != nil:
			return Receipt{}, err
		}
		return s.answer(cmd, r), nil
	case CmdStop:
		turn := cmd.Turn
		if tr, ok := e.Running(); ok && tr.UserEntryID == "" && turn == lastUser(s.store.Snapshot().Document) {
			s.mu.Lock()
			tk := s.pending[tr.CommandID]
			s.mu.Unlock()
			if tk != nil && tk.kind == CmdRetry {
				turn = tr.CommandID // a retry is named by the turn it retries
			}
		}
		err := e.StopTurn(turn, cmd.Reply)
		switch {
		case errors.Is(err, engine.ErrNoTurn):
			return Receipt{}, fmt.Errorf("%w: the turn already ended", ErrNotRunning)
		case errors.Is(err, engine.ErrStopConflict):
			return Receipt{}, fmt.Errorf("%w: turn %q is not the running turn", ErrStopConflict, clip(cmd.Turn))
		case err != nil:
			return Receipt{}, err
		}
		return Receipt{State: StateDone}, nil
	case CmdApprove:
		d := engine.Deny
		if cmd.Allow {
			d = engine.AllowOnce
		}
		if err := e.Approve(cmd.InvocationID, d); err != nil {
			if _, running := e.Running(); !running {
				return Receipt{}, fmt.Errorf("%w: nothing waits for approval", ErrNotRunning)
			}
			return Receipt{}, fmt.Errorf("%w: no call %q waits for approval", ErrNotFound, clip(cmd.InvocationID))
		}
		return Receipt{State: StateDone}, nil
	case CmdRetry:
		if last := lastFailure(s.store.Snapshot().Document); last == "" || last != cmd.FailureID {
			return Receipt{}, fmt.Errorf("%w: %q is not the failure of the last turn", ErrNotFound, clip(cmd.FailureID))
		}
		r, err := e.Retry(cmd.CommandID)
		if errors.Is(err, engine.ErrNothingToRetry) {
			return Receipt{}, fmt.Errorf("%w: the last turn did not fail, or another turn runs", ErrNotFound)
		}
		if err != nil {
			return Receipt{}, err
		}
		return s.answer(cmd, r), nil
	}
	return Receipt{}, fmt.Errorf("%w: command %q", ErrUnsupported, cmd.Kind)
}

// answer maps the engine's receipt and starts tracking its later changes.
func (s *session) answer(cmd Command, r engine.Receipt) Receipt {
	rc := protoReceipt(r)
	rc.CommandID, rc.Conversation, rc.Kind = cmd.CommandID, cmd.Conversation, cmd.Kind
	if !final(r.State) {
		s.track(cmd, rc)
		// The state may have moved while we tracked it.
		select {
		case s.poke <- struct{}{}:
		default:
		}
	}
	return rc
}

// lastUser is the ID of the document's last user entry.
func lastUser(doc transcript.Document) string {
	for i := doc.Len() - 1; i >= 0; i-- {
		if _, ok := doc.At(i).Content.(transcript.User); ok {
			return doc.At(i).ID
		}
	}
	return ""
}

// lastFailure is the ID of the document's last failure entry, when no user
// entry follows it.
func lastFailure(doc transcript.Document) string {
	for i := doc.Len() - 1; i >= 0; i-- {
		switch doc.At(i).Content.(type) {
		case transcript.Failure:
			return doc.At(i).ID
		case transcript.User:
			return ""
		}
	}
	return ""
}

func final(st engine.State) bool {
	switch st {
	case engine.Done, engine.Failed, engine.Stopped, engine.Rejected, engine.Removed, engine.Applied:
		return true
	}
	return false
}

// protoReceipt maps an engine state onto the protocol's receipt states. A
// turn that failed or was stopped still happened: it is "done", with code
// "failed" or "stopped". A queued command a stop dropped is "rejected"
// with code "cancelled": it stays the client's draft.
func protoReceipt(r engine.Receipt) Receipt {
	switch r.State {
	case engine.Queued:
		return Receipt{State: StateQueued}
	case engine.Running:
		return Receipt{State: StateDispatched}
	case engine.Applied, engine.Done:
		return Receipt{State: StateDone}
	case engine.Failed:
		return Receipt{State: StateDone, Code: "failed", Reason: r.Reason}
	case engine.Stopped:
		return Receipt{State: StateDone, Code: "stopped", Reason: r.Reason}
	default: // Rejected, Removed
		return Receipt{State: StateRejected, Code: "cancelled", Reason: r.Reason}
	}
}

// readAttachments turns uploaded files into the text the model reads. A
// binary or very large file is described rather than inlined.
func readAttachments(as []Attachment) ([]engine.Attachment, error) {
	var out []engine.Attachment
	for _, a := range as {
		f, err := os.Open(a.Path)
		if err != nil {
			return nil, fmt.Errorf("%w: attachment %s", ErrNotFound, a.ID)
		}
		b, err := io.ReadAll(io.LimitReader(f, maxAttachmentText+1))
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read attachment %s: %w", a.ID, err)
		}
		text := string(b)
		if len(b) > maxAttachmentText || !utf8.Valid(b) {
			text = fmt.Sprintf("[%s: %d bytes of %s, not shown]", a.Name, a.Size, a.ContentType)
		}
		out = append(out, engine.Attachment{Name: a.Name, Text: text})
	}
	return out, nil
}
