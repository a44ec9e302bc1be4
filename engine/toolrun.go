package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

// loopLimit is how many times the same call may fail on the same input
// before the loop guard stops the turn.
const loopLimit = 3

// maxArgsShown bounds the arguments a tool receipt carries.
const maxArgsShown = 2 << 10

type pendingApproval struct {
	Approval
	decide chan Decision
}

// bridge feeds a running invocation's primary value into its open tool
// entry, so every view sees it through the store.
type bridge struct {
	reg     *region // where the entry is: the main document or a child's feed
	entryID string
	mu      sync.Mutex
	content transcript.Tool
	// drafting is set while the model streams the call's arguments. Only
	// then may a draft value be shown in the entry; endDraft takes it out
	// again before anything can save the document.
	drafting bool
	isDraft  bool // the entry's presentation is a draft value
}

// placeholder is the content of a tool entry while its call is open. It
// states what would be true if folio stopped right now (the call did not
// complete), so a save made while it is open never claims success; views
// know the entry is open and show it as running.
func placeholder(name, reason string) transcript.Tool {
	return transcript.Tool{Receipt: transcript.ToolReceipt{App: name, Summary: name,
		Status: transcript.ToolFailed, Reason: reason, NotDone: "the call did not complete"}}
}

// openCall opens the call's tool entry and its invocation as soon as the
// model starts the call, so its draft can be shown.
func (a *agent) openCall(c *call) error {
	name := c.name
	if name == "" {
		name = "tool"
	}
	id, err := a.reg.openTool(placeholder(name, "running"))
	if err != nil {
		return err
	}
	c.entryID = id
	spec := toolview.Spec{ID: id, Tool: name, Retention: toolview.Retained}
	if a.tools != nil {
		spec.Producer = a.tools.Manifest()
	}
	inv, err := a.e.host.Open(spec)
	if err != nil {
		return nil // no presentation; the call still runs and records
	}
	c.inv = inv
	b := &bridge{reg: a.reg, entryID: id, content: placeholder(name, "running"), drafting: true}
	b.content.InvocationID = id
	a.e.bridgeMu.Lock()
	a.e.bridges[id] = b
	a.e.bridgeMu.Unlock()
	return nil
}

// onToolChange is the host subscriber: the current value of each item of an
// open invocation goes into its tool entry, so every view sees it through
// the store: the primary item as the entry's Presentation, supplemental
// items as its Supplementals (in first-use order), retained and ephemeral
// alike. Settlement replaces the entry with the closure record, which keeps
// only the retained checkpoints. A draft (the arguments as they stream) is
// shown only while the model writes them; endDraft removes it when they are
// complete. Drafts and ephemeral values are marked Ephemeral, so any save
// made while the call is open (durable streaming, a step's save) writes the
// entry without them: request fragments never reach the log.
func (e *Engine) onToolChange(ch toolview.Change) {
	if !ch.Open || ch.Record != nil {
		return
	}
	e.bridgeMu.Lock()
	b := e.bridges[ch.Invocation]
	e.bridgeMu.Unlock()
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if ch.Item != "" {
		b.setSupplemental(ch.Item, ch.Value, ch.Revision, ch.Retention == toolview.Ephemeral)
		_ = b.reg.update(b.entryID, b.content)
		return
	}
	if ch.Value == nil {
		return
	}
	p := presentationOf(ch.Value, ch.Revision)
	p.Ephemeral = ch.Value.Draft || ch.Retention == toolview.Ephemeral
	if ch.Value.Draft && !b.drafting {
		return // a late draft delivery after the arguments ended
	}
	b.content.Presentation = p
	b.isDraft = ch.Value.Draft
	_ = b.reg.update(b.entryID, b.content) // fails harmlessly once settled
}

// presentationOf is an item's current value in the transcript's form.
func presentationOf(v *toolview.Value, rev toolview.Revision) *transcript.Presentation {
	p := &transcript.Presentation{Schema: v.Schema, Version: v.Version,
		Revision: int64(rev), Payload: transcript.RawJSON(v.Payload)}
	if v.Artifact != nil {
		art := *v.Artifact
		p.Artifact = &art
	}
	return p
}

