package engine

import (
	"context"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

// Draft coalescing: argument fragments reach the invocation's draft at most
// this often, or when this many bytes are waiting, so a long argument does
// not rebuild the draft payload once per token.
const (
	draftEvery = 50 * time.Millisecond
	draftBytes = 4 << 10
)

// call is one tool call the model made in a step.
type call struct {
	index   int
	id      string // the provider's call ID
	name    string
	args    jsontext.Value // complete arguments, set at ToolCallEnd
	entryID string         // the tool entry and invocation ID
	inv     *toolview.Invocation
	ready   bool // arguments are complete
	closed  bool

	draftOff    int64
	pending     []byte
	lastDraft   time.Time
	head        []byte // the first draftHead bytes of the arguments
	checkpoints bool   // the host refused an append: continue with checkpoints
}

// draftHead bounds the argument head the engine keeps for draft
// checkpoints.
const draftHead = 4 << 10

// stepResult is what one model step produced.
type stepResult struct {
	text        string
	answerID    string
	reasoning   []message.Reasoning
	calls       []*call
	record      *transcript.Step
	err         *provider.Error
	finish      provider.FinishReason
	interrupted bool // a steer closed the request
	retired     bool // the document was replaced under the turn
}

// assistant is the step's model-facing message. Only calls with complete
// arguments are included.
func (r *stepResult) assistant(continuation bool) message.Message {
	m := message.Message{Role: message.Assistant, Content: r.text, Reasoning: r.reasoning, Continuation: continuation}
	for _, c := range r.calls {
		if c.ready {
			m.ToolCalls = append(m.ToolCalls, message.ToolCall{ID: c.id, Name: c.name, Arguments: c.args})
		}
	}
	return m
}

func (a *agent) request() provider.Request {
	req := provider.Request{Model: a.e.model, System: a.e.system, Messages: *a.msgs}
	if a.main {
		a.e.mu.Lock()
		req.Messages = a.e.msgs
		a.e.mu.Unlock()
	}
	if a.tools != nil {
		req.Tools = a.tools.Specs()
	}
	return req
}

func (a *agent) setPhase(p phase) {
	if a.t != nil {
		a.t.setPhase(p)
	}
}

// step runs one model request, retrying retryable failures that happen
// before any output, and streams what comes back into the region.
func (a *agent) step(ctx context.Context) *stepResult {
	stepCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if a.t != nil {
		a.e.mu.Lock()
		a.t.stepCancel = cancel
		a.t.phase = phaseWaiting
		a.t.calls = false
		if len(a.t.steers) > 0 {
			cancel(errSteer) // arrived between the boundary and now
		}
		a.e.mu.Unlock()
		defer func() {
			a.e.mu.Lock()
			a.t.stepCancel = nil
			a.t.phase = phaseIdle
			a.e.mu.Unlock()
		}()
	}
	_ = a.reg.setActivity(transcript.ActivityWaiting)
	req := a.request()
	start := now()
	for attempt := 1; ; attempt++ {
		res := &stepResult{}
		s, err := a.e.prov.Stream(stepCtx, req)
		if err == nil {
			a.consume(stepCtx, s, res, start)
			_ = s.Close()
		} else {
			res.err = provider.Classify(stepCtx, a.e.prov.Name(), err)
		}
		if res.err == nil || res.retired {
			return res
		}
		if stepCtx.Err() != nil {
			if context.Cause(stepCtx) == errSteer && ctx.Err() == nil {
				res.err, res.interrupted = nil, true
			}
			return res
		}
		if res.record != nil { // output was accepted: retrying would repeat it
			return res
		}
		d, ok := a.e.backoff.Delay(attempt, res.err, a.e.jitter())
		if !ok {
			return res
		}
		_ = a.reg.setRetry(transcript.Retry{Attempt: attempt + 1, Reason: string(res.err.Class), At: now().Add(d)})
		timer := time.NewTimer(d)
		select {
		case <-timer.C:
		case <-stepCtx.Done():
			timer.Stop()
		}
		_ = a.reg.setRetry(transcript.Retry{})
		if stepCtx.Err() != nil {
			if context.Cause(stepCtx) == errSteer && ctx.Err() == nil {
				return &stepResult{interrupted: true}
			}
			return &stepResult{}
		}
	}
}

// How often a streaming answer is saved: after durableBytes of accepted
// text or durableEvery, whichever comes first. The time limit holds while
// the provider is silent too: a timer saves what was accepted.
const (
	durableBytes = 8 << 10
	durableEvery = 2 * time.Second
)

// streamSaves makes one step's accepted text durable (as the log's open
// tail) once durableBytes arrived or durableEvery (WithStreamSaveEvery)
// passed since the last save, so a crash loses at most that much. The consume loop reports
// accepted text; a timer covers a provider that goes silent. Both save
// through Engine.persist, which serializes every save of the engine.
type streamSaves struct {
	a       *agent
	mu      sync.Mutex // held across a save, so stop waits one out
	unsaved int
	savedAt time.Time
	timer   *time.Timer // armed while unsaved text waits for its time
	stopped bool
}

// accepted counts n bytes of text accepted at t and saves when one of the
// limits is reached, or arms the timer for the time limit.
func (d *streamSaves) accepted(n int, t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.unsaved += n
	every := d.a.e.saveEvery
	if d.unsaved >= durableBytes || t.Sub(d.savedAt) >= every {
		d.saveLocked(t)
		return
	}
	if d.timer == nil {
		d.timer = time.AfterFunc(d.savedAt.Add(every).Sub(t), d.fire)
	}
}

// fire is the timer: the provider stayed silent with text unsaved.
func (d *streamSaves) fire() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.timer = nil
	if !d.stopped && d.unsaved > 0 {
		d.saveLocked(now())
	}
}

