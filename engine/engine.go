package engine

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

// Saver persists the document and the model-facing messages. *history.Log
// implements it; Save appends what is new.
type Saver interface {
	Save(doc transcript.Document, msgs []message.Message) error
}

// Decision answers an approval request.
type Decision uint8

// Decisions.
const (
	Deny         Decision = iota // the call is not run; its receipt says denied
	AllowOnce                    // run this call
	AllowSession                 // run this call and every later call of the tool
)

// Approval is a tool call waiting for a decision.
type Approval struct {
	// ID is the invocation ID, which is also the tool entry's ID.
	ID   string
	Tool string
	// Args is the complete arguments, as JSON.
	Args string
	// Child is the child region the call belongs to, or "" for the main
	// agent.
	Child string
}

// Approver decides approvals without a person, for headless runs. It is
// called on the turn's goroutine; returning blocks the turn until then.
type Approver func(ctx context.Context, a Approval) Decision

// Attachment is a piece of text sent with a message (a file the person
// attached). It reaches the model inside the user message.
type Attachment struct {
	Name string
	Text string
}

// State is where a command is, in the one vocabulary of command states
// that package transcript defines (transcript.CommandState).
type State = transcript.CommandState

// Command states, as Send, Steer and Commands report them.
const (
	Queued   = transcript.CommandQueued   // accepted, waiting for the turn before it
	Running  = transcript.CommandRunning  // its turn is running (or, for a steer, it waits for the next boundary)
	Applied  = transcript.CommandApplied  // a steer the model received
	Done     = transcript.CommandDone     // its turn finished, or (Once) it took effect
	Failed   = transcript.CommandFailed   // its turn failed; see the failure entry
	Stopped  = transcript.CommandStopped  // its turn was stopped
	Rejected = transcript.CommandRejected // not accepted; Reason says why. The text is the caller's draft again.
	Removed  = transcript.CommandRemoved  // taken out of the queue before it started
)

// Receipt is the engine's answer about one command.
type Receipt struct {
	CommandID string
	State     State
	// Kind is what the command is: the kind the caller gave it (AsKind),
	// else "send", "steer" or "retry".
	Kind string
	// EntryID is the user entry of the command's turn, once written (for
	// a retry, the user entry of the turn it retries).
	EntryID string
	// Steer is set for steering commands.
	Steer bool
	// Text is the command's current text (after edits).
	Text string
	// Position is the place in the queue from 1 while Queued.
	Position int
	// Duplicate is set when the ID was already known: nothing new happened.
	Duplicate bool
	// Reason explains a Rejected or Failed state.
	Reason string
}

// CommandOption describes a command beyond its text, for callers that
// speak for clients (the server).
type CommandOption func(*commandTag)

type commandTag struct{ kind, digest string }

// AsKind names the command's kind in its receipts ("edit", "stop", ...).
func AsKind(kind string) CommandOption { return func(t *commandTag) { t.kind = kind } }

// WithDigest gives a digest of the command's whole body: the same command
// ID sent again with another digest is refused with ErrConflict instead
// of answered as a duplicate.
func WithDigest(d string) CommandOption { return func(t *commandTag) { t.digest = d } }

func tagOf(opts []CommandOption) commandTag {
	var t commandTag
	for _, o := range opts {
		o(&t)
	}
	return t
}

type command struct {
	id          string
	kind        string // "" for send, steer and retry (see Receipt.Kind)
	digest      string // the caller's digest of the body, "" when not given
	entryID     string // the user entry of its turn, once known
	seq         uint64 // the engine's receipt counter when its receipt last changed
	text        string
	attachments []Attachment
	steer       bool
	retry       bool // a Retry continuation: no user entry
	state       State
	reason      string
	done        chan struct{}
	log         CommandLog // where its outcome is recorded, when durable
	ctr         *uint64    // the engine's receipt counter (guarded by its lock)
}

