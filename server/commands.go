package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync"

	"github.com/go-json-experiment/json"
)

// Engine runs commands that need the turn loop. The server validates each
// command, makes it idempotent by command ID, and calls Do at most once per
// command ID. Do should return quickly: a send that waits behind a running
// turn returns state "queued" and later publishes a receipt change.
//
// Do returns ErrNotRunning, ErrStopConflict, ErrNotFound, ErrCancelled,
// ErrLocked or ErrUnsupported (possibly wrapped) to reject a command; any
// other error is reported as "internal".
type Engine interface {
	Do(ctx context.Context, cmd Command) (Receipt, error)
}

// Command kinds.
const (
	CmdSend         = "send"
	CmdSteer        = "steer"
	CmdStop         = "stop"
	CmdApprove      = "approve"
	CmdRetry        = "retry"
	CmdEdit         = "edit"
	CmdSelectBranch = "select-branch"
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
}

// Approval scopes.
const (
	ScopeOnce         = "once"
	ScopeConversation = "conversation"
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

// Receipt states.
const (
	StateQueued   = "queued"
	StateRunning  = "running"
	StateDone     = "done"
	StateRejected = "rejected"
	StateUnknown  = "unknown"
)

// Receipt is a command's current state.
type Receipt struct {
	CommandID    string `json:"commandId"`
	Conversation string `json:"conversation"`
	Kind         string `json:"kind,omitzero"`
	State        string `json:"state"`
	EntryID      string `json:"entryId,omitzero"`
	Head         string `json:"head,omitzero"`
	Code         string `json:"code,omitzero"`
	Reason       string `json:"reason,omitzero"`
}

// maxReceipts is how many command IDs a conversation remembers.
const maxReceipts = 10000

// commandBook makes commands idempotent: one record per command ID, holding
// a digest of the command's body and its latest receipt.
type commandBook struct {
	mu    sync.Mutex
	recs  map[string]*cmdRecord
	order []string // oldest first, for forgetting past maxReceipts
}

type cmdRecord struct {
	digest  [32]byte
	receipt Receipt
	done    chan struct{} // closed once the engine answered
}

func digestOf(cmd Command) [32]byte {
	b, _ := json.Marshal(cmd, json.Deterministic(true))
	return sha256.Sum256(b)
}

// do runs cmd through run once per command ID. A repeat with the same body
// waits for the first and returns its current receipt; a repeat with another
// body is a command-conflict rejection.
func (b *commandBook) do(ctx context.Context, cmd Command, run func() Receipt) Receipt {
	d := digestOf(cmd)
	b.mu.Lock()
	if b.recs == nil {
		b.recs = map[string]*cmdRecord{}
	}
	if r, ok := b.recs[cmd.CommandID]; ok {
		b.mu.Unlock()
		if r.digest != d {
			return Receipt{CommandID: cmd.CommandID, Conversation: cmd.Conversation, Kind: cmd.Kind, State: StateRejected,
				Code: "command-conflict", Reason: "this commandId was already used for a different command"}
		}
		select {
		case <-r.done:
		case <-ctx.Done():
		}
		return b.get(cmd.CommandID)
	}
	r := &cmdRecord{digest: d, done: make(chan struct{}),
		receipt: Receipt{CommandID: cmd.CommandID, Conversation: cmd.Conversation, Kind: cmd.Kind, State: StateQueued}}
	b.recs[cmd.CommandID] = r
	b.order = append(b.order, cmd.CommandID)
	for len(b.order) > maxReceipts {
		delete(b.recs, b.order[0])
		b.order = b.order[1:]
	}
	b.mu.Unlock()

	rc := run()
	b.mu.Lock()
	// The engine may have published a later state while run returned.
	if receiptRank(rc.State) >= receiptRank(r.receipt.State) {
		r.receipt = rc
	} else {
		rc = r.receipt
	}
	b.mu.Unlock()
	close(r.done)
	return rc
}

// get returns a command's receipt, state "unknown" when not remembered.
func (b *commandBook) get(id string) Receipt {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r, ok := b.recs[id]; ok {
		return r.receipt
	}
	return Receipt{CommandID: id, State: StateUnknown}
}

// update records a receipt the engine published later.
func (b *commandBook) update(rc Receipt) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r, ok := b.recs[rc.CommandID]; ok && receiptRank(rc.State) >= receiptRank(r.receipt.State) {
		if rc.Kind == "" {
			rc.Kind = r.receipt.Kind
		}
		r.receipt = rc
	}
}

// receiptRank orders receipt states: a receipt never moves back.
func receiptRank(state string) int {
	switch state {
	case StateQueued:
		return 1
	case StateRunning:
		return 2
	case StateDone, StateRejected:
		return 3
	}
	return 0
}

// rejection maps an engine error to a rejected receipt.
func rejection(cmd Command, err error) Receipt {
	rc := Receipt{CommandID: cmd.CommandID, Conversation: cmd.Conversation, Kind: cmd.Kind, State: StateRejected, Reason: clientText(err.Error())}
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
	default:
		rc.Code = "internal"
	}
	return rc
}
