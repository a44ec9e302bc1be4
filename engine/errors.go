package engine

import "errors"

// ErrClosed is returned by every method after Close.
var ErrClosed = errors.New("engine: closed")

// ErrEmpty is returned by Send and Steer for a command without text, and by
// Send for a command without an ID.
var ErrEmpty = errors.New("engine: a command needs an ID and text")

// ErrNoTurn is returned by Steer when no turn is running; send the text as
// an ordinary message instead.
var ErrNoTurn = errors.New("engine: no turn is running")

// ErrCancelled is returned by Steer when the running turn is being stopped.
// The instruction was not accepted: it stays the caller's unsent draft, and
// the engine never sends it on its own.
var ErrCancelled = errors.New("engine: the turn was stopped; the instruction was not sent")

// ErrStopConflict is returned by StopTurn when the running turn is not the
// one the caller meant to stop (it finished and another began).
var ErrStopConflict = errors.New("engine: a different turn is running")

// ErrNotEditable is returned by Remove for a command that is no longer
// waiting in the queue, and by Outbox.Edit and Outbox.Remove for a draft
// the engine has accepted.
var ErrNotEditable = errors.New("engine: the command already started")

// ErrConflict is returned when a command ID the engine knows is sent again
// with another body (see WithDigest).
var ErrConflict = errors.New("engine: this command ID was already used for a different command")

// ErrAlreadyDone is returned for a command ID that may belong to a finished
// command the engine no longer holds (it keeps the newest few hundred),
// when it has no command log to look the ID up in: the command is not run
// again. Send it with a new ID.
var ErrAlreadyDone = errors.New("engine: this command ID may belong to an earlier command that has finished; it was not run again")

// ErrUnknownCommand is returned for a command ID the engine never accepted.
var ErrUnknownCommand = errors.New("engine: unknown command")

// ErrNoApproval is returned by Approve for an ID that is not waiting.
var ErrNoApproval = errors.New("engine: no approval is pending with that id")

// ErrNothingToRetry is returned by Retry when the last turn did not fail.
var ErrNothingToRetry = errors.New("engine: the last turn did not fail")

// ErrInFlight is returned by Outbox when a command whose delivery is pending
// or uncertain would be resent, edited or removed.
var ErrInFlight = errors.New("engine: the command's delivery is pending or uncertain")

// errStop and errSteer are the causes a turn's contexts are cancelled with.
var (
	errStop  = errors.New("stopped by the user")
	errSteer = errors.New("interrupted by a steering instruction")
)

// ErrBusy is returned by EditAndResend and SelectBranch while a turn runs or
// commands wait: stop first, then edit or switch branches.
var ErrBusy = errors.New("engine: a turn is running or queued; stop it before switching branches")

// ErrNoBranches is returned by EditAndResend and SelectBranch when the
// engine's saver does not keep branches (it is not a Brancher).
var ErrNoBranches = errors.New("engine: this conversation's saver keeps no branches")

// ErrNotUserEntry is returned by EditAndResend for an entry that is not a
// user message of the current branch.
var ErrNotUserEntry = errors.New("engine: not a user message of the current branch")

// ErrCompacted is returned by EditAndResend when the turn's user message is
// no longer among the model's messages verbatim (a compaction summarized
// it), so the branch's model context cannot be cut there.
var ErrCompacted = errors.New("engine: that message was summarized by a compaction and cannot be edited")