// close settles c in state s. The engine's lock is held, so it advances the
// receipt counter of the engine that owns c (ctr).
func (c *command) close(s State, reason string) {
	if c.state.Final() {
		return
	}
	c.state, c.reason = s, reason
	c.changed()
	close(c.done)
	if c.log != nil {
		// The outcome is best kept: a failed write leaves the accepted
		// record, which a restart reads as interrupted, not as a new ID.
		_ = c.log.RecordCommand(c.record())
	}
}

// changed marks c's receipt as changed, for Receipts.
func (c *command) changed() {
	if c.ctr != nil {
		*c.ctr++
		c.seq = *c.ctr
	}
}

// record is c's current state as its sidecar line.
func (c *command) record() history.CommandRecord {
	return history.CommandRecord{ID: c.id, State: string(c.state), Reason: c.reason, Steer: c.steer,
		Kind: c.kindOf(), Digest: c.digest, Entry: c.entryID}
}

// kindOf is c's kind as receipts name it.
func (c *command) kindOf() string {
	switch {
	case c.kind != "":
		return c.kind
	case c.steer:
		return "steer"
	case c.retry:
		return "retry"
	}
	return "send"
}

// CommandLog keeps command receipts across restarts; *history.Log is one
// (a sidecar beside the log, under its lock).
type CommandLog interface {
	RecordCommand(history.CommandRecord) error
	LoadCommands() ([]history.CommandRecord, error)
}

// WithCommandLog makes commands durable: each accepted command is recorded
// before Send, Steer or Retry returns, and its outcome when it settles. New
// reads the commands recorded before, so a command ID sent again after a
// restart answers with its first receipt (Duplicate) and never starts a
// second turn. A command that had not settled when the process died is
// reported Failed, "interrupted".
func WithCommandLog(l CommandLog) Option { return func(e *Engine) { e.cmdlog = l } }

// ReasonInterrupted is the Reason of a command that was accepted but had not
// settled when the process that ran it stopped.
const ReasonInterrupted = "interrupted: folio stopped before this command finished"

// ReceiptOf is the receipt a sidecar record gives after a restart: a
// command that had not settled when the process that ran it stopped is
// Failed, ReasonInterrupted.
func ReceiptOf(r history.CommandRecord) Receipt {
	c := commandOf(r)
	return Receipt{CommandID: c.id, State: c.state, Kind: c.kindOf(), EntryID: c.entryID, Steer: c.steer, Reason: c.reason}
}

func commandOf(r history.CommandRecord) *command {
	c := &command{id: r.ID, kind: r.Kind, digest: r.Digest, entryID: r.Entry, steer: r.Steer,
		state: State(r.State), reason: r.Reason, done: make(chan struct{})}
	if r.Kind == "retry" {
		c.kind, c.retry = "", true
	}
	if !c.state.Final() {
		c.state, c.reason = Failed, ReasonInterrupted
	}
	close(c.done)
	return c
}

// loadCommands fills e.commands with the command log's settled receipts.
func (e *Engine) loadCommands() {
	recs, err := e.cmdlog.LoadCommands()
	if err != nil && len(recs) == 0 {
		return
	}
	for _, r := range recs {
		e.commands[r.ID] = commandOf(r)
	}
}

// acceptLocked records a new command as accepted before the caller is told
// so; it fails when the record cannot be written. tag is what the caller
// said of the command beyond its text.
func (e *Engine) acceptLocked(c *command, tag commandTag) error {
	c.kind, c.digest, c.ctr = tag.kind, tag.digest, &e.receipts
	if e.cmdlog == nil {
		return nil
	}
	if err := e.cmdlog.RecordCommand(c.record()); err != nil {
		return fmt.Errorf("record the command: %w", err)
	}
	c.log = e.cmdlog
	return nil
}

// Option configures an Engine.
type Option func(*Engine)

// WithTools sets the tools offered to the model. Default: none.
func WithTools(s *tools.Set) Option { return func(e *Engine) { e.tools = s } }

