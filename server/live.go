package server

import (
	"slices"
	"unicode/utf8"

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
	// Totals is the session's usage so far, sub-agents included (absent
	// while nothing is counted). It stays after the turn ends.
	Totals Usage `json:"totals,omitzero"`
	// Children are the running sub-agents' regions, in start order.
	Children []ChildState `json:"children,omitzero"`
	// Allowed lists, sorted, the tools the engine runs without asking for
	// the rest of its session.
	Allowed []string `json:"allowed,omitzero"`
}

// Usage is tokens and cost counted (transcript.Usage).
type Usage struct {
	InputTokens     int64   `json:"inputTokens"`
	OutputTokens    int64   `json:"outputTokens"`
	CacheReadTokens int64   `json:"cacheReadTokens,omitzero"`
	CostUSD         float64 `json:"costUsd,omitzero"`
}

// ChildState is a running sub-agent's region as a terminal shows it: its
// label, what it does, its model and usage, and the last line of its
// feed. An approval's child names it by ID.
type ChildState struct {
	ID       string `json:"id"`
	Label    string `json:"label"`
	Activity string `json:"activity,omitzero"`
	Model    string `json:"model,omitzero"`
	Context  int64  `json:"context,omitzero"`
	Usage    Usage  `json:"usage,omitzero"`
	// Last is the last line of the newest entry of the child's feed, as
	// far as the owner's readers see it.
	Last string `json:"last,omitzero"`
}

// maxLast bounds a child's last line.
const maxLast = 256

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
	return t.State == u.State && t.Turn == u.Turn && t.Reply == u.Reply && t.Activity == u.Activity &&
		t.Context == u.Context && t.Totals == u.Totals && slices.Equal(t.Children, u.Children) && slices.Equal(t.Allowed, u.Allowed)
}

// control is t without what changes as text streams (a child's last
// line) and what the publisher reads from the engine (Allowed): the facts
// whose change is published at once rather than at the live cadence.
func (t TurnState) control() TurnState {
	t.Allowed = nil
	if len(t.Children) > 0 {
		cs := slices.Clone(t.Children)
		for i := range cs {
			cs[i].Last = ""
		}
		t.Children = cs
	}
	return t
}

// usageOf is u as the protocol sends it.
func usageOf(u transcript.Usage) Usage {
	return Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadTokens, CostUSD: u.CostUSD}
}

// childrenOf is the running sub-agents' regions of l.
func childrenOf(l transcript.Live) []ChildState {
	var out []ChildState
	for _, c := range l.Children.All() {
		if c.Done {
			continue
		}
		cs := ChildState{ID: c.ID, Label: c.Label, Activity: string(c.Activity), Model: c.Model, Context: c.PromptContext, Usage: usageOf(c.Usage)}
		cs.Last = clipLine(l.LastLine(c), maxLast)
		out = append(out, cs)
	}
	return out
}

// clipLine cuts s to at most n bytes on a rune boundary.
func clipLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
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
