package server

import (
	"context"
	"errors"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// This file is the server's side of its own engines (Options.Turns): the
// way in for commands and receipt requests, and what runs over every
// conversation's engine: idle closing, shutdown, renames and forgetting.
// Each engine is part of its conversation (turns_open.go); the server finds
// it there.

// turnsEngine is the Engine of a server that runs its own turns.
type turnsEngine struct{ s *Server }

func (e turnsEngine) Do(ctx context.Context, cmd Command) (Receipt, error) {
	return e.s.runTurn(ctx, cmd)
}
func (e turnsEngine) Receipt(conversation, commandID string) Receipt {
	return e.s.turnReceipt(conversation, commandID)
}

// enginesOpen reports whether the server's engines may still be opened:
// false once closeEngines began.
func (s *Server) enginesOpen() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.enginesClosed
}

// janitor closes idle engines until closeEngines.
func (s *Server) janitor(stop <-chan struct{}) {
	tick := time.NewTicker(max(s.turns.opts.IdleAfter/4, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-tick.C:
			s.closeIdle(now)
		}
	}
}

// closeIdle closes every engine that has had nothing running, queued or
// waiting for approval since before now minus IdleAfter.
func (s *Server) closeIdle(now time.Time) {
	if !s.enginesOpen() {
		return
	}
	idle := s.turns.opts.IdleAfter
	for _, c := range s.conversations() {
		c.closeEngine(false, func(eng *engine.Engine) bool { return c.idleSince(eng, now) >= idle })
	}
}

// closeEngines closes every engine: running turns stop (their partial
// replies and stopped entries are saved) and every log's lock is released.
func (s *Server) closeEngines() error {
	s.mu.Lock()
	first := !s.enginesClosed
	s.enginesClosed = true
	s.mu.Unlock()
	if first && s.stopJanitor != nil {
		close(s.stopJanitor)
	}
	// An engine still being opened is waited for; one whose open ends
	// after this sees the engines closed and closes itself (engineOf).
	var errs []error
	for _, c := range s.conversations() {
		errs = append(errs, c.closeEngine(true, nil))
	}
	return errors.Join(errs...)
}

// forgetEngine closes a conversation's engine (the conversation is being
// deleted, or its hold on the log ended).
func (s *Server) forgetEngine(id string) {
	if c := s.lookupConv(id); c != nil {
		c.closeEngine(true, nil)
	}
}

// setTitle renames through the open engine's log, which holds the lock.
// handled is false when no engine has the conversation open.
func (s *Server) setTitle(id, title string) (handled bool, err error) {
	c := s.lookupConv(id)
	if c == nil {
		return false, nil
	}
	err = c.rename(title)
	if errors.Is(err, history.ErrClosed) {
		return false, nil // no engine holds the log (or it just closed it)
	}
	return true, err
}

// engineOf returns a conversation and its engine, opening the engine on
// first use.
func (s *Server) engineOf(id string) (*conversation, *engine.Engine, error) {
	for {
		if !s.enginesOpen() {
			return nil, nil, errors.New("the server is shutting down")
		}
		c := s.conv(id)
		eng, err := c.engine(s.turns)
		if errors.Is(err, errEvicted) {
			continue // forgotten meanwhile: the registry has a new one
		}
		if err == nil && !s.enginesOpen() {
			// closeEngines went over the conversations before this open
			// ended.
			c.closeEngine(true, nil)
			return nil, nil, errors.New("the server is shutting down")
		}
		return c, eng, err
	}
}

// turnReceipt answers a command's receipt from the conversation's engine,
// or, while none is open, from the receipts it left in the log's sidecar
// (see Engine).
func (s *Server) turnReceipt(conversation, commandID string) Receipt {
	unknown := Receipt{CommandID: commandID, Conversation: conversation, State: transcript.CommandUnknown}
	if validConversationID(conversation) != nil {
		return unknown
	}
	if r := s.attachedOwner(conversation); r != nil {
		ctx, cancel := context.WithTimeout(context.Background(), ownerDialTimeout)
		defer cancel()
		if rc, err := r.ro.Status(ctx, commandID); err == nil {
			rc.Conversation = conversation
			return rc
		}
		return unknown
	}
	if c := s.lookupConv(conversation); c != nil {
		if eng := c.openEngine(); eng != nil {
			r, err := eng.Status(commandID)
			if err != nil {
				return unknown
			}
			return receiptOf(conversation, r)
		}
	}
	var recs []history.CommandRecord
	if r := s.rep.store; r != nil {
		recs, _ = r.Commands(conversation) // kept in the database, not beside the copy
	} else {
		recs, _ = history.ReadCommands(s.logPath(conversation))
	}
	for _, r := range recs {
		if r.ID == commandID {
			return receiptOf(conversation, engine.ReceiptOf(r))
		}
	}
	return unknown
}

// runTurn runs one command on the conversation's engine (see Engine).
func (s *Server) runTurn(ctx context.Context, cmd Command) (Receipt, error) {
	// An engine closed as idle between lookup and use is opened again.
	for attempt := 0; ; attempt++ {
		// A conversation another process owns runs there (remote_owner.go).
		if r := s.attachedOwner(cmd.Conversation); r != nil {
			return r.forward(ctx, cmd)
		}
		c, eng, err := s.engineOf(cmd.Conversation)
		if pid, ok := s.lockedByOwner(err); ok {
			if r, aerr := s.remoteFor(cmd.Conversation, pid); aerr == nil {
				return r.forward(ctx, cmd)
			}
		}
		if err != nil {
			return Receipt{}, err
		}
		rc, err := c.do(ctx, s.turns, eng, cmd)
		if errors.Is(err, engine.ErrClosed) && attempt == 0 {
			continue
		}
		if errors.Is(err, history.ErrLockLost) && attempt == 0 {
			s.lockLost(cmd.Conversation) // reopen under a new hold (replica_status.go)
			continue
		}
		return rc, err
	}
}