// setSupplemental puts a supplemental item's current value into the
// entry's content (nil takes it out), marked Ephemeral when the item's
// retention is. The slice is copied, never changed in place: snapshots the
// store published still hold the old one.
func (b *bridge) setSupplemental(key string, v *toolview.Value, rev toolview.Revision, ephemeral bool) {
	sup := make([]transcript.KeyedPresentation, 0, len(b.content.Supplementals)+1)
	found := false
	for _, kp := range b.content.Supplementals {
		if kp.Key == key {
			found = true
			if v == nil {
				continue
			}
			kp = keyed(key, v, rev, ephemeral)
		}
		sup = append(sup, kp)
	}
	if !found && v != nil {
		sup = append(sup, keyed(key, v, rev, ephemeral))
	}
	if len(sup) == 0 {
		sup = nil
	}
	b.content.Supplementals = sup
}

func keyed(key string, v *toolview.Value, rev toolview.Revision, ephemeral bool) transcript.KeyedPresentation {
	kp := transcript.KeyedPresentation{Key: key, Presentation: *presentationOf(v, rev)}
	kp.Presentation.Ephemeral = ephemeral
	return kp
}

// endDraft ends the call's draft: a draft value in its entry is removed.
// It runs when the call's arguments are complete and at the end of every
// step, before the step's save.
func (a *agent) endDraft(c *call) {
	a.e.bridgeMu.Lock()
	b := a.e.bridges[c.entryID]
	a.e.bridgeMu.Unlock()
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.drafting {
		return
	}
	b.drafting = false
	if b.isDraft {
		b.content.Presentation, b.isDraft = nil, false
		_ = b.reg.update(b.entryID, b.content)
	}
}

func (a *agent) dropBridge(id string) {
	a.e.bridgeMu.Lock()
	b := a.e.bridges[id]
	delete(a.e.bridges, id)
	a.e.bridgeMu.Unlock()
	if b != nil {
		b.mu.Lock() // wait out an update in flight
		b.mu.Unlock()
	}
}

// notRun is the record of a call that was never invoked.
func notRun(c *call, why string) transcript.Tool {
	t := placeholder(orTool(c.name), "not_run")
	t.Receipt.Detail = why
	t.InvocationID = c.entryID
	return t
}

func orTool(n string) string {
	if n == "" {
		return "tool"
	}
	return n
}

// finishCall settles the call's entry with content and closes its
// invocation if it is still open.
func (a *agent) finishCall(c *call, content transcript.Tool) {
	c.closed = true
	if c.inv != nil {
		_, _ = c.inv.Close(toolview.Outcome{Status: content.Receipt.Status, Reason: content.Receipt.Reason},
			toolview.Result{Text: content.Receipt.Detail, IsError: content.Receipt.Status != transcript.ToolOK})
	}
	a.dropBridge(c.entryID)
	_ = a.reg.settle(c.entryID, content)
	if c.inv != nil {
		_ = a.e.host.Release(c.entryID)
	}
}

