package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

// This file opens and closes a conversation's engine, and runs the
// goroutine that owns its log while it is open.
//
// The engine is part of its conversation: opening it takes the log's
// writer lock, hydrates an engine from the log's tail and makes it the
// conversation's producer of live changes (acquireLocked); closing it
// stops a running turn (which is saved), publishes what it wrote last,
// releases the lock and hands live changes back to the follower
// (releaseLocked). One open or close runs at a time (changing); commands
// arriving meanwhile wait for it.
//
// The log is not safe for concurrent use, and the engine's saves, its
// command records and branch switches, and a rename may all reach it at
// once: every use runs on the one goroutine that owns it (keepLog), in the
// order it arrives, so no use of the log holds the conversation's mutex
// across its I/O.

// errEvicted says the conversation was forgotten (evict) before a command
// could open its engine: look it up again.
var errEvicted = errors.New("the conversation was evicted")

// logOp is one use of the open log, run by keepLog.
type logOp func(*heldLog)

// heldLog is the open log and what goes with it, owned by the goroutine
// that runs the uses of it (keepLog).
type heldLog struct {
	*history.Log
	// titled: the log has a title, so saves no longer name it from the
	// first message.
	titled bool
	// lent: the log is an adopted engine's (hosted.go), closed by its
	// lender, not here.
	lent bool
}

// engine returns the conversation's open engine, opening it on first use.
// A command that arrives while another opens or closes it waits for that.
func (c *conversation) engine(t *turnHost) (*engine.Engine, error) {
	c.mu.Lock()
	for {
		if c.evicted {
			c.mu.Unlock()
			return nil, errEvicted
		}
		if c.changing == nil {
			break
		}
		wait := c.changing
		c.mu.Unlock()
		if h := t.hooks.waiting; h != nil {
			h(c.id)
		}
		<-wait
		c.mu.Lock()
		if c.changing == nil && c.eng == nil && c.openErr != nil {
			err := c.openErr // the open this command waited for failed
			c.mu.Unlock()
			return nil, err
		}
	}
	if eng := c.eng; eng != nil {
		c.mu.Unlock()
		c.touch()
		return eng, nil
	}
	opened := make(chan struct{})
	c.changing, c.openErr, c.hooks = opened, nil, t.hooks
	c.mu.Unlock()

	err := c.open(t)

	c.mu.Lock()
	c.changing, c.openErr = nil, err
	eng := c.eng
	c.mu.Unlock()
	close(opened)
	if err != nil {
		c.srv.evictLater(c) // a later command tries again (the terminal may have quit)
		return nil, err
	}
	c.touch()
	return eng, nil
}