// WithHost sets the presentation host tools run in. Default: a host of the
// engine's own, without an artifact folder.
func WithHost(h *toolview.Host) Option { return func(e *Engine) { e.host = h } }

// WithSaver persists after every step, before announcing a failure and at
// the end of every turn.
func WithSaver(s Saver) Option { return func(e *Engine) { e.saver = s } }

// WithModel sets the model name sent with requests and shown in the footer.
func WithModel(m string) Option { return func(e *Engine) { e.model = m } }

// DefaultSystem is the system prompt used unless WithSystem replaces it.
const DefaultSystem = "You are folio, a careful assistant working in the user's workspace. " +
	"Use the tools when they help: shell runs commands, read_file and list_files look around, " +
	"write_file and edit_file change files, task hands a self-contained job to a sub-agent. " +
	"The user may approve or deny calls that change things. Answer in markdown; keep answers concise."

// WithSystem sets the system prompt ("" sends none).
func WithSystem(s string) Option { return func(e *Engine) { e.system = s } }

// WithContextWindow sets the model's context window in tokens, for
// compaction. Default: provider.ContextWindow(model); 0 disables compaction.
func WithContextWindow(n int) Option { return func(e *Engine) { e.window = n; e.windowSet = true } }

// WithBackoff sets the retry policy. Default: provider.DefaultBackoff.
func WithBackoff(b provider.Backoff) Option { return func(e *Engine) { e.backoff = b } }

// WithAllowed allows tools without asking (a flag such as --allow shell).
// The name "*" allows every tool; a name ending in "*" allows every tool
// with that prefix ("github__*": every tool of the MCP server github).
func WithAllowed(names ...string) Option {
	return func(e *Engine) {
		for _, n := range names {
			e.allowed[n] = true
		}
	}
}

// WithApprover decides approvals through a function instead of waiting for
// Approve.
func WithApprover(a Approver) Option { return func(e *Engine) { e.approver = a } }

// WithMaxSteps bounds the model steps of one turn. Default 50.
func WithMaxSteps(n int) Option { return func(e *Engine) { e.maxSteps = n } }

// WithStreamSaveEvery sets how often a streaming answer's accepted text is
// saved at the latest (default 2 s; 8 KiB of new text saves sooner). A
// shorter period loses less in a crash and lets readers of the log (other
// server replicas) follow the answer more closely, at the cost of more
// provisional records.
func WithStreamSaveEvery(d time.Duration) Option {
	return func(e *Engine) {
		if d > 0 {
			e.saveEvery = d
		}
	}
}

// WithJitter sets the random source for backoff jitter (tests pin it).
func WithJitter(f func() float64) Option { return func(e *Engine) { e.jitter = f } }

// Engine runs turns. Build it with New; Close it when done.
type Engine struct {
	saveEvery time.Duration // see WithStreamSaveEvery
	store     *transcript.Store
	prov      provider.Provider
	tools     *tools.Set
	host      *toolview.Host
	ownHost   bool
	saver     Saver
	model     string
	system    string
	window    int
	windowSet bool
	backoff   provider.Backoff
	approver  Approver
	maxSteps  int
	jitter    func() float64

	ctx      context.Context
	cancel   context.CancelFunc
	loopDone chan struct{}

	saveMu sync.Mutex // serializes persist's saves (see there)

	mu         sync.Mutex
	closed     bool
	allowed    map[string]bool
	commands   map[string]*command
	receipts   uint64 // advanced whenever a command's receipt changes (Receipts)
	cmdlog     CommandLog
	order      []*command // every command, in acceptance order, for Commands
	queue      []*command
	wake       chan struct{}
	changed    chan struct{}
	turn       *turn
	approvals  []*pendingApproval
	lastFailed bool
	// dropped are commands rejected before they were used (by Stop, or
	// a turn that ended before a steer's boundary), newest last. They
	// stay in the store's live state as drafts with a send action until
	// Dismiss or a new conversation; see publishLocked.
	dropped     []*command
	epoch       uint64 // advanced by Clear; older turns' messages are dropped
	saveFailing bool   // the last save failed; its notice was shown
	// modelFor holds model switches of queued sends (SendWithModel),
	// applied as each is dispatched; modelName mirrors model for readers
	// outside the loop.
	modelFor  map[string]ModelChoice
	modelName string

	// Owned by the loop goroutine.
	msgs           []message.Message
	msgEntry       []string // for each message, the entry it came with ("" unknown)
	legacy         []splice // failures an older log holds only as entries (failmsg.go)
	lastPrompt     int64    // prompt tokens the provider reported for the last request
	lastPromptMsgs int
	bridges        map[string]*bridge // open tool entries fed by host changes
	bridgeMu       sync.Mutex
	unsubscribe    func()
}

