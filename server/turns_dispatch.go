package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// This file dispatches commands to a conversation's engine and maps the
// engine's receipts onto the protocol's: every command kind's way into the
// engine is here, the branch commands (edit, select-branch) after the
// others.

func (c *conversation) do(ctx context.Context, t *turnHost, e *engine.Engine, cmd Command) (Receipt, error) {
	// The engine keeps every command's receipt, durable across restarts: it
	// answers a repeated command ID, refuses one reused for another body,
	// and is what receipt requests read.
	tag := []engine.CommandOption{engine.AsKind(cmd.Kind), engine.WithDigest(digestOf(cmd))}
	var (
		r   engine.Receipt
		err error
	)
	switch cmd.Kind {
	case cmdEdit:
		return c.edit(ctx, e, cmd, tag)
	case cmdSelectBranch:
		return c.selectBranch(e, cmd, tag)
	case cmdSend:
		if cmd.Head != "" {
			if cur, herr := c.logHead(); herr != nil || cmd.Head != cur {
				return Receipt{}, fmt.Errorf("%w: head %q is not the selected head %q", ErrNotFound, clip(cmd.Head), cur)
			}
		}
		atts, aerr := readAttachments(cmd.Attachments)
		if aerr != nil {
			return Receipt{}, aerr
		}
		choice, merr := t.modelFor(c, cmd.Model)
		if merr != nil {
			return Receipt{}, merr
		}
		r, err = e.SendWithModel(ctx, cmd.CommandID, cmd.Text, atts, choice, tag...)
		if errors.Is(err, engine.ErrEmpty) {
			return Receipt{State: transcript.CommandRejected, Code: "bad-request", Reason: "send: the text is empty"}, nil
		}
	case cmdSteer:
		r, err = e.Steer(cmd.CommandID, cmd.Text, tag...)
		switch {
		case errors.Is(err, engine.ErrEmpty):
			return Receipt{State: transcript.CommandRejected, Code: "bad-request", Reason: "steer: the text is empty"}, nil
		case errors.Is(err, engine.ErrNoTurn):
			return Receipt{}, fmt.Errorf("%w: send it as a message instead", ErrNotRunning)
		case errors.Is(err, engine.ErrCancelled):
			return Receipt{}, fmt.Errorf("%w: the turn is being stopped; the instruction stays a draft", ErrCancelled)
		}
	case cmdStop:
		// A retry's turn is named by the user entry of the turn it runs
		// again, so a stop naming that entry stops the retry.
		r, err = e.Once(cmd.CommandID, func() error {
			switch err := e.StopTurn(cmd.Turn, cmd.Reply); {
			case errors.Is(err, engine.ErrNoTurn):
				return fmt.Errorf("%w: the turn already ended", ErrNotRunning)
			case errors.Is(err, engine.ErrStopConflict):
				return fmt.Errorf("%w: turn %q is not the running turn", ErrStopConflict, clip(cmd.Turn))
			default:
				return err
			}
		}, tag...)
	case cmdApprove:
		d := engine.Deny
		switch {
		case cmd.Allow && cmd.Scope == scopeConversation:
			d = engine.AllowSession
		case cmd.Allow:
			d = engine.AllowOnce
		}
		r, err = e.Once(cmd.CommandID, func() error {
			if err := e.Approve(cmd.InvocationID, d); err != nil {
				if _, running := e.Store().Snapshot().Live.Turn(); !running {
					return fmt.Errorf("%w: nothing waits for approval", ErrNotRunning)
				}
				return fmt.Errorf("%w: no call %q waits for approval", ErrNotFound, clip(cmd.InvocationID))
			}
			return nil
		}, tag...)
	case cmdRetry:
		if last := lastFailure(e.Store().Snapshot().Document); last == "" || last != cmd.FailureID {
			if rc, known := known(c.id, e, cmd); known {
				return rc, nil // a repeated retry: the failure is no longer the last entry
			}
			return Receipt{}, fmt.Errorf("%w: %q is not the failure of the last turn", ErrNotFound, clip(cmd.FailureID))
		}
		r, err = e.Retry(cmd.CommandID, tag...)
		if errors.Is(err, engine.ErrNothingToRetry) {
			return Receipt{}, fmt.Errorf("%w: the last turn did not fail, or another turn runs", ErrNotFound)
		}
	case cmdDismiss:
		// A draft the engine gave back stays listed in its live state
		// (a terminal owner shows it) until the client that sent it
		// takes it back.
		r, err = e.Once(cmd.CommandID, func() error {
			err := e.Dismiss(cmd.Draft)
			if errors.Is(err, engine.ErrUnknownCommand) {
				return fmt.Errorf("%w: %q is not a draft the engine gave back", ErrNotFound, clip(cmd.Draft))
			}
			return err
		}, tag...)
	default:
		return Receipt{}, fmt.Errorf("%w: command %q", ErrUnsupported, cmd.Kind)
	}
	if errors.Is(err, engine.ErrConflict) {
		return Receipt{}, fmt.Errorf("%w: %v", ErrConflict, err)
	}
	if err != nil {
		return Receipt{}, err
	}
	return receiptOf(c.id, r), nil
}

