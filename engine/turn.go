package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/transcript"
)

// phase is what the current step is doing; Steer reads it to decide whether
// it may interrupt now or must wait for the safe point.
type phase uint8

const (
	phaseIdle     phase = iota
	phaseWaiting        // request sent (or retry wait), nothing streamed yet
	phaseText           // streaming answer text or reasoning
	phaseToolArgs       // streaming a tool call's arguments: safe point is the step's end
	phaseTools          // running tools: safe point is after them
)

// turn is the state of the running turn that other goroutines touch. Fields
// marked "e.mu" are guarded by the engine's lock.
type turn struct {
	e      *Engine
	cmd    *command
	epoch  uint64 // the conversation epoch it started in (see Engine.Clear)
	ctx    context.Context
	cancel context.CancelCauseFunc

	userID     string                  // e.mu: the turn's user entry, once written
	replyID    string                  // e.mu: the turn's first answer entry
	stopping   bool                    // e.mu
	steers     []*command              // e.mu: accepted, not yet applied
	phase      phase                   // e.mu
	calls      bool                    // e.mu: the current response started a tool call
	stepCancel context.CancelCauseFunc // e.mu
}

func newTurn(e *Engine, c *command) *turn {
	ctx, cancel := context.WithCancelCause(e.ctx)
	return &turn{e: e, cmd: c, epoch: e.epoch, ctx: ctx, cancel: cancel}
}

// interruptible reports whether a steer may close the current response
// now. Once a response has started a tool call it runs to its end: a call
// is never dropped half made, nor one that is complete.
func (t *turn) interruptible() bool {
	return (t.phase == phaseWaiting || t.phase == phaseText) && !t.calls
}

func (t *turn) interrupt(cause error) {
	if t.stepCancel != nil {
		t.stepCancel(cause)
	}
}

func (t *turn) setPhase(p phase) {
	t.e.mu.Lock()
	t.phase = p
	if p == phaseToolArgs {
		t.calls = true
	}
	// A steer that arrived while it had to wait may interrupt now.
	if len(t.steers) > 0 && t.interruptible() {
		t.interrupt(errSteer)
	}
	t.e.mu.Unlock()
}

// outcome is how an agent run ended.
type outcome uint8

const (
	outDone    outcome = iota // the model finished
	outFailed                 // a provider failure after retries
	outStopped                // Stop, Close, or the document was replaced
	outLoop                   // the loop guard stopped it
	outLimit                  // too many steps
)