// New returns a running engine writing to store and asking prov.
func New(store *transcript.Store, prov provider.Provider, opts ...Option) *Engine {
	e := &Engine{
		saveEvery: durableEvery,
		store:     store,
		prov:      prov,
		backoff:   provider.DefaultBackoff,
		system:    DefaultSystem,
		maxSteps:  50,
		jitter:    rand.Float64,
		allowed:   map[string]bool{},
		commands:  map[string]*command{},
		wake:      make(chan struct{}, 1),
		changed:   make(chan struct{}, 1),
		loopDone:  make(chan struct{}),
		bridges:   map[string]*bridge{},
	}
	for _, o := range opts {
		o(e)
	}
	if e.cmdlog != nil {
		e.loadCommands()
	}
	if e.host == nil {
		e.host = toolview.New()
		e.ownHost = true
	}
	if !e.windowSet {
		e.window = provider.ContextWindow(e.model)
	}
	e.modelName = e.model
	e.unsubscribe = e.host.Subscribe(e.onToolChange)
	e.ctx, e.cancel = context.WithCancel(context.Background())
	if e.model != "" {
		_ = store.Lease().SetModel(e.model)
	}
	go e.loop()
	return e
}

// Store returns the store the engine writes to.
func (e *Engine) Store() *transcript.Store { return e.store }

// Host returns the presentation host tools run in (for Attach and artifact
// reads).
func (e *Engine) Host() *toolview.Host { return e.host }

// Resume makes the engine continue a saved conversation: the store is
// hydrated with doc (a new view lifetime) and msgs become the model-facing
// history. Nothing restarts: partial text in doc is settled history, and no
// request or approval is repeated. It fails while a turn runs or waits.
func (e *Engine) Resume(doc transcript.Document, msgs []message.Message) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.resumeLocked(doc, msgs)
}

// resumeLocked is Resume with e.mu held; SelectBranch and EditAndResend
// hydrate under the same lock as their busy check.
func (e *Engine) resumeLocked(doc transcript.Document, msgs []message.Message) error {
	if e.closed {
		return ErrClosed
	}
	if e.turn != nil || len(e.queue) > 0 {
		return fmt.Errorf("engine: cannot resume while a turn is running or queued")
	}
	e.store.Hydrate(doc)
	if e.model != "" {
		_ = e.store.Lease().SetModel(e.model)
	}
	e.msgs = answerDangling(slices.Clip(msgs))
	e.legacy = legacyFailures(doc, e.msgs) // sent with each request, never saved
	e.msgEntry = make([]string, len(e.msgs))
	e.lastPrompt, e.lastPromptMsgs = 0, 0
	// A conversation that ended in a failure can be retried after resume;
	// only explicitly, like before it was saved.
	e.lastFailed = doc.Len() > 0 && doc.At(doc.Len()-1).Content.Kind() == transcript.KindFailure
	e.epoch++
	e.dropped = nil
	e.signalLocked()
	return nil
}