func (d *streamSaves) saveLocked(t time.Time) {
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	d.a.e.persist(d.a.reg)
	d.unsaved, d.savedAt = 0, t
}

// stop ends the step's durable saves; a timer save under way finishes
// first, and none starts after. The step's own save follows.
func (d *streamSaves) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopped = true
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
}

// consume reads one stream to its end. This is the per-token path: each
// text delta costs one store write, two clock reads and, in the main
// region, an uncontended lock to count it for durable saves.
func (a *agent) consume(ctx context.Context, s provider.Stream, res *stepResult, start time.Time) {
	w := a.reg.w
	var (
		text     strings.Builder
		thinking strings.Builder
		first    time.Time
		last     time.Time
		output   bool
		usage    *provider.Usage
		cur      = phaseWaiting
		byIndex  = map[int]*call{}
		writeErr error
		saves    *streamSaves // main region only: children are not saved
	)
	if a.main {
		saves = &streamSaves{a: a, savedAt: start}
		defer saves.stop()
	}
	accepted := func(n int) {
		if saves != nil && writeErr == nil {
			saves.accepted(n, last)
		}
	}
	mark := func(p phase) {
		t := now()
		if !output {
			output, first = true, t
		}
		last = t
		if p != cur {
			cur = p
			a.setPhase(p)
		}
	}
	defer func() {
		for _, c := range res.calls {
			a.endDraft(c)
		}
		res.text = text.String()
		res.answerID = w.AnswerID()
		if output || usage != nil {
			res.record = stepRecord(start, first, last, usage)
		}
		if a.reg.w != nil && usage != nil && usage.Prompt != nil {
			_ = w.SetPromptContext(*usage.Prompt)
			if a.main {
				a.e.notePrompt(*usage.Prompt)
			}
		}
		if retired(writeErr) {
			res.retired = true
		}
	}()
	for {
		ev, err := s.Next()
		if err != nil {
			if err == io.EOF {
				return
			}
			res.err = provider.Classify(ctx, a.e.prov.Name(), err)
			return
		}
		// The stream is a boundary: text that is not UTF-8 is repaired
		// here, once, so the document, the messages and the log agree.
		if !utf8.ValidString(ev.Text) {
			ev.Text = strings.ToValidUTF8(ev.Text, "\uFFFD")
		}
		if ev.Kind == provider.ToolCallStart || ev.Kind == provider.ToolCallEnd {
			ev.ID, ev.Name = strings.ToValidUTF8(ev.ID, "\uFFFD"), strings.ToValidUTF8(ev.Name, "\uFFFD")
		}
		switch ev.Kind {
		case provider.TextDelta:
			mark(phaseText)
			text.WriteString(ev.Text)
			writeErr = w.Text(ev.Text)
			if text.Len() == len(ev.Text) && a.t != nil { // the step's first text
				a.noteReply(w.AnswerID())
			}
			accepted(len(ev.Text))
		case provider.ReasoningDelta:
			mark(phaseText)
			thinking.WriteString(ev.Text)
			writeErr = w.Reasoning(ev.Text)
			accepted(len(ev.Text))
		case provider.ReasoningDone:
			res.reasoning = append(res.reasoning, message.Reasoning{Text: thinking.String(), Signature: ev.Signature, Redacted: ev.Redacted})
			thinking.Reset()
		case provider.ToolCallStart:
			mark(phaseToolArgs)
			c := &call{index: ev.Index, id: ev.ID, name: ev.Name}
			byIndex[ev.Index] = c
			res.calls = append(res.calls, c)
			writeErr = a.openCall(c)
		case provider.ToolCallDelta:
			mark(phaseToolArgs)
			if c := byIndex[ev.Index]; c != nil {
				c.draft(ev.Text, false)
			}
		case provider.ToolCallEnd:
			mark(phaseToolArgs)
			c := byIndex[ev.Index]
			if c == nil { // an end without a start: treat it as both
				c = &call{index: ev.Index, id: ev.ID, name: ev.Name}
				byIndex[ev.Index] = c
				res.calls = append(res.calls, c)
				writeErr = a.openCall(c)
			}
			c.draft("", true)
			a.endDraft(c)
			if ev.ID != "" {
				c.id = ev.ID
			}
			if c.id == "" {
				c.id = c.entryID // history refuses a call without an ID
			}
			// The provider promises valid JSON; a stream that breaks the
			// promise gets a call that does not run rather than a log that
			// cannot be saved.
			c.args, c.ready = ev.Arguments.Clone(), ev.Arguments.IsValid()
		case provider.UsageReport:
			usage = ev.Usage
			if u := ev.Usage; u != nil {
				_ = w.AddUsage(usageOf(u))
			}
		case provider.Done:
			res.finish = ev.FinishReason
			if thinking.Len() > 0 { // reasoning without a closing block
				res.reasoning = append(res.reasoning, message.Reasoning{Text: thinking.String()})
			}
			return
		}
		if writeErr != nil {
			if retired(writeErr) {
				return
			}
			writeErr = nil // a refused write (bad UTF-8 is fixed, so rare) does not end the step
		}
	}
}

