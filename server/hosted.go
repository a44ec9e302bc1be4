package server

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
)

// A hosted server serves engines it did not make. A terminal chat owns its
// conversation through its own engine and log; to serve that conversation
// to other folio processes on its local endpoint it makes a hosted server
// (NewHosted) and lends it the engine and the log while it owns them
// (Adopt). The server then treats that conversation exactly as one of its
// own engines' (turns_open.go): one goroutine uses the log (the engine's
// saves come through it), one publishes the engine's store as live events,
// and commands go to the engine through the same dispatch as folio serve's
// (turns_dispatch.go). It opens no engine of its own: a command for any
// other conversation is refused as locked. Releasing the adopted engine
// leaves the engine and the log open; they stay the lender's.

// NewHosted makes a server that serves only the engines lent to it by
// Adopt, reading the logs in dataDir. model names the model the lender's
// engine runs on now, as provider/model (GET /api/v2/models lists it).
func NewHosted(dataDir string, model func() string, logger *slog.Logger) (*Server, error) {
	s, err := New(Options{DataDir: dataDir, Logger: logger})
	if err != nil {
		return nil, err
	}
	s.turns, s.eng = &turnHost{hosted: true, model: model}, turnsEngine{s}
	return s, nil
}

// hostedModel is the lent engines' model, the only one a hosted server
// lists.
func (t *turnHost) hostedModel() ModelInfo {
	name := t.model()
	prov, model, _ := strings.Cut(name, "/")
	return ModelInfo{Name: name, Provider: prov, Model: model, Default: true}
}

// errNotHosted refuses a command for a conversation a hosted server was
// not lent.
var errNotHosted = fmt.Errorf("%w: this folio process serves only the conversation it has open", ErrLocked)

// Adopt lends the server eng, which owns conversation id through log (its
// writer lock held): until release, the server publishes eng's store to
// the conversation's readers and runs their commands on it, and eng saves
// through the server (its saver is replaced; titled says whether the log
// has a title). release gives the engine and the log back, both still
// open, after the last of the store is published; it returns whether the
// log has a title now, and the lender sets its own saver again.
func (s *Server) Adopt(id string, eng *engine.Engine, log *history.Log, titled bool) (release func() (titled bool), err error) {
	if s.turns == nil || !s.turns.hosted {
		return nil, errors.New("server: Adopt needs a server made by NewHosted")
	}
	c := s.conv(id)
	c.mu.Lock()
	if c.eng != nil || c.changing != nil {
		c.mu.Unlock()
		return nil, fmt.Errorf("server: conversation %s already has an engine", id)
	}
	opened := make(chan struct{})
	c.changing = opened
	c.mu.Unlock()

	conv := eng.Store().Snapshot()
	c.saved.Store(&saveState{doc: conv.Document})
	c.touch()
	held := &heldLog{Log: log, titled: titled, lent: true}
	ops, quit, logClosed := make(chan logOp), make(chan struct{}), make(chan error, 1)
	go keepLog(held, ops, quit, logClosed)
	saveC := make(chan struct{}, 1)
	eng.SetSaver(saver{c: c, saved: saveC, hooks: s.turns.hooks})
	snap := eng.Store().Snapshot()
	pub := c.newPublisher(snap, s.turns.hooks)
	// The chat's program takes signals of the engine's Changed channel
	// too: the publisher reads the turn, queue, steers and approvals from
	// the store's snapshots from the start (as published now, which is
	// what snapshots give), and receipts on every snapshot.
	cs := controlOf(snap.Live)
	pub.control, pub.lastTurn, pub.lastQueue, pub.lastSteer, pub.lastAppr = true, *cs.Turn, cs.Queue, cs.Steers, cs.Approvals
	pub.shared, pub.allowed = true, eng.Allowed
	sub := eng.Store().Subscribe()
	pubDone, pubSync := make(chan struct{}), make(chan chan struct{})
	c.mu.Lock()
	c.logOps, c.quit, c.logClosed, c.pubDone, c.pubSync, c.hooks = ops, quit, logClosed, pubDone, pubSync, s.turns.hooks
	c.lent = true
	c.acquireLocked(eng)
	c.changing = nil
	c.mu.Unlock()
	close(opened)
	go pub.run(eng, sub, saveC, pubSync, quit, pubDone)

	return func() bool {
		c.mu.Lock()
		for c.changing != nil {
			ch := c.changing
			c.mu.Unlock()
			<-ch
			c.mu.Lock()
		}
		closed := make(chan struct{})
		c.changing = closed
		c.mu.Unlock()
		close(quit) // the publisher sends what is left; keepLog lets go of the log
		<-pubDone
		<-logClosed
		eng.SetSaver(nil)
		c.mu.Lock()
		c.releaseLocked()
		c.logOps, c.quit, c.pubDone, c.pubSync, c.logClosed = nil, nil, nil, nil, nil
		c.changing, c.openErr, c.lent = nil, nil, false
		c.mu.Unlock()
		close(closed)
		s.evictLater(c)
		return held.titled
	}, nil
}
