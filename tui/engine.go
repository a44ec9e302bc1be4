package tui

import (
	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/transcript"
)

// Engine is what the chat program drives: the in-process *engine.Engine,
// or a client of the engine another folio process runs (a terminal
// attached to the conversation's owner, internal/cli's attachment), which
// mirrors the owner's store into Store and sends the program's commands
// to the owner. The program reads everything it shows from Store either
// way.
type Engine interface {
	Store() *transcript.Store
	Transport() engine.Transport
	StatusFunc() engine.StatusFunc
	// Changed is closed when commands or approvals changed.
	Changed() <-chan struct{}
	// Stop stops the running turn; false when none runs.
	Stop() bool
	Dismiss(commandID string) error
	Retry(commandID string, opts ...engine.CommandOption) (engine.Receipt, error)
	Approve(invocationID string, d engine.Decision) error
	Allowed() []string
	Model() string
}

var _ Engine = (*engine.Engine)(nil)