// open takes the log's lock, hydrates an engine from the log, starts the
// goroutines that own the log and publish the engine's store, and makes
// the engine the conversation's producer. It runs while changing is set.
func (c *conversation) open(t *turnHost) error {
	if t.hosted {
		return errNotHosted
	}
	path := c.srv.logPath(c.id)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("%w: no conversation %s", ErrNotFound, c.id)
	}
	log, err := c.srv.openLog(c.id, path)
	if errors.Is(err, history.ErrLocked) {
		return fmt.Errorf("%w: %w", ErrLocked, err)
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
	c.saved.Store(&saveState{doc: conv.Document})
	c.touch()

	ops, quit, logClosed := make(chan logOp), make(chan struct{}), make(chan error, 1)
	go keepLog(&heldLog{Log: log, titled: conv.Title != ""}, ops, quit, logClosed)
	c.mu.Lock()
	c.logOps, c.quit, c.logClosed = ops, quit, logClosed
	c.mu.Unlock()
	fail := func(err error) error {
		close(quit)
		<-logClosed
		c.mu.Lock()
		c.logOps, c.quit, c.logClosed = nil, nil, nil
		c.mu.Unlock()
		return err
	}

	store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	host := toolview.New(toolview.WithArtifactDir(c.srv.engineArtifactDir(c.id)),
		toolview.WithArtifactKept(c.srv.keepArtifact(c.id))) // on a replica, copied to the database (blobs.go)
	sp := &spawner{}
	set, err := tools.Builtin(t.opts.Workspace, sp)
	if err == nil && len(t.opts.Tools) > 0 {
		set, err = set.With(t.opts.Tools...)
	}
	if err != nil {
		host.Close()
		return fail(fmt.Errorf("tools: %w", err))
	}
	saveC := make(chan struct{}, 1) // a save ended: failures held back may go out
	w := saver{c: c, saved: saveC, hooks: t.hooks}
	o := t.opts
	opts := []engine.Option{engine.WithTools(set), engine.WithHost(host), engine.WithSaver(w), engine.WithModel(o.Model),
		engine.WithCommandLog(w)} // receipts survive a restart (history.CommandsPath)
	if o.ContextWindow > 0 {
		opts = append(opts, engine.WithContextWindow(o.ContextWindow))
	}
	if o.StreamSaveEvery > 0 {
		opts = append(opts, engine.WithStreamSaveEvery(o.StreamSaveEvery))
	}
	if len(o.Allow) > 0 {
		opts = append(opts, engine.WithAllowed(o.Allow...))
	}
	eng := engine.New(store, o.Provider, opts...)
	sp.e = eng
	if err := eng.Resume(conv.Document, conv.Messages); err != nil {
		eng.Close()
		host.Close()
		return fail(fmt.Errorf("resume: %w", err))
	}
	// A model the conversation switched to outlives an idle close: edits
	// and retries run on it too, not only sends.
	if choice, err := t.modelFor(c, ""); err == nil && choice.Provider != nil {
		_ = eng.SetModel(choice) // just hydrated: idle
	}
	// The hydrated document is what the log (and so every follower) holds:
	// only what comes after it is published. The publisher's marks are set
	// and its subscription taken before the engine takes any command.
	pub := c.newPublisher(store.Snapshot(), t.hooks)
	pub.allowed = eng.Allowed
	sub := store.Subscribe()
	pubDone, pubSync := make(chan struct{}), make(chan chan struct{})
	c.mu.Lock()
	c.pubDone, c.pubSync = pubDone, pubSync
	// From here the engine is the conversation's one producer of live
	// changes; closeEngine hands them back to the log follower.
	c.acquireLocked(eng)
	c.mu.Unlock()
	go pub.run(eng, sub, saveC, pubSync, quit, pubDone)
	return nil
}

// closeEngine closes the conversation's engine, when it has one and when
// (if given) says so: a running turn stops and is saved, the publisher
// sends what it wrote last, the log's lock is released and the follower
// produces live changes again. With wait, an open or close in progress is
// waited for first; without, the engine is left alone while one runs.
func (c *conversation) closeEngine(wait bool, when func(*engine.Engine) bool) error {
	c.mu.Lock()
	for wait && c.changing != nil {
		ch := c.changing
		c.mu.Unlock()
		<-ch
		c.mu.Lock()
	}
	if c.eng == nil || c.changing != nil || c.lent || (when != nil && !when(c.eng)) {
		c.mu.Unlock()
		return nil
	}
	closed := make(chan struct{})
	c.changing = closed
	eng, quit, pubDone, logClosed, hooks := c.eng, c.quit, c.pubDone, c.logClosed, c.hooks
	c.mu.Unlock()
	if h := hooks.closing; h != nil {
		h(c.id)
	}

	err := eng.Close()
	close(quit) // the publisher sends what is left; the log closes
	<-pubDone
	eng.Host().Close()
	err = errors.Join(err, <-logClosed)

	c.mu.Lock()
	c.releaseLocked()
	c.logOps, c.quit, c.pubDone, c.pubSync, c.logClosed = nil, nil, nil, nil, nil
	c.changing, c.openErr = nil, nil
	c.mu.Unlock()
	close(closed)
	c.srv.evictLater(c)
	return err
}

// openEngine is the conversation's open engine; nil while none is.
func (c *conversation) openEngine() *engine.Engine {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.eng
}

// controlLocked is the conversation's queue, turn and approvals, read from
// the store of the engine that holds it, as the terminal reads them; idle
// and empty while no engine of this server does.
func (c *logWriter) controlLocked() *controlState {
	if c.eng == nil {
		return &controlState{Turn: &TurnState{State: turnIdle}, Queue: []QueueItem{}, Approvals: []ApprovalItem{}}
	}
	cs := controlOf(c.eng.Store().Snapshot().Live)
	if c.allowed != nil {
		cs.Turn.Allowed = c.allowed()
	}
	return &cs
}