// Clear starts a new, empty conversation with the given document ID: the
// running turn is stopped (its late writes are dropped with its retired
// lease), queued commands are rejected, and the model-facing history
// starts empty. The saver stays; give the new conversation its own with
// SetSaver.
func (e *Engine) Clear(docID string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	for _, c := range e.queue {
		c.close(Rejected, "the conversation was cleared before the message was sent")
	}
	e.queue = nil
	if t := e.turn; t != nil && !t.stopping {
		t.stopping = true
		for _, c := range t.steers {
			c.close(Rejected, "the conversation was cleared before the instruction was used")
		}
		t.steers = nil
		t.cancel(errStop)
	}
	e.epoch++
	// The new conversation's view lifetime starts with nothing in its
	// queue: drafts of the old one are the client's, not this view's.
	e.dropped = nil
	e.store.Clear(docID)
	if e.model != "" {
		_ = e.store.Lease().SetModel(e.model)
	}
	e.msgs, e.msgEntry, e.legacy = nil, nil, nil
	e.lastPrompt, e.lastPromptMsgs, e.lastFailed = 0, 0, false
	e.signalLocked()
	return nil
}

// SetSaver changes where the engine saves, for a conversation started with
// Clear or Resume. It takes effect at the next save.
func (e *Engine) SetSaver(s Saver) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.saver = s
}

// answerDangling gives every tool call that has no result (the log was
// saved while it ran, and folio stopped) a "not run" result, so the next
// request is one a provider accepts. Nothing is run again.
func answerDangling(msgs []message.Message) []message.Message {
	var out []message.Message
	var pending []message.ToolCall
	flush := func() {
		for _, c := range pending {
			out = append(out, message.Message{Role: message.Tool, ToolCallID: c.ID, Name: c.Name, IsError: true,
				Content: "not run: folio stopped before this call finished"})
		}
		pending = nil
	}
	changed := false
	for _, m := range msgs {
		switch {
		case m.Role == message.Tool:
			for i, c := range pending {
				if c.ID == m.ToolCallID {
					pending = slices.Delete(pending, i, i+1)
					break
				}
			}
		default:
			changed = changed || len(pending) > 0
			flush()
		}
		out = append(out, m)
		if m.Role == message.Assistant {
			pending = append(pending, m.ToolCalls...)
		}
	}
	changed = changed || len(pending) > 0
	flush()
	if !changed {
		return msgs
	}
	return out
}

// Messages returns a copy of the model-facing messages. Between turns it is
// what the next request starts from.
func (e *Engine) Messages() []message.Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.msgs)
}

// admit is the opening every command that queues or steers a turn shares
// (Send, Steer, EditAndResend, Retry): it takes e.mu, which the caller
// releases whatever admit returns; refuses a command without an ID, or with
// text (when it carries any) that is blank, with ErrEmpty, and one whose
// ctx has ended; then admitLocked. done says the command is answered: the
// caller returns r and err.
func (e *Engine) admit(ctx context.Context, commandID string, text *string, opts []CommandOption) (tag commandTag, r Receipt, done bool, err error) {
	e.mu.Lock()
	if commandID == "" || text != nil && strings.TrimSpace(*text) == "" {
		return tag, Receipt{}, true, ErrEmpty
	}
	if err := ctx.Err(); err != nil {
		return tag, Receipt{}, true, err
	}
	tag = tagOf(opts)
	r, done, err = e.admitLocked(commandID, tag)
	return tag, r, done, err
}

// admitLocked is where every command starts, with e.mu held: after Close
// it refuses (done with ErrClosed), and a command ID seen before returns
// that command's receipt with Duplicate set (done, nil), so a retried
// delivery never acts twice; seen before with another digest, it is
// refused with ErrConflict.
func (e *Engine) admitLocked(commandID string, tag commandTag) (r Receipt, done bool, err error) {
	if e.closed {
		return Receipt{}, true, ErrClosed
	}
	if c, ok := e.commands[commandID]; ok {
		if tag.digest != "" && c.digest != "" && tag.digest != c.digest {
			return Receipt{}, true, fmt.Errorf("%w: %q", ErrConflict, commandID)
		}
		r = e.receiptLocked(c)
		r.Duplicate = true
		return r, true, nil
	}
	return Receipt{}, false, nil
}

