package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/tools/toolschema"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

// Spawner runs a child agent for the task tool. The engine implements it:
// the child gets a region of its own in the live state, whose feed holds
// its replies and its own tool calls, its usage counts in the session
// totals, and it cannot touch the main answer or footer.
type Spawner interface {
	// Spawn runs a child agent on prompt until it finishes and returns its
	// final answer. childID names the child's live region. A spawner that
	// finds a ChildObserver in ctx (see withChildObserver) reports the
	// child's feed to it as the child works.
	Spawn(ctx context.Context, invocationID, label, prompt string) (answer, childID string, err error)
}

// ChildObserver receives a child's feed as it changes. Calls are
// sequential, never concurrent, and the last one, made before Spawn
// returns, holds the settled feed. Intermediate states may be skipped.
type ChildObserver func(feed transcript.Document)

type childObserverKey struct{}

// withChildObserver returns ctx carrying obs for the spawner. It travels in
// the context so that every Spawner wrapper that forwards ctx passes it on
// without a change of interface.
func withChildObserver(ctx context.Context, obs ChildObserver) context.Context {
	return context.WithValue(ctx, childObserverKey{}, obs)
}

// ChildObserverFrom returns the observer ctx carries, or nil.
func ChildObserverFrom(ctx context.Context) ChildObserver {
	obs, _ := ctx.Value(childObserverKey{}).(ChildObserver)
	return obs
}

// Task delegates a self-contained piece of work to a child agent.
type Task struct{ Spawner Spawner }

type taskArgs struct {
	Prompt string `json:"prompt"`
	Label  string `json:"label,omitzero"`
}

// taskSteps describes a child's feed as bounded steps: the newest
// toolschema.TaskMaxSteps, and how many older ones were left out. It walks the feed
// from the end and only describes the steps it keeps, since the task tool
// calls it on every change of a child's feed.
func taskSteps(feed transcript.Document) (steps []toolschema.TaskStep, omitted int) {
	i := feed.Len() - 1
	for ; i >= 0 && len(steps) < toolschema.TaskMaxSteps; i-- {
		if s, ok := taskStep(feed.At(i).Content, i >= feed.Settled()); ok {
			steps = append(steps, s)
		}
	}
	for ; i >= 0; i-- {
		if _, ok := taskStep(feed.At(i).Content, false); ok {
			omitted++
		}
	}
	slices.Reverse(steps)
	for k := range steps {
		steps[k].Summary = brief(steps[k].Summary, toolschema.TaskSummaryBytes)
		steps[k].Name = brief(steps[k].Name, toolschema.TaskNameBytes) // a model may invent a long tool name
	}
	return steps, omitted
}

// taskStep is the step an entry of a child's feed stands for, with its
// summary not yet clipped; ok is false for entries that are not steps.
func taskStep(ct transcript.Content, open bool) (s toolschema.TaskStep, ok bool) {
	switch c := ct.(type) {
	case transcript.Tool:
		s = toolschema.TaskStep{Kind: "tool", Name: c.Receipt.App, Summary: c.Receipt.Summary,
			Status: string(c.Receipt.Status), DurationMs: c.Receipt.DurationMs}
	case transcript.Reasoning:
		s = toolschema.TaskStep{Kind: "reasoning", Summary: c.Text, Status: "ok", DurationMs: c.DurationMs}
	case transcript.Agent:
		s = toolschema.TaskStep{Kind: "answer", Summary: c.Markdown, Status: "ok"}
	case transcript.Notice:
		s = toolschema.TaskStep{Kind: "notice", Summary: c.Text, Status: "ok"}
	case transcript.Failure:
		s = toolschema.TaskStep{Kind: "notice", Summary: firstOf(c.Headline, c.Reason), Status: "failed"}
	default:
		return toolschema.TaskStep{}, false
	}
	if open {
		s.Status = "running"
	}
	return s, true
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// brief folds s onto one line and clips it to n bytes, ellipsis included.
func brief(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	c, _ := clip(s, n-len("…"))
	return c + "…"
}

// Decl declares task.
func (Task) Decl() toolview.ToolDecl {
	return toolview.ToolDecl{
		Name:        "task",
		Description: "Hand a self-contained task to a sub-agent with the same tools (except task) and return its final answer.",
		InputSchema: schema(`{"type":"object","properties":{"prompt":{"type":"string","minLength":1},"label":{"type":"string"}},"required":["prompt"],"additionalProperties":false}`),
	}
}

// NeedsApproval is false; the child asks for approval of its own tools.
func (Task) NeedsApproval() bool { return false }

// taskPublisher keeps the task's view and replaces the presentation when
// it changes; the host paces and coalesces the replacements, and retains
// the last one at closure.
type taskPublisher struct {
	inv  *toolview.Invocation
	mu   sync.Mutex
	view toolschema.TaskView
	last []byte
}

func (p *taskPublisher) publish(edit func(v *toolschema.TaskView)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	edit(&p.view)
	b, err := json.Marshal(p.view)
	if err != nil || string(b) == string(p.last) {
		return // an unchanged view is not worth an update
	}
	p.last = b
	_, _ = p.inv.Presentation().Replace(toolview.Payload{Schema: toolschema.Task, Version: 1, Data: b})
}

// Run spawns the child and waits for it, publishing the child's steps as
// they happen.
func (t Task) Run(ctx context.Context, inv *toolview.Invocation, raw []byte) (toolview.Result, error) {
	var a taskArgs
	if err := decode(raw, &a); err != nil {
		return toolview.Result{}, err
	}
	if t.Spawner == nil {
		return toolview.Result{}, ErrNoSpawner
	}
	label := a.Label
	if label == "" {
		label, _ = clip(oneLine(a.Prompt), 60)
	}
	p := &taskPublisher{inv: inv}
	p.publish(func(v *toolschema.TaskView) { v.Label, v.Status = label, "running" })
	observe := func(feed transcript.Document) {
		steps, omitted := taskSteps(feed)
		p.publish(func(v *toolschema.TaskView) { v.Steps, v.Omitted = steps, omitted })
	}
	answer, child, err := t.Spawner.Spawn(withChildObserver(ctx, observe), inv.ID(), label, a.Prompt)
	p.publish(func(v *toolschema.TaskView) {
		v.Child, v.Status = child, "done"
		if err != nil {
			v.Status = "failed"
		}
		v.Answer = answer
		if len(answer) > toolschema.TaskAnswerPreview {
			c, _ := clip(answer, toolschema.TaskAnswerPreview-len("…"))
			v.Answer = c + "…"
		}
	})
	if err != nil {
		return toolview.Result{Summary: "task " + label}, fmt.Errorf("the sub-agent failed: %w", err)
	}
	return toolview.Result{Text: answer, Summary: "task " + label}, nil
}
