package server

import (
	"github.com/foliodev/folio/transcript"
)

// ChangeOp names a live change.
type ChangeOp string

// Live change operations; they map one-to-one to the protocol's event ops.
const (
	OpUpsert       ChangeOp = "upsert"
	OpAppend       ChangeOp = "append" // sent only: an upsert that only appended text
	OpSettle       ChangeOp = "settle"
	OpPresentation ChangeOp = "presentation"
	OpReplaced     ChangeOp = "replaced"
	OpHead         ChangeOp = "head"
	OpQueue        ChangeOp = "queue"
	OpTurn         ChangeOp = "turn"
	OpReceipt      ChangeOp = "receipt"
	OpApprovals    ChangeOp = "approvals"
)

// Change is one live change of a conversation, published by an in-process
// producer: the server's own engine (conversation.publish), or another
// Engine through Server.Publish. Which fields matter depends on Op.
type Change struct {
	Op ChangeOp
	// Entry is the entry's current content (upsert) or final content
	// (settle).
	Entry transcript.Entry
	// After is the ID of the entry the upserted one follows.
	After string
	// EntryID, InvocationID and Presentation describe a presentation update
	// of an open tool invocation.
	EntryID      string
	InvocationID string
	Presentation *transcript.Presentation
	// Ephemeral marks a presentation shown only while its invocation is
	// open: it is never kept past the entry's settlement.
	Ephemeral bool
	// Head is the newly selected branch head (head).
	Head string
	// Queue is the conversation's queue of waiting sends (queue).
	Queue []QueueItem
	// Turn is the top-level turn's state (turn).
	Turn *TurnState
	// Receipt is a command's new state (receipt).
	Receipt *Receipt
	// Steers is the steering instructions accepted for the running turn
	// and not yet applied (queue, beside Queue).
	Steers []QueueItem
	// Approvals lists the tool calls waiting for a decision (approvals).
	Approvals []ApprovalItem
}

// ApprovalItem is a tool call waiting for the person's decision; answer it
// with the approve command.
type ApprovalItem struct {
	InvocationID string `json:"invocationId"`
	Tool         string `json:"tool"`
	// Args is the call's arguments as JSON text, cut to
	// transcript.PreviewBytes as the terminal shows them.
	Args string `json:"args"`
	// Child names the sub-agent region the call belongs to ("" for the
	// main agent).
	Child string `json:"child,omitzero"`
}

// controlState is a conversation's queue, turn and approvals, sent with
// every snapshot answer so a tab that opens (or reconnects) in the middle
// of a turn sees them at once.
type controlState struct {
	Turn      *TurnState     `json:"turn,omitzero"`
	Queue     []QueueItem    `json:"queue"`
	Steers    []QueueItem    `json:"steers,omitzero"`
	Approvals []ApprovalItem `json:"approvals"`
}

// controlOf reads the queue, the running turn and the approvals from a
// store's live state, the facts the terminal shows: the queue is the sends
// waiting behind the running turn, the steers those accepted for it and
// not yet applied (nil when there are none).
func controlOf(l transcript.Live) controlState {
	t := turnOf(l)
	cs := controlState{Turn: &t, Queue: []QueueItem{}, Approvals: []ApprovalItem{}}
	for _, c := range l.Queue.All() {
		if c.State == transcript.CommandQueued && !c.Steer {
			cs.Queue = append(cs.Queue, QueueItem{CommandID: c.ID, Text: c.Preview, State: c.State})
		}
	}
	for _, c := range l.Steers.All() {
		if c.State == transcript.CommandRunning {
			cs.Steers = append(cs.Steers, QueueItem{CommandID: c.ID, Text: c.Preview, State: c.State})
		}
	}
	for _, ap := range l.Approvals.All() {
		cs.Approvals = append(cs.Approvals, ApprovalItem{InvocationID: ap.ID, Tool: ap.Tool, Args: ap.Args, Child: ap.Child})
	}
	return cs
}

// QueueItem is a send waiting behind the running turn.
type QueueItem struct {
	CommandID string                  `json:"commandId"`
	Text      string                  `json:"text"`
	State     transcript.CommandState `json:"state"`
}

// Turn states.
const (
	turnRunning = "running"
	turnIdle    = "idle"
)

// TurnState says whether the top-level turn runs, and which it is, and
// what a terminal's footer shows of it: what the main agent does now, a
// model request waiting to be tried again, and the prompt's size.
type TurnState struct {
	State string `json:"state"` // turnRunning or turnIdle
	Turn  string `json:"turn,omitzero"`
	Reply string `json:"reply,omitzero"`
	// Activity is the main agent's transcript.Activity while the turn
	// runs: thinking, responding, tool or waiting ("" while idle).
	Activity string `json:"activity,omitzero"`
	// Retry is set while a failed model request waits to be tried again.
	Retry *TurnRetry `json:"retry,omitzero"`
	// Context is the prompt-context token count the model last reported.
	Context int64 `json:"context,omitzero"`
}

// TurnRetry is a model request that failed and will be tried again.
type TurnRetry struct {
	Attempt int    `json:"attempt"` // the attempt that runs next, from 2
	Reason  string `json:"reason"`
	// At is when that attempt starts, in Unix milliseconds.
	At int64 `json:"at"`
}

// equal reports whether t and u say the same.
func (t TurnState) equal(u TurnState) bool {
	if (t.Retry == nil) != (u.Retry == nil) || t.Retry != nil && *t.Retry != *u.Retry {
		return false
	}
	t.Retry, u.Retry = nil, nil
	return t == u
}

// liveEntry is the server's view of an entry changed during the current
// generation: what it last sent, at which revision.
type liveEntry struct {
	entry transcript.Entry
	raw   []byte
	rev   int64
	open  bool
	after string
	pres  *livePresentation // the live value of an open call; closure ends it
	n16   int               // an open entry's streaming text length in UTF-16 units
	// durableAt is the log offset just past the record the follower read
	// this entry from, 0 while it is known only from the engine. A
	// snapshot read up to offset N holds exactly the entries with
	// 0 < durableAt <= N; the others travel in its checkpoint.
	durableAt int64
}

type livePresentation struct {
	invocationID string
	p            transcript.Presentation
	rev          int64
	ephemeral    bool
}