// branchErr turns the engine's branch refusals into the server's.
func branchErr(err error) error {
	switch {
	case errors.Is(err, engine.ErrBusy):
		return fmt.Errorf("%w: %v", ErrBusy, err)
	case errors.Is(err, engine.ErrNotUserEntry), errors.Is(err, history.ErrUnknownBranch):
		return fmt.Errorf("%w: %v", ErrNotFound, err)
	case errors.Is(err, engine.ErrCompacted), errors.Is(err, engine.ErrNoBranches):
		return fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	return err
}

// edit runs an edit command: edit-and-resend on a new branch.
func (c *conversation) edit(ctx context.Context, e *engine.Engine, cmd Command, tag []engine.CommandOption) (Receipt, error) {
	r, err := e.EditAndResend(ctx, cmd.CommandID, cmd.EntryID, cmd.Text, tag...)
	if errors.Is(err, engine.ErrEmpty) {
		return Receipt{State: transcript.CommandRejected, Code: "bad-request", Reason: "edit: the text is empty"}, nil
	}
	if errors.Is(err, engine.ErrConflict) {
		return Receipt{}, fmt.Errorf("%w: %v", ErrConflict, err)
	}
	if err != nil {
		return Receipt{}, branchErr(err)
	}
	head, err := c.logHead()
	if err != nil {
		return Receipt{}, err
	}
	if !r.Duplicate {
		c.catchUp() // the new branch's generation, before its head event
		_ = c.publish(Change{Op: OpHead, Head: head})
	}
	rc := receiptOf(c.id, r)
	rc.Head = head
	return rc, nil
}

// selectBranch runs a select-branch command.
func (c *conversation) selectBranch(e *engine.Engine, cmd Command, tag []engine.CommandOption) (Receipt, error) {
	r, err := e.Once(cmd.CommandID, func() error {
		cur, err := c.logHead()
		if err != nil || cmd.Head == cur {
			return err
		}
		if err := e.SelectBranch(cmd.Head); err != nil {
			return branchErr(err)
		}
		// The new generation goes out before the head event and the
		// receipt, not after them from the publisher's own pace.
		c.catchUp()
		_ = c.publish(Change{Op: OpHead, Head: cmd.Head})
		return nil
	}, tag...)
	if errors.Is(err, engine.ErrConflict) {
		return Receipt{}, fmt.Errorf("%w: %v", ErrConflict, err)
	}
	if err != nil {
		return Receipt{}, err
	}
	rc := receiptOf(c.id, r)
	rc.Head = cmd.Head
	return rc, nil
}

// --- metadata and the graph ---------------------------------------------

// digestOf is a digest of cmd's whole body: the engine refuses the same
// command ID with another body (engine.WithDigest).
func digestOf(cmd Command) string {
	b, _ := json.Marshal(cmd, json.Deterministic(true))
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// known answers a command ID the engine already has with its receipt.
func known(conversation string, e *engine.Engine, cmd Command) (Receipt, bool) {
	r, err := e.Status(cmd.CommandID)
	if err != nil {
		return Receipt{}, false
	}
	return receiptOf(conversation, r), true
}

// receiptOf is the engine's receipt as the protocol sends it: the same
// state, and code "cancelled" for a command the engine gave back (a
// queued send a stop dropped stays the client's draft).
func receiptOf(conversation string, r engine.Receipt) Receipt {
	rc := Receipt{CommandID: r.CommandID, Conversation: conversation, Kind: r.Kind, State: r.State, EntryID: r.EntryID, Reason: r.Reason}
	if r.State == transcript.CommandRejected || r.State == transcript.CommandRemoved {
		rc.Code = "cancelled"
	}
	return rc
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