// Send queues a message. commandID is the client's own ID for it: sending
// the same ID again (a retried delivery) returns the first receipt with
// Duplicate set and never starts a second turn.
func (e *Engine) Send(ctx context.Context, commandID, text string, attachments []Attachment, opts ...CommandOption) (Receipt, error) {
	tag, r, done, err := e.admit(ctx, commandID, &text, opts)
	defer e.mu.Unlock()
	if done {
		return r, err
	}
	c := &command{id: commandID, text: text, attachments: slices.Clone(attachments), state: Queued, done: make(chan struct{})}
	if err := e.acceptLocked(c, tag); err != nil {
		return Receipt{}, err
	}
	e.commands[commandID] = c
	e.order = append(e.order, c)
	e.queue = append(e.queue, c)
	e.signalLocked()
	return e.receiptLocked(c), nil
}

// Steer gives the running turn an instruction. A text or reasoning response
// that is streaming is interrupted at once, keeping what it emitted, and the
// instruction reaches the model before its next request. A response that is
// streaming tool arguments, and running tools, finish first. The consumed
// instruction appears as a steering entry between the reply content before
// and after it.
func (e *Engine) Steer(commandID, text string, opts ...CommandOption) (Receipt, error) {
	tag, r, done, err := e.admit(context.Background(), commandID, &text, opts)
	defer e.mu.Unlock()
	if done {
		return r, err
	}
	t := e.turn
	if t == nil {
		return Receipt{}, ErrNoTurn
	}
	if t.stopping {
		return Receipt{}, ErrCancelled
	}
	c := &command{id: commandID, text: text, steer: true, state: Running, done: make(chan struct{})}
	if err := e.acceptLocked(c, tag); err != nil {
		return Receipt{}, err
	}
	e.commands[commandID] = c
	e.order = append(e.order, c)
	t.steers = append(t.steers, c)
	if t.interruptible() {
		t.interrupt(errSteer)
	}
	e.signalLocked()
	return e.receiptLocked(c), nil
}

// Stop stops the running turn: its request and tools are cancelled, the
// partial reply and its trace stay, and a stopped entry records what was
// and was not done. Steers that had not reached the model, and messages
// queued behind the turn, are rejected and stay the caller's drafts: a stop
// never lets another turn start by itself. Stop reports whether a turn was
// running.
func (e *Engine) Stop() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stopLocked()
}

// stopLocked stops the running turn; e.mu is held.
func (e *Engine) stopLocked() bool {
	t := e.turn
	if t == nil || t.stopping {
		return false
	}
	t.stopping = true
	for _, c := range t.steers {
		e.rejectLocked(c, "the turn was stopped before the instruction was used")
	}
	t.steers = nil
	for _, c := range e.queue {
		e.rejectLocked(c, "the turn was stopped before the message was sent")
	}
	e.queue = nil
	t.cancel(errStop)
	e.signalLocked()
	return true
}

// StopTurn stops the running turn only if it is the one the caller saw:
// id is its user entry or command ID, and reply, when not empty, its first
// answer entry. A stop that arrives after its turn ended must not stop the
// next one. It returns ErrNoTurn or ErrStopConflict otherwise.
func (e *Engine) StopTurn(id, reply string) error {
	e.mu.Lock()
	t := e.turn
	switch {
	case t == nil:
		e.mu.Unlock()
		return ErrNoTurn
	case id != t.userID && id != t.cmd.id, reply != "" && reply != t.replyID:
		e.mu.Unlock()
		return ErrStopConflict
	}
	// Check and stop in one hold of the lock: released in between, the
	// named turn could end and the next queued one be stopped instead.
	e.stopLocked()
	e.mu.Unlock()
	return nil
}

