package engine

import (
	"time"

	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/toolview"
)

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
