package server

import (
	"context"
	"errors"

	"github.com/foliodev/folio/transcript"
)

// Engine runs commands that need the turn loop, and is the one authority
// for their receipts: the server validates each command and hands it to
// Do, and answers receipt requests with Receipt; it keeps no receipts of
// its own. Do should return quickly: a send that waits behind a running
// turn returns state "queued" and later publishes a receipt change. Do
// makes commands idempotent by command ID: a repeat with the same body
// returns the first one's current receipt and does nothing else.
//
// Do returns ErrNotRunning, ErrStopConflict, ErrNotFound, ErrCancelled,
// ErrLocked, ErrUnsupported, ErrBusy, ErrUnknownModel, ErrConflict or
// ErrStoreUnavailable (possibly wrapped) to reject a command; any other error is reported as
// "internal".
type Engine interface {
	Do(ctx context.Context, cmd Command) (Receipt, error)
	// Receipt returns the current receipt of a command the engine has
	// (state transcript.CommandUnknown when it has none).
	Receipt(conversation, commandID string) Receipt
}

// Command kinds.
const (
	cmdSend         = "send"
	cmdSteer        = "steer"
	cmdStop         = "stop"
	cmdApprove      = "approve"
	cmdRetry        = "retry"
	cmdEdit         = "edit"
	cmdSelectBranch = "select-branch"
	cmdDismiss      = "dismiss"
)

// Command is one client command, validated.
type Command struct {
	Kind         string       `json:"kind"`
	Conversation string       `json:"conversation"`
	CommandID    string       `json:"commandId"`
	Text         string       `json:"text,omitzero"`
	Attachments  []Attachment `json:"attachments,omitzero"`
	Head         string       `json:"head,omitzero"`
	// Turn and Reply name the top-level turn a stop expects to be running
	// (its user entry and, when known, its reply entry): compare-and-set.
	Turn         string `json:"turn,omitzero"`
	Reply        string `json:"reply,omitzero"`
	InvocationID string `json:"invocationId,omitzero"`
	Allow        bool   `json:"allow,omitzero"`
	// Scope, on an approve, is how far an allow reaches: ScopeOnce (the
	// default) runs this call, ScopeConversation also every later call of
	// the same tool in this conversation.
	Scope     string `json:"scope,omitzero"`
	FailureID string `json:"failureId,omitzero"`
	EntryID   string `json:"entryId,omitzero"`
	// Model, on a send, is the model (a name from GET /api/v2/models) that
	// turn and later ones run on.
	Model string `json:"model,omitzero"`
	// Draft, on a dismiss, is the command ID of a send or steer the
	// engine gave back, which the client took back.
	Draft string `json:"draft,omitzero"`
}

// Approval scopes.
const (
	scopeOnce         = "once"
	scopeConversation = "conversation"
)

// Attachment is an uploaded file a send refers to. Path is where the server
// stored it, inside the data folder.
type Attachment struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	ContentType string `json:"contentType"`
	Size        int64  `json:"size"`
	Path        string `json:"-"`
}

// Receipt is a command's current state. Its states are package
// transcript's command states, the vocabulary the engine, the terminal and
// the web app share.
type Receipt struct {
	CommandID    string                  `json:"commandId"`
	Conversation string                  `json:"conversation"`
	Kind         string                  `json:"kind,omitzero"`
	State        transcript.CommandState `json:"state"`
	EntryID      string                  `json:"entryId,omitzero"`
	Head         string                  `json:"head,omitzero"`
	Code         string                  `json:"code,omitzero"`
	Reason       string                  `json:"reason,omitzero"`
}

// rejection maps an engine error to a rejected receipt.
func rejection(cmd Command, err error) Receipt {
	rc := Receipt{CommandID: cmd.CommandID, Conversation: cmd.Conversation, Kind: cmd.Kind, State: transcript.CommandRejected, Reason: clientText(err.Error())}
	switch {
	case errors.Is(err, ErrNotRunning):
		rc.Code = "not-running"
	case errors.Is(err, ErrStopConflict):
		rc.Code = "stop-conflict"
	case errors.Is(err, ErrNotFound):
		rc.Code = "not-found"
	case errors.Is(err, ErrCancelled):
		rc.Code = "cancelled"
	case errors.Is(err, ErrLocked):
		rc.Code = "locked"
	case errors.Is(err, ErrUnsupported):
		rc.Code = "unsupported"
	case errors.Is(err, ErrBusy):
		rc.Code = "busy"
	case errors.Is(err, ErrUnknownModel):
		rc.Code = "unknown-model"
	case errors.Is(err, ErrConflict):
		rc.Code = "command-conflict"
	case errors.Is(err, ErrStoreUnavailable):
		rc.Code = "store-unavailable"
	default:
		rc.Code = "internal"
	}
	return rc
}