// runTurn runs one turn on the engine's loop goroutine and returns the
// command's final state.
func (e *Engine) runTurn(t *turn) (State, string) {
	defer t.cancel(nil)
	lease := e.store.Lease()
	e.mu.Lock()
	reg := &region{e: e, lease: lease, epoch: e.epoch}
	e.mu.Unlock()
	start := now()
	c := t.cmd
	var userID string
	if !c.retry {
		text := userText(c.text, c.attachments)
		id, err := reg.append(transcript.User{Text: c.text})
		if err != nil {
			return Failed, "the conversation was replaced before the message was sent"
		}
		e.addMessage(reg.epoch, message.Text(message.User, text), id)
		userID = id
	} else {
		// A retry writes no user entry: views name it by the user entry
		// of the turn it runs again. The store may have dropped it in a
		// long turn (WithDocumentWindow); the engine remembers it.
		userID = lastUserEntry(e.store.Snapshot().Document)
	}
	e.mu.Lock()
	if c.retry && userID == "" {
		userID = e.lastUser
	} else if !c.retry && reg.epoch == e.epoch {
		e.lastUser = userID
	}
	t.userID, c.entryID = userID, userID
	c.changed()
	e.signalLocked()
	e.mu.Unlock()
	e.persist(reg)

	a := &agent{e: e, t: t, reg: reg, msgs: &e.msgs, entries: &e.msgEntry, tools: e.tools, main: true}
	res := a.run(t.ctx)
	w := a.w
	if w != nil {
		_ = w.Finish()
	}
	_ = lease.SetRetry(transcript.Retry{})
	switch res.out {
	case outDone, outLoop, outLimit:
		if res.notice != "" {
			_, _ = reg.append(transcript.Notice{Text: res.notice, Tone: transcript.ToneWarn})
		}
		fin := now().UnixMilli()
		_, _ = reg.append(transcript.TurnReceipt{Steps: a.steps, FinishedAt: &fin})
		_ = lease.SetActivity(transcript.ActivityIdle)
		e.persist(reg)
		if res.out == outDone {
			return Done, ""
		}
		return Stopped, res.notice
	case outFailed:
		_, _ = reg.append(failureOf(res.err))
		// Saved before anyone is told: a crash after the announcement
		// cannot lose the failure.
		e.persist(reg)
		_ = lease.SetActivity(transcript.ActivityIdle)
		return Failed, res.err.Error()
	default: // outStopped
		if !lease.Active() {
			return Stopped, "the conversation was replaced"
		}
		elapsed := float64(now().Sub(start)) / float64(time.Millisecond)
		_, _ = reg.append(transcript.Stopped{Summary: transcript.StopSummary{
			ElapsedMs: elapsed, Done: nonNil(a.done), NotDone: nonNil(a.notDone)}})
		_ = lease.SetActivity(transcript.ActivityIdle)
		e.persist(reg)
		return Stopped, ""
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func userText(text string, atts []Attachment) string {
	if len(atts) == 0 {
		return text
	}
	var b strings.Builder
	b.WriteString(text)
	for _, a := range atts {
		fmt.Fprintf(&b, "\n\n<attachment name=%q>\n%s\n</attachment>", a.Name, a.Text)
	}
	return b.String()
}

// failureOf turns a classified provider error into the failure entry.
func failureOf(err *provider.Error) transcript.Failure {
	f := transcript.Failure{Reason: string(err.Class), Headline: headline(err), Detail: err.Error(), Retryable: err.Retryable()}
	if err.RetryAfter > 0 {
		ms := float64(err.RetryAfter) / float64(time.Millisecond)
		f.RetryAfterMs = &ms
	}
	return f
}

func headline(err *provider.Error) string {
	switch err.Class {
	case provider.ClassRateLimit:
		return "The model provider is rate limiting requests."
	case provider.ClassAuth:
		return "The model provider did not accept the credentials."
	case provider.ClassAuthz:
		return "The account is not allowed to use this model."
	case provider.ClassContext:
		return "The conversation is too long for the model."
	case provider.ClassPolicy:
		return "The provider refused the request under its content policy."
	case provider.ClassTransport:
		return "The connection to the model provider failed."
	case provider.ClassTimeout:
		return "The model provider took too long to answer."
	case provider.ClassCancelled:
		return "The request was cancelled."
	}
	return "The model provider reported an error."
}

// addMessage appends a model-facing message with the entry it came with,
// unless the conversation was cleared since the turn began. Only the loop
// goroutine writes e.msgs; the lock is for Messages readers and Clear.
func (e *Engine) addMessage(epoch uint64, m message.Message, entryID string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if epoch != e.epoch {
		return
	}
	e.msgs = append(e.msgs, m)
	e.msgEntry = append(e.msgEntry, entryID)
}

// persist saves the document and messages. A failed save is shown as a
// notice, once until a save succeeds again; every later save tries again
// with everything. Saves are serialized by saveMu: the turn's goroutine and
// a step's durable-streaming timer (streamSaves) both save, and a Saver is
// not safe for concurrent use.
func (e *Engine) persist(reg *region) {
	if !reg.main() {
		return
	}
	e.saveMu.Lock()
	defer e.saveMu.Unlock()
	e.mu.Lock()
	msgs, current, saver := e.msgs, reg.epoch == e.epoch, e.saver
	e.mu.Unlock()
	if !current || saver == nil {
		return
	}
	doc := e.store.Snapshot().Document
	err := saver.Save(doc, msgs)
	if err == nil {
		// What the log holds now need not stay in memory.
		e.trimSaved(reg, doc)
	}
	e.mu.Lock()
	first := err != nil && !e.saveFailing
	e.saveFailing = err != nil
	e.mu.Unlock()
	if first { // once per run of failures, not once per step
		_, _ = reg.append(transcript.Notice{Text: "could not save the conversation: " + err.Error(), Tone: transcript.ToneError})
	}
}

// agent runs model steps and tool calls for one region: the main turn, or a
// child agent of the task tool.
type agent struct {
	e       *Engine
	t       *turn // nil for a child: children take no steers
	reg     *region
	msgs    *[]message.Message
	entries *[]string // main only: the entry each message came with
	tools   *tools.Set
	main    bool
	w       *transcript.StreamWriter

	steps    []transcript.Step
	done     []string
	notDone  []string
	failures map[string]int
	steered  bool // the last assistant message was interrupted by a steer
}

type runResult struct {
	out    outcome
	err    *provider.Error
	notice string
	answer string
}

func (a *agent) add(m message.Message, entryID string) {
	if a.main {
		a.e.addMessage(a.reg.epoch, m, entryID)
		return
	}
	*a.msgs = append(*a.msgs, m)
}

func (a *agent) run(ctx context.Context) runResult {
	w, err := a.reg.stream()
	if err != nil {
		return runResult{out: outStopped}
	}
	a.w = w
	if a.e.model != "" {
		_ = w.SetModel(a.e.model)
	}
	var answer string
	for step := 0; ; step++ {
		if ctx.Err() != nil {
			return runResult{out: outStopped}
		}
		a.applySteers()
		if step >= a.e.maxSteps {
			return runResult{out: outLimit, notice: fmt.Sprintf("stopped after %d model steps without a final answer", a.e.maxSteps)}
		}
		if a.main {
			a.e.maybeCompact(ctx, a.reg)
		}
		res := a.step(ctx)
		if res.record != nil {
			a.steps = append(a.steps, *res.record)
		}
		if err := w.EndStep(); err != nil {
			return runResult{out: outStopped}
		}
		switch {
		case ctx.Err() != nil || res.retired:
			a.closeCalls(res.calls, "stopped before it ran")
			a.keepPartial(res)
			return runResult{out: outStopped}
		case res.interrupted:
			a.closeCalls(res.calls, "interrupted before its arguments were complete")
			a.keepPartial(res)
			a.steered = true
			a.e.persist(a.reg)
			continue
		case res.err != nil:
			a.closeCalls(res.calls, "the model request failed")
			a.add(history.FailureMessage(res.text, headline(res.err)), res.answerID)
			return runResult{out: outFailed, err: res.err}
		}
		a.add(res.assistant(a.steered), res.answerID)
		a.steered = false
		answer = res.text
		a.e.persist(a.reg)
		if !anyReady(res.calls) {
			// Calls the model never finished cannot run and are not in
			// its history; asking again would repeat the same request.
			a.closeCalls(res.calls, "the model did not finish its arguments")
			if a.hasSteers() {
				continue
			}
			r := runResult{out: outDone, answer: answer}
			if res.finish == provider.FinishLength {
				r.notice = "the reply stopped at the model's output limit"
			}
			return r
		}
		if r, stop := a.runCalls(ctx, res.calls); stop {
			return r
		}
		a.e.persist(a.reg)
	}
}

func anyReady(calls []*call) bool {
	for _, c := range calls {
		if c.ready {
			return true
		}
	}
	return false
}

// keepPartial adds an interrupted or stopped response to the messages, so
// the model sees what the person saw. Incomplete tool calls are left out:
// they never ran.
func (a *agent) keepPartial(res *stepResult) {
	if res.text == "" && len(res.reasoning) == 0 {
		return
	}
	m := message.Message{Role: message.Assistant, Content: res.text, Reasoning: res.reasoning, Continuation: a.steered}
	a.add(m, res.answerID)
}

func (a *agent) hasSteers() bool {
	if a.t == nil {
		return false
	}
	a.e.mu.Lock()
	defer a.e.mu.Unlock()
	return len(a.t.steers) > 0
}

// applySteers places the steers that arrived since the last boundary: each
// becomes a steering entry after the reply content so far and a user
// message before the next request. The entries and the steers leaving
// Live.Steers are one store transaction, so no snapshot shows a steer
// both pending and applied, or neither.
func (a *agent) applySteers() {
	if a.t == nil {
		return
	}
	e := a.e
	e.mu.Lock()
	steers := a.t.steers
	if len(steers) == 0 {
		e.mu.Unlock()
		return
	}
	a.t.steers = nil
	for _, c := range steers {
		c.close(Applied, "")
	}
	ids := make([]string, len(steers))
	err := a.reg.lease.Do(func(tx *transcript.Tx) error {
		for i, c := range steers {
			id, err := tx.Append(transcript.Steering{Text: c.text, CommandID: c.id})
			if err != nil {
				return err
			}
			ids[i] = id
		}
		tx.SetCommands(e.commandsLocked())
		return nil
	})
	e.signalLocked()
	e.mu.Unlock()
	if err != nil {
		return
	}
	for i, c := range steers {
		a.add(message.Text(message.User, c.text), ids[i])
	}
}

// closeCalls closes the invocations of calls that will not run, settling
// their entries as not done.
func (a *agent) closeCalls(calls []*call, why string) {
	for _, c := range calls {
		if c.closed {
			continue
		}
		a.notDone = append(a.notDone, c.name)
		a.finishCall(c, notRun(c, why))
	}
}

// errRetired marks a write refused because the document was replaced.
func retired(err error) bool { return errors.Is(err, transcript.ErrLeaseRetired) }

// lastUserEntry is the ID of doc's last user entry, "" when it has none.
func lastUserEntry(doc transcript.Document) string {
	for i := doc.Len() - 1; i >= 0; i-- {
		if doc.At(i).Content.Kind() == transcript.KindUser {
			return doc.At(i).ID
		}
	}
	return ""
}
