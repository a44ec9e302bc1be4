// Package toolschema is the shape of the presentations folio's built-in
// tools publish: the schema names and the payload types that package tools
// writes and every view decodes (strictly, so a field one side adds
// without the other is an error, not a silent blank). It is a package of
// its own so that a view can read the values without linking the tools
// that run commands and write files. It holds only types and constants.
//
// Every schema here is version 1.
package toolschema

// Schema names.
const (
	// Shell is a shell command and its output, a ShellView. The full
	// output is the item's artifact when the host keeps artifacts.
	Shell = "folio.shell"
	// Diff is a change to one file, a DiffView.
	Diff = "folio.diff"
	// Task is a child agent's work, a TaskView: it links the call to the
	// child's live region and lists the child's newest steps, so a reload
	// still shows the nested calls.
	Task = "folio.task"
	// Args is the draft of a call's arguments while the model still
	// writes them, an ArgsDraft. The host builds it (package toolview),
	// never a tool.
	Args = "folio.args"
)

// ShellView is the folio.shell value:
//
//	{"command": "ls -la", "output": "<bounded tail>", "exitCode": 0}
type ShellView struct {
	Command string `json:"command"`
	Output  string `json:"output"`
	// ExitCode is nil while the command runs.
	ExitCode *int `json:"exitCode,omitzero"`
}

// DiffView is the folio.diff value:
//
//	{"path": "main.go", "diff": "@@ -1,3 +1,4 @@\n..."}
type DiffView struct {
	Path string `json:"path"`
	Diff string `json:"diff"` // a unified diff, bounded
}

// Bounds of the folio.task value. A step is small and the list is capped,
// so the value stays far under the host's bound however long the child
// works: about 20 KiB for ordinary text, and under 100 KiB even if every
// byte needed a six-byte JSON escape.
const (
	TaskMaxSteps      = 64   // newest steps kept; older ones are counted in Omitted
	TaskSummaryBytes  = 200  // per step summary
	TaskNameBytes     = 64   // per step tool name
	TaskAnswerPreview = 1024 // the answer preview
)

// TaskView is the folio.task value:
//
//	{"label": "scout", "child": "<region ID>", "status": "running",
//	 "steps": [{"kind": "tool", "name": "shell", "summary": "ls",
//	 "status": "ok", "durationMs": 12}], "omitted": 3, "answer": "…"}
type TaskView struct {
	Label  string `json:"label"`
	Child  string `json:"child,omitzero"`
	Status string `json:"status"` // "running", "done" or "failed"
	// Steps are the newest steps of the child, oldest first.
	Steps []TaskStep `json:"steps,omitzero"`
	// Omitted counts older steps dropped to keep the list bounded.
	Omitted int `json:"omitted,omitzero"`
	// Answer is a preview of the child's final answer.
	Answer string `json:"answer,omitzero"`
}

// TaskStep is one step of a child's work.
type TaskStep struct {
	// Kind is "tool", "reasoning", "answer" (the child's text) or
	// "notice" (a warning or the child's failure).
	Kind string `json:"kind"`
	// Name is the tool's name, for a tool step.
	Name    string `json:"name,omitzero"`
	Summary string `json:"summary"`
	// Status is "running" while the step's entry is open, then a tool's
	// outcome ("ok", "failed", "denied"), or "ok"/"failed" for the others.
	Status     string   `json:"status"`
	DurationMs *float64 `json:"durationMs,omitzero"`
}

// ArgsDraft is the folio.args value:
//
//	{"text": "{\"command\": \"ls", "bytes": 14, "truncated": false}
type ArgsDraft struct {
	Text      string `json:"text"`      // the head of the arguments so far, whole characters
	Bytes     int64  `json:"bytes"`     // how many bytes the model has written
	Truncated bool   `json:"truncated"` // Text is a cut head of them
}
