package server

import "errors"

// Errors an Engine returns to refuse a command. The server turns them into
// the protocol's rejection codes.
var (
	// ErrNotRunning: steer, stop or approve arrived with no running turn.
	ErrNotRunning = errors.New("no turn is running")
	// ErrStopConflict: a stop named a turn that is not the running top-level
	// turn (compare-and-set failed).
	ErrStopConflict = errors.New("stop does not match the running turn")
	// ErrNotFound: the command names an entry, invocation, attachment or
	// head that does not exist.
	ErrNotFound = errors.New("not found")
	// ErrCancelled: a queued send was dropped by a stop; it stays a draft.
	ErrCancelled = errors.New("cancelled")
	// ErrLocked: another process (a terminal folio, another server) holds
	// the conversation's writer lock; the conversation stays read-only here.
	ErrLocked = errors.New("locked")
	// ErrUnsupported: the command is part of the protocol but this engine
	// cannot carry it out (branches, for now).
	ErrUnsupported = errors.New("unsupported")
	// ErrBusy: edit or select-branch arrived while a turn runs or sends
	// wait; stop first.
	ErrBusy = errors.New("busy")
	// ErrConflict: the command ID was already used for a command with
	// another body.
	ErrConflict = errors.New("this commandId was already used for a different command")
)

// ErrUnknownModel: a send names a model that is not in the server's list.
var ErrUnknownModel = errors.New("unknown model")

// ErrNonLoopback is returned by ListenAndServe (and CheckAddr) for an
// address that is not loopback when no token is set.
var ErrNonLoopback = errors.New("refusing to listen on a non-loopback address without a token")

// ErrInvalidID is returned for a conversation or command ID outside the
// allowed form.
var ErrInvalidID = errors.New("invalid id")

// ErrWeakToken is returned by CheckToken (and New) for a token that is too
// short or only whitespace.
var ErrWeakToken = errors.New("token refused")
