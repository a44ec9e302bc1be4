package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

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
	order      []*command      // the commands remembered (keepCommands), in acceptance order, for Commands
	onceOrder  []*command      // Once's commands remembered, in the order they ran
	forgotten  forgottenFilter // the IDs of the finished commands forgotten
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
	lastPrompt     int64    // prompt tokens the provider reported for the last request
	lastPromptMsgs int
	// estN messages of estOf (e.msgs when last counted) are estimated;
	// estSums[i] is the estimate of the first i+1 (window.go).
	estN        int
	estOf       []message.Message
	estSums     []int64
	keep        int                // see WithDocumentWindow
	lastUser    string             // e.mu: the last user entry written or hydrated, for a retry
	bridges     map[string]*bridge // open tool entries fed by host changes
	bridgeMu    sync.Mutex
	unsubscribe func()
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
//
// msgs are taken as they are: pass what a history.Log read gives, in which
// an older log's failures, held only as entries, are messages already
// (history/failmsg.go).
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
	// msgs come as history reads a log: an older log's failures are in
	// them already (history/failmsg.go).
	e.msgs = answerDangling(slices.Clip(msgs))
	e.msgEntry = make([]string, len(e.msgs))
	e.lastPrompt, e.lastPromptMsgs = 0, 0
	// A conversation that ended in a failure can be retried after resume;
	// only explicitly, like before it was saved.
	e.lastFailed = doc.Len() > 0 && doc.At(doc.Len()-1).Content.Kind() == transcript.KindFailure
	e.lastUser = lastUserEntry(doc)
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
	e.msgs, e.msgEntry = nil, nil
	e.lastPrompt, e.lastPromptMsgs, e.lastFailed = 0, 0, false
	e.lastUser = ""
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
	c, ok := e.commands[commandID]
	if !ok {
		// A finished command the engine forgot answers as it did, from
		// the command log: a late redelivery never runs it twice.
		var err error
		if c, ok, err = e.recallLocked(commandID); err != nil {
			return Receipt{}, true, err
		}
	}
	if ok {
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
	e.onceOrder = append(e.onceOrder, c)
	e.forgetLocked()
	return e.receiptLocked(c), nil
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
		e.forgetLocked()
		e.signalLocked()
		e.mu.Unlock()
	}
}

// now is the engine's clock. Tests run inside testing/synctest bubbles, so
// the real clock is the fake one there.
func now() time.Time { return time.Now() }