func (c *logWriter) touch() {
	c.lastUsed.Store(time.Now().UnixNano())
}

// idleSince reports how long eng has been idle at now; 0 while a turn
// runs, something is queued or an approval waits (read from its store's
// live state, as everything else reads them).
func (c *logWriter) idleSince(eng *engine.Engine, now time.Time) time.Duration {
	if cs := controlOf(eng.Store().Snapshot().Live); cs.Turn.State == turnRunning || len(cs.Queue) > 0 || len(cs.Approvals) > 0 {
		return 0
	}
	return now.Sub(time.Unix(0, c.lastUsed.Load()))
}

// keepLog owns the open log: it runs each use sent on ops, in order, until
// quit is closed, then closes the log and reports how that went.
func keepLog(log *heldLog, ops <-chan logOp, quit <-chan struct{}, closed chan<- error) {
	for {
		select {
		case op := <-ops:
			op(log)
		case <-quit:
			if log.lent {
				closed <- nil
				return
			}
			closed <- log.Close()
			return
		}
	}
}

// useLog runs f on the goroutine that owns the open log and returns its
// error; history.ErrClosed when no engine holds the log.
func (c *conversation) useLog(f func(*history.Log) error) error {
	return c.useHeld(func(l *heldLog) error { return f(l.Log) })
}

// rename sets the open log's title.
func (c *conversation) rename(title string) error {
	return c.useHeld(func(l *heldLog) error {
		err := l.SetTitle(title)
		l.titled = l.titled || err == nil
		return err
	})
}

// useHeld is useLog with what goes with the log.
func (c *conversation) useHeld(f func(*heldLog) error) error {
	c.mu.Lock()
	ops, quit := c.logOps, c.quit
	c.mu.Unlock()
	if ops == nil {
		return fmt.Errorf("%w: no engine holds it", history.ErrClosed)
	}
	reply := make(chan error, 1)
	select {
	case ops <- func(l *heldLog) { reply <- f(l) }:
		return <-reply
	case <-quit:
		return fmt.Errorf("%w: its engine closed", history.ErrClosed)
	}
}

// saver is the engine's way to the log: saves, command records and
// branches all go through useLog. After a save it tells the publisher what
// is durable.
type saver struct {
	c     *conversation
	saved chan<- struct{}
	hooks turnsHooks
}

var _ engine.CommandLog = saver{}

func (w saver) Save(doc transcript.Document, msgs []message.Message) error {
	c := w.c
	if h := w.hooks.beforeSave; h != nil {
		h(doc)
	}
	err := c.useHeld(func(l *heldLog) (err error) {
		// An untitled conversation is named from its first message by the
		// rule the terminal uses too.
		l.titled, err = l.SaveNaming(doc, msgs, l.titled)
		return err
	})
	if err == nil {
		c.saved.Store(&saveState{doc: doc})
	} else {
		var doc transcript.Document
		if last := c.saved.Load(); last != nil {
			doc = last.doc
		}
		c.saved.Store(&saveState{doc: doc, err: err})
	}
	select {
	case w.saved <- struct{}{}:
	default:
	}
	return err
}

// RecordCommand appends a command's receipt to the log's sidecar.
func (w saver) RecordCommand(r history.CommandRecord) error {
	return w.c.useLog(func(l *history.Log) error { return l.RecordCommand(r) })
}

// LoadCommands reads the receipts the log's sidecar holds.
func (w saver) LoadCommands() ([]history.CommandRecord, error) {
	var recs []history.CommandRecord
	err := w.c.useLog(func(l *history.Log) (err error) {
		recs, err = l.LoadCommands()
		return err
	})
	return recs, err
}

type spawner struct{ e *engine.Engine }

func (sp *spawner) Spawn(ctx context.Context, inv, label, prompt string) (string, string, error) {
	return sp.e.Spawn(ctx, inv, label, prompt)
}