// Approve decides a pending approval.
func (e *Engine) Approve(id string, d Decision) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, a := range e.approvals {
		if a.ID == id {
			e.approvals = slices.Delete(e.approvals, i, i+1)
			if d == AllowSession {
				e.allowed[a.Tool] = true
			}
			a.decide <- d
			e.signalLocked()
			return nil
		}
	}
	return fmt.Errorf("%w: %q", ErrNoApproval, id)
}

// Allow allows a tool for the rest of the session.
func (e *Engine) Allow(tool string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.allowed[tool] = true
}

// Allowed lists, sorted, the tools allowed for the rest of the session
// (by AllowSession, Allow or the engine's options).
func (e *Engine) Allowed() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, 0, len(e.allowed))
	for t, ok := range e.allowed {
		if ok {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// Retry runs the failed last turn again from its last request: no new user
// entry, the same messages. It is the explicit action a failure entry
// offers; the engine never retries a failed turn by itself.
func (e *Engine) Retry(commandID string, opts ...CommandOption) (Receipt, error) {
	tag, r, done, err := e.admit(context.Background(), commandID, nil, opts)
	defer e.mu.Unlock()
	if done {
		return r, err
	}
	if !e.lastFailed || e.turn != nil || len(e.queue) > 0 {
		return Receipt{}, ErrNothingToRetry
	}
	c := &command{id: commandID, retry: true, state: Queued, done: make(chan struct{})}
	if err := e.acceptLocked(c, tag); err != nil {
		return Receipt{}, err
	}
	e.lastFailed = false
	e.commands[commandID] = c
	e.order = append(e.order, c)
	e.queue = append(e.queue, c)
	e.signalLocked()
	return e.receiptLocked(c), nil
}

// Remove takes a command out of the queue before it starts.
func (e *Engine) Remove(commandID string) (Receipt, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.commands[commandID]
	if !ok {
		return Receipt{}, fmt.Errorf("%w: %q", ErrUnknownCommand, commandID)
	}
	if c.state != Queued {
		return Receipt{}, ErrNotEditable
	}
	e.queue = slices.DeleteFunc(e.queue, func(q *command) bool { return q == c })
	c.close(Removed, "")
	e.signalLocked()
	return e.receiptLocked(c), nil
}

// Status returns the receipt of a command, for clients that poll.
func (e *Engine) Status(commandID string) (Receipt, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.commands[commandID]
	if !ok {
		return Receipt{}, fmt.Errorf("%w: %q", ErrUnknownCommand, commandID)
	}
	return e.receiptLocked(c), nil
}

// Once runs a command that is not a turn (a stop, an approval, a branch
// switch) at most once per command ID: fn runs with the command Running,
// and a nil error settles it Done (recorded in the command log, when
// there is one). An error is returned as it is and leaves no record: the
// command did nothing, so a later delivery of the same ID runs again. A
// repeated delivery of a command that ran returns its receipt with
// Duplicate set, ErrConflict when its digest differs.
func (e *Engine) Once(commandID string, fn func() error, opts ...CommandOption) (Receipt, error) {
	if commandID == "" {
		return Receipt{}, ErrEmpty
	}
	tag := tagOf(opts)
	e.mu.Lock()
	if r, done, err := e.admitLocked(commandID, tag); done {
		e.mu.Unlock()
		return r, err
	}
	c := &command{id: commandID, state: Running, done: make(chan struct{})}
	c.kind, c.digest, c.ctr = tag.kind, tag.digest, &e.receipts
	e.commands[commandID] = c
	e.mu.Unlock()

	err := fn()

	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		delete(e.commands, commandID)
		close(c.done)
		return Receipt{}, err
	}
	c.log = e.cmdlog
	c.close(Done, "")
	return e.receiptLocked(c), nil
}

// Receipts returns the receipts of the commands sent through Send, Steer,
// Retry or EditAndResend whose receipt changed after mark (0: since the
// engine started), in the order they changed, and the mark to pass next
// time. A command that changed twice is listed once, as it is now.
func (e *Engine) Receipts(mark uint64) ([]Receipt, uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var changed []*command
	for _, c := range e.order {
		if c.seq > mark {
			changed = append(changed, c)
		}
	}
	slices.SortFunc(changed, func(a, b *command) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]Receipt, len(changed))
	for i, c := range changed {
		out[i] = e.receiptLocked(c)
	}
	return out, e.receipts
}