// draft reports argument fragments to the invocation's draft, coalesced.
// These bytes go to the presentation and nowhere else: the tool only ever
// gets the complete arguments of ToolCallEnd.
func (c *call) draft(fragment string, flush bool) {
	if c.inv == nil {
		return
	}
	c.pending = append(c.pending, fragment...)
	if len(c.pending) == 0 {
		return
	}
	t := now()
	if !flush && len(c.pending) < draftBytes && t.Sub(c.lastDraft) < draftEvery {
		return
	}
	if room := draftHead - len(c.head); room > 0 {
		c.head = append(c.head, c.pending[:min(room, len(c.pending))]...)
	}
	total := c.draftOff + int64(len(c.pending))
	d := c.inv.Draft()
	if c.checkpoints || d.Append(c.draftOff, c.pending) != nil {
		// A refused append (the draft was cut to the host's bound, or
		// went out of step) leaves offsets untrustworthy: from here on
		// the draft continues with bounded checkpoints.
		c.checkpoints = true
		// The host's bound is its own; halve the head until it fits.
		for n := len(c.head); ; n /= 2 {
			if d.Checkpoint(c.head[:n], total, total > int64(n)) == nil || n == 0 {
				break
			}
		}
	}
	c.draftOff = total
	c.pending = c.pending[:0]
	c.lastDraft = t
}

func usageOf(u *provider.Usage) transcript.Usage {
	var out transcript.Usage
	if u.Prompt != nil {
		out.InputTokens = *u.Prompt
	}
	if u.Completion != nil {
		out.OutputTokens = *u.Completion
	}
	if u.CacheRead != nil {
		out.CacheReadTokens = *u.CacheRead
	}
	if u.CostUSD != nil {
		out.CostUSD = *u.CostUSD
	}
	return out
}

// stepRecord builds the receipt's step: wall time of the step, the
// provider's usage as reported, time to the first output event, and decode
// time measured from the first to the last output event. Nothing missing is
// filled in.
func stepRecord(start, first, last time.Time, u *provider.Usage) *transcript.Step {
	end := now()
	s := &transcript.Step{DurationMs: ms(end.Sub(start))}
	if u != nil {
		s.PromptTokens, s.CompletionTokens, s.TotalTokens = u.Prompt, u.Completion, u.Total
		s.CacheReadTokens, s.CostUSD = u.CacheRead, u.CostUSD
	}
	if !first.IsZero() {
		f := ms(first.Sub(start))
		s.TimeToFirstTokenMs = &f
	}
	if !first.IsZero() && last.After(first) {
		g := ms(last.Sub(first))
		s.GenerationDurationMs = &g
		if s.CompletionTokens != nil && *s.CompletionTokens > 0 {
			r := float64(*s.CompletionTokens) / (g / 1000)
			s.TokensPerSecond = &r
		}
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// noteReply remembers the turn's first answer entry, for Running and
// StopTurn.
func (a *agent) noteReply(id string) {
	a.e.mu.Lock()
	if a.t.replyID == "" {
		a.t.replyID = id
		a.e.publishLocked()
	}
	a.e.mu.Unlock()
}

func (e *Engine) notePrompt(n int64) {
	e.mu.Lock()
	e.lastPrompt, e.lastPromptMsgs = n, len(e.msgs)
	e.mu.Unlock()
}