// runCalls runs the step's calls in order and adds their results. It
// reports stop when the turn must end (stopped, or the loop guard).
func (a *agent) runCalls(ctx context.Context, calls []*call) (runResult, bool) {
	a.setPhase(phaseTools)
	defer a.setPhase(phaseIdle)
	for i, c := range calls {
		if ctx.Err() != nil {
			a.closeCalls(calls[i:], "stopped before it ran")
			return runResult{out: outStopped}, true
		}
		if !c.ready {
			a.finishCall(c, notRun(c, "the model did not finish its arguments"))
			continue
		}
		text, isErr, reason := a.runCall(ctx, c)
		a.add(message.Message{Role: message.Tool, ToolCallID: c.id, Name: c.name, Content: text, IsError: isErr}, c.entryID)
		if ctx.Err() != nil {
			a.closeCalls(calls[i+1:], "stopped before it ran")
			// The calls that did not run still need answers in the
			// model's history, or the next request would be refused.
			for _, rest := range calls[i+1:] {
				if rest.ready {
					a.add(message.Message{Role: message.Tool, ToolCallID: rest.id, Name: rest.name, Content: "not run: the user stopped the turn", IsError: true}, rest.entryID)
				}
			}
			return runResult{out: outStopped}, true
		}
		if isErr && reason != "denied" {
			key := c.name + "\x00" + canonical(c.args)
			if a.failures == nil {
				a.failures = map[string]int{}
			}
			a.failures[key]++
			if a.failures[key] >= loopLimit {
				a.closeCalls(calls[i+1:], "the turn was stopped by the loop guard")
				for _, rest := range calls[i+1:] {
					if rest.ready {
						a.add(message.Message{Role: message.Tool, ToolCallID: rest.id, Name: rest.name, Content: "not run", IsError: true}, rest.entryID)
					}
				}
				return runResult{out: outLoop, notice: fmt.Sprintf("stopped: %s failed %d times with the same input (%s)",
					c.name, loopLimit, firstLine(text))}, true
			}
		}
	}
	return runResult{}, false
}

// runCall asks for approval if needed, invokes the tool with the complete
// arguments and settles its entry. It returns the model-facing result.
func (a *agent) runCall(ctx context.Context, c *call) (text string, isErr bool, reason string) {
	tool, known := a.toolFor(c.name)
	args := string(c.args)
	if known && tool.NeedsApproval() {
		d := a.approve(ctx, c)
		if d == Deny {
			why := "the user denied this call"
			if ctx.Err() != nil {
				why = "stopped while waiting for approval"
			}
			t := transcript.Tool{Receipt: transcript.ToolReceipt{App: c.name, Summary: c.name,
				Status: transcript.ToolDenied, Reason: "denied", Args: bounded(args), Detail: why}, InvocationID: c.entryID}
			if ctx.Err() != nil {
				a.notDone = append(a.notDone, c.name)
			}
			a.finishCall(c, t)
			return why, true, "denied"
		}
	}
	_ = a.reg.setActivity(transcript.ActivityTool)
	var fn toolview.ToolFunc
	if known {
		fn = tool.Run
	} else {
		fn = func(context.Context, *toolview.Invocation, []byte) (toolview.Result, error) {
			return toolview.Result{}, fmt.Errorf("there is no tool named %q", c.name)
		}
	}
	var rec toolview.Record
	if c.inv != nil {
		rec = c.inv.Invoke(ctx, c.args, fn)
	} else {
		var err error
		rec, err = a.e.host.Run(ctx, toolview.Spec{Tool: orTool(c.name), Producer: a.manifest()}, c.args, fn)
		if err != nil {
			rec = toolview.Record{Tool: orTool(c.name), Outcome: toolview.Outcome{Status: transcript.ToolFailed, Reason: "error"},
				Result: toolview.Result{Text: err.Error(), IsError: true}}
		}
	}
	c.closed = true
	content := rec.ToolContent()
	content.InvocationID = c.entryID
	content.Receipt.Args = bounded(args)
	if rec.Result.IsError {
		content.Receipt.Detail = bounded(rec.Result.Text)
	}
	a.dropBridge(c.entryID)
	_ = a.reg.settle(c.entryID, content)
	_ = a.e.host.Release(c.entryID)
	if rec.Outcome.Status == transcript.ToolOK {
		a.done = append(a.done, content.Receipt.Summary)
	} else if ctx.Err() != nil {
		a.notDone = append(a.notDone, content.Receipt.Summary)
	}
	text = rec.Result.Text
	if text == "" && rec.Result.IsError {
		text = "the tool failed (" + rec.Outcome.Reason + ")"
	}
	return text, rec.Result.IsError || rec.Outcome.Status != transcript.ToolOK, rec.Outcome.Reason
}