// Commands lists every command in acceptance order with its state: the
// queue (State Queued, in dispatch order), the running turn and its steers,
// and finished ones.
func (e *Engine) Commands() []Receipt {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Receipt, len(e.order))
	for i, c := range e.order {
		out[i] = e.receiptLocked(c)
	}
	return out
}

// Wait blocks until the command reaches a final state and returns its
// receipt.
func (e *Engine) Wait(ctx context.Context, commandID string) (Receipt, error) {
	e.mu.Lock()
	c, ok := e.commands[commandID]
	e.mu.Unlock()
	if !ok {
		return Receipt{}, fmt.Errorf("%w: %q", ErrUnknownCommand, commandID)
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		return Receipt{}, ctx.Err()
	}
	return e.Status(commandID)
}

// Changed returns a channel that receives a value (coalesced) whenever a
// command or approval changes state. There is one channel per engine; use it
// from one place.
func (e *Engine) Changed() <-chan struct{} { return e.changed }

// Close stops the running turn, rejects what is queued and ends the loop.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	for _, c := range e.queue {
		c.close(Rejected, "folio shut down before the message was sent")
	}
	e.queue = nil
	if t := e.turn; t != nil {
		t.stopping = true
		for _, c := range t.steers {
			c.close(Rejected, "folio shut down before the instruction was used")
		}
		t.steers = nil
		t.cancel(errStop)
	}
	e.signalLocked()
	e.mu.Unlock()
	<-e.loopDone
	e.cancel()
	e.unsubscribe()
	if e.ownHost {
		return e.host.Close()
	}
	return nil
}

func (e *Engine) receiptLocked(c *command) Receipt {
	r := Receipt{CommandID: c.id, State: c.state, Kind: c.kindOf(), EntryID: c.entryID, Steer: c.steer, Text: c.text, Reason: c.reason}
	if c.state == Queued {
		r.Position = slices.Index(e.queue, c) + 1
	}
	return r
}

func (e *Engine) signalLocked() {
	e.publishLocked()
	select {
	case e.wake <- struct{}{}:
	default:
	}
	select {
	case e.changed <- struct{}{}:
	default:
	}
}

// loop dispatches queued commands one turn at a time.
func (e *Engine) loop() {
	defer close(e.loopDone)
	for {
		e.mu.Lock()
		for len(e.queue) == 0 && !e.closed {
			e.mu.Unlock()
			<-e.wake
			e.mu.Lock()
		}
		if e.closed {
			e.mu.Unlock()
			return
		}
		c := e.queue[0]
		e.queue = e.queue[1:]
		c.state = Running
		c.changed()
		e.switchModelLocked(c)
		t := newTurn(e, c)
		e.turn = t
		e.signalLocked()
		e.mu.Unlock()

		final, reason := e.runTurn(t)

		e.mu.Lock()
		e.turn = nil
		e.lastFailed = final == Failed
		// Steers that arrived after the last boundary never reached the
		// model: they are the caller's drafts again, never a new turn.
		for _, s := range t.steers {
			e.rejectLocked(s, "the turn ended before the instruction was used")
		}
		t.steers = nil
		c.close(final, reason)
		e.signalLocked()
		e.mu.Unlock()
	}
}

// now is the engine's clock. Tests run inside testing/synctest bubbles, so
// the real clock is the fake one there.
func now() time.Time { return time.Now() }
