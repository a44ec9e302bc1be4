package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/transcript"
)

// This file is the server's real Engine: one engine.Engine per
// conversation that receives commands, opened lazily on the first command
// and closed when idle. An engine is the conversation's writer while open:
// it holds the log's lock, so a terminal cannot write the same log at the
// same time (and while a terminal does, commands are refused with
// "locked" and the conversation stays followed, read-only).
//
// Turns keeps no per-conversation state of its own: each engine is part of
// its conversation (opened and closed in turns_open.go, published in
// turns_publish.go, given commands in turns_dispatch.go) and found in the
// server's registry of conversations. What is here runs over all of them:
// idle closing, shutdown, receipts, renames and the way in for commands.

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
	srv      *Server // guarded by mu
	closed   bool    // guarded by mu
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
	closing    func(id string)          // an engine's close began
	waiting    func(id string)          // a command waits for an open or close
	replacing  func(id string)          // the publisher announces a new generation of the store
	catchUp    func(id string)          // a command waits for the publisher to announce its head switch
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
	return &Turns{opts: o, stop: make(chan struct{})}, nil
}

// bind attaches the server the engines publish to and starts closing idle
// engines.
func (t *Turns) bind(s *Server) {
	t.mu.Lock()
	t.srv = s
	t.mu.Unlock()
	go t.janitor()
}

// server is the bound server; nil once Close began (or before bind).
func (t *Turns) server() *Server {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	return t.srv
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
	srv := t.server()
	if srv == nil {
		return
	}
	for _, c := range srv.conversations() {
		c.closeEngine(false, func(eng *engine.Engine) bool { return c.idleSince(eng, now) >= t.opts.IdleAfter })
	}
}

// Close closes every engine: running turns stop (their partial replies and
// stopped entries are saved) and every log's lock is released.
func (t *Turns) Close() error {
	t.stopOnce.Do(func() { close(t.stop) })
	t.mu.Lock()
	t.closed = true
	srv := t.srv
	t.mu.Unlock()
	if srv == nil {
		return nil
	}
	// An engine still being opened is waited for; one whose open ends
	// after this sees Turns closed and closes itself (engineOf).
	var errs []error
	for _, c := range srv.conversations() {
		errs = append(errs, c.closeEngine(true, nil))
	}
	return errors.Join(errs...)
}

// forget closes a conversation's engine (the conversation is being
// deleted, or its hold on the log ended).
func (t *Turns) forget(id string) {
	if srv := t.server(); srv != nil {
		if c := srv.lookupConv(id); c != nil {
			c.closeEngine(true, nil)
		}
	}
}

// setTitle renames through the open engine's log, which holds the lock.
// handled is false when no engine has the conversation open.
func (t *Turns) setTitle(id, title string) (handled bool, err error) {
	srv := t.server()
	if srv == nil {
		return false, nil
	}
	c := srv.lookupConv(id)
	if c == nil {
		return false, nil
	}
	err = c.useLog(func(l *history.Log) error {
		err := l.SetTitle(title)
		c.titled = c.titled || err == nil
		return err
	})
	if errors.Is(err, history.ErrClosed) {
		return false, nil // no engine holds the log (or it just closed it)
	}
	return true, err
}

// engineOf returns a conversation and its engine, opening the engine on
// first use.
func (t *Turns) engineOf(id string) (*conversation, *engine.Engine, error) {
	for {
		srv := t.server()
		if srv == nil {
			return nil, nil, errors.New("the server is shutting down")
		}
		c := srv.conv(id)
		eng, err := c.engine(t)
		if errors.Is(err, errEvicted) {
			continue // forgotten meanwhile: the registry has a new one
		}
		if err == nil && t.server() == nil {
			// Close went over the conversations before this open ended.
			c.closeEngine(true, nil)
			return nil, nil, errors.New("the server is shutting down")
		}
		return c, eng, err
	}
}

// Receipt answers a command's receipt from the conversation's engine, or,
// while none is open, from the receipts it left in the log's sidecar (see
// Engine).
func (t *Turns) Receipt(conversation, commandID string) Receipt {
	unknown := Receipt{CommandID: commandID, Conversation: conversation, State: transcript.CommandUnknown}
	t.mu.Lock()
	srv := t.srv
	t.mu.Unlock()
	if srv == nil || validConversationID(conversation) != nil {
		return unknown
	}
	if c := srv.lookupConv(conversation); c != nil {
		c.mu.Lock()
		eng := c.eng
		c.mu.Unlock()
		if eng != nil {
			r, err := eng.Status(commandID)
			if err != nil {
				return unknown
			}
			return receiptOf(conversation, r)
		}
	}
	var recs []history.CommandRecord
	if r := srv.rep.store; r != nil {
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
		c, eng, err := t.engineOf(cmd.Conversation)
		if err != nil {
			return Receipt{}, err
		}
		rc, err := c.do(ctx, t, eng, cmd)
		if errors.Is(err, engine.ErrClosed) && attempt == 0 {
			continue
		}
		if errors.Is(err, history.ErrLockLost) && attempt == 0 {
			c.srv.lockLost(cmd.Conversation) // reopen under a new hold (replica_status.go)
			continue
		}
		return rc, err
	}
}
