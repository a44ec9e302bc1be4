package toolview

import (
	"errors"
	"fmt"
)

// ErrClosed is returned by every update, flush and artifact write made after
// the invocation reached its closure boundary. Closed is absorbing.
var ErrClosed = errors.New("toolview: invocation is closed")

// ErrHostClosed is returned by Open after the host was torn down.
var ErrHostClosed = errors.New("toolview: host is shut down")

// ErrUnknownInvocation is returned by Release and lookups for an ID the
// host does not hold (never opened, or already released).
var ErrUnknownInvocation = errors.New("toolview: unknown invocation")

// ErrDuplicateInvocation is returned by Open when the ID is already in use.
var ErrDuplicateInvocation = errors.New("toolview: invocation id already in use")

// ErrRangeLimit is returned by ReadArtifact when the requested range is longer
// than the host's range limit or lies outside the committed bytes.
var ErrRangeLimit = errors.New("toolview: artifact range outside the allowed bounds")

// ErrNoArtifactDir is returned when a producer asks for an artifact but the host
// was given no data folder to keep artifacts in.
var ErrNoArtifactDir = errors.New("toolview: no artifact folder configured")

// ErrInvalidManifest wraps every manifest problem found by ParseManifest.
var ErrInvalidManifest = errors.New("toolview: invalid manifest")

// ErrInvalidArguments is returned (wrapped) when complete tool arguments fail
// the tool's declared JSON Schema.
var ErrInvalidArguments = errors.New("toolview: arguments do not match the tool's schema")

// ErrInvalidEnvelope wraps problems decoding a legacy placement envelope.
var ErrInvalidEnvelope = errors.New("toolview: invalid legacy envelope")

// Reason classifies why the host refused an update. The set is closed, so it
// is safe to use as a metric label.
type Reason uint8

// Rejection reasons.
const (
	ReasonClosed         Reason = iota // the invocation is closed
	ReasonStale                        // revision not above the current one
	ReasonOversized                    // encoded payload over the bound
	ReasonSchema                       // schema/version not declared by the producer
	ReasonMalformed                    // payload is not valid JSON, or the request is malformed
	ReasonArtifact                     // artifact checkpoint inconsistent with its file
	ReasonDraftGap                     // draft append not contiguous; a checkpoint is required
	ReasonDraftTruncated               // draft append after truncation; only checkpoints allowed
	ReasonPlugin                       // a plugin misbehaved at the protocol level
	numReasons
)

var reasonNames = [numReasons]string{
	"closed", "stale", "oversized", "schema", "malformed", "artifact",
	"draft_gap", "draft_truncated", "plugin",
}

func (r Reason) String() string {
	if r < numReasons {
		return reasonNames[r]
	}
	return "unknown"
}

// RejectError is the error every refused update returns. It names the reason
// and, where it applies, the limit and the actual size, but never any content
// of the payload. errors.Is matches it against ErrClosed for closed rejections.
type RejectError struct {
	Reason Reason
	Item   string // "" for the primary item, else the supplemental key
	Limit  int64  // the bound that was exceeded, or the current revision for stale
	Actual int64  // the offending size, or the offered revision for stale
	Detail string // a fixed, payload-free explanation
}

func (e *RejectError) Error() string {
	where := "primary item"
	if e.Item != "" {
		where = fmt.Sprintf("supplemental %q", e.Item)
	}
	switch e.Reason {
	case ReasonOversized:
		return fmt.Sprintf("toolview: update to %s rejected: encoded payload is %d bytes, over the %d-byte bound", where, e.Actual, e.Limit)
	case ReasonStale:
		return fmt.Sprintf("toolview: update to %s rejected: revision %d is not above current revision %d", where, e.Actual, e.Limit)
	}
	msg := fmt.Sprintf("toolview: update to %s rejected (%s)", where, e.Reason)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Is lets errors.Is(err, ErrClosed) hold for closed rejections.
func (e *RejectError) Is(target error) bool {
	return target == ErrClosed && e.Reason == ReasonClosed
}

// ErrDraftFinished is returned by draft updates that arrive after the
// complete arguments were handed to the tool: drafts end where invocation
// begins.
var ErrDraftFinished = errors.New("toolview: the argument draft is finished")
