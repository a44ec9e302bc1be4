package tools

import (
	"context"
	"fmt"

	"github.com/foliodev/folio/toolview"
)

// Spawner runs a child agent for the task tool. The engine implements it:
// the child gets a region of its own in the live state, whose feed holds
// its replies and its own tool calls, its usage counts in the session
// totals, and it cannot touch the main answer or footer.
type Spawner interface {
	// Spawn runs a child agent on prompt until it finishes and returns its
	// final answer. childID names the child's live region.
	Spawn(ctx context.Context, invocationID, label, prompt string) (answer, childID string, err error)
}

// Task delegates a self-contained piece of work to a child agent.
type Task struct{ Spawner Spawner }

type taskArgs struct {
	Prompt string `json:"prompt"`
	Label  string `json:"label,omitzero"`
}

type taskView struct {
	Label  string `json:"label"`
	Child  string `json:"child,omitzero"`
	Status string `json:"status"`
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

// Run spawns the child and waits for it.
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
	_, _ = inv.Presentation().Replace(payload(SchemaTask, taskView{Label: label, Status: "running"}))
	answer, child, err := t.Spawner.Spawn(ctx, inv.ID(), label, a.Prompt)
	status := "done"
	if err != nil {
		status = "failed"
	}
	_, _ = inv.Presentation().Replace(payload(SchemaTask, taskView{Label: label, Child: child, Status: status}))
	if err != nil {
		return toolview.Result{Summary: "task " + label}, fmt.Errorf("the sub-agent failed: %w", err)
	}
	return toolview.Result{Text: answer, Summary: "task " + label}, nil
}