// preview is what a call waiting for approval shows as its presentation:
// the tool's own preview of the arguments (tools.Previewer), painted by the
// adapter its entry uses once it runs. It is ephemeral: shown while the
// call waits, replaced by what the tool publishes, and never saved (a
// denied call settles without it). nil when the tool has none.
func (a *agent) preview(c *call) *transcript.Presentation {
	t, ok := a.toolFor(c.name)
	if !ok {
		return nil
	}
	pv, ok := t.(tools.Previewer)
	if !ok {
		return nil
	}
	v, ok := pv.Preview(c.args)
	if !ok || int64(len(v.Data)) > maxPreviewPayload {
		return nil
	}
	return &transcript.Presentation{Schema: v.Schema, Version: v.Version, Payload: transcript.RawJSON(v.Data), Ephemeral: true}
}

// maxPreviewPayload bounds a previewed presentation (tools bound theirs
// far below it).
const maxPreviewPayload = 64 << 10

func (a *agent) manifest() *toolview.Manifest {
	if a.tools == nil {
		return nil
	}
	return a.tools.Manifest()
}

func (a *agent) toolFor(name string) (interface {
	NeedsApproval() bool
	Run(context.Context, *toolview.Invocation, []byte) (toolview.Result, error)
}, bool) {
	if a.tools == nil {
		return nil, false
	}
	t, ok := a.tools.Get(name)
	return t, ok
}

// approve waits for a decision on c. The wait is visible: the engine lists
// it in Approvals, the tool entry says it awaits approval and the activity
// is waiting.
func (a *agent) approve(ctx context.Context, c *call) Decision {
	e := a.e
	ap := Approval{ID: c.entryID, Tool: c.name, Args: bounded(string(c.args))}
	if !a.reg.main() {
		ap.Child = a.reg.child.ID()
	}
	e.mu.Lock()
	if e.allowedLocked(c.name) {
		e.mu.Unlock()
		return AllowOnce
	}
	if e.approver != nil {
		e.mu.Unlock()
		d := e.approver(ctx, ap)
		if d == AllowSession {
			e.Allow(c.name)
		}
		return d
	}
	pa := &pendingApproval{Approval: ap, decide: make(chan Decision, 1)}
	e.approvals = append(e.approvals, pa)
	e.signalLocked()
	e.mu.Unlock()

	e.bridgeMu.Lock()
	b := e.bridges[c.entryID]
	e.bridgeMu.Unlock()
	if b != nil {
		preview := a.preview(c) // may read a file: outside the bridge's lock
		b.mu.Lock()
		b.content.Receipt.Reason = "awaiting_approval"
		b.content.Receipt.Args = ap.Args
		if preview != nil && b.content.Presentation == nil {
			b.content.Presentation = preview
		}
		_ = b.reg.update(b.entryID, b.content)
		b.mu.Unlock()
	}
	_ = a.reg.setActivity(transcript.ActivityWaiting)
	select {
	case d := <-pa.decide:
		if b != nil && d != Deny {
			b.mu.Lock()
			b.content.Receipt.Reason = "running"
			_ = b.reg.update(b.entryID, b.content)
			b.mu.Unlock()
		}
		return d
	case <-ctx.Done():
		e.mu.Lock()
		for i, x := range e.approvals {
			if x == pa {
				e.approvals = append(e.approvals[:i], e.approvals[i+1:]...)
				break
			}
		}
		e.signalLocked()
		e.mu.Unlock()
		return Deny
	}
}

// allowedLocked reports whether name runs without asking: allowed by name,
// by "*", or by a prefix pattern such as "github__*" (every tool of one MCP
// server). The caller holds e.mu.
func (e *Engine) allowedLocked(name string) bool {
	if e.allowed[name] || e.allowed["*"] {
		return true
	}
	for pat := range e.allowed {
		if p, ok := strings.CutSuffix(pat, "*"); ok && p != "" && strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func canonical(v jsontext.Value) string {
	c := v.Clone()
	if err := c.Canonicalize(); err != nil {
		return string(v)
	}
	return string(c)
}

func bounded(s string) string {
	if len(s) <= maxArgsShown {
		return s
	}
	// ToValidUTF8 drops a rune the cut split in two.
	return strings.ToValidUTF8(s[:maxArgsShown], "") + "…"
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = bounded(s[:200])
	}
	return s
}
