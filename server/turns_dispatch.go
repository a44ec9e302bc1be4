package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/transcript"
)

// This file dispatches commands to a conversation's engine and maps the
// engine's receipts onto the protocol's.

// track remembers a command whose receipt the engine will change later.
func (s *runner) track(cmd Command, rc Receipt) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pending[cmd.CommandID]; !ok {
		s.pending[cmd.CommandID] = &tracked{kind: cmd.Kind, last: rc}
	}
}

func (s *runner) do(ctx context.Context, cmd Command) (Receipt, error) {
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
		switch {
		case cmd.Allow && cmd.Scope == ScopeConversation:
			d = engine.AllowSession
		case cmd.Allow:
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
func (s *runner) answer(cmd Command, r engine.Receipt) Receipt {
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
		return Receipt{State: StateRunning}
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
