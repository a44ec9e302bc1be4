package server

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/transcript"
)

// This file is what runs real turns: the options every conversation's
// engine is built from (TurnsOptions) and the model clients they share
// (turnHost). The server makes its turnHost from Options.Turns and owns it;
// the turnHost knows no server and no conversation. An engine is part of its
// conversation (opened and closed in turns_open.go, published in
// turns_publish.go, given commands in turns_dispatch.go); what runs over all
// of them (idle closing, shutdown, receipts, renames and the way in for
// commands) is the server's (engines.go).

// defaultIdleAfter is how long a conversation's engine stays open with
// nothing running before it is closed and its log's lock released.
const defaultIdleAfter = 10 * time.Minute

// maxAttachmentText is how much of an attachment's text reaches the model;
// larger or binary files are described instead.
const maxAttachmentText = 256 << 10

// TurnsOptions configure the server's own engines (Options.Turns).
type TurnsOptions struct {
	// Provider answers the turns. Required.
	Provider provider.Provider
	// Model is sent with requests and shown in the footer.
	Model string
	// ContextWindow, when above 0, sets the window used for compaction.
	ContextWindow int
	// Workspace is the folder the built-in tools work in (shell's working
	// directory, the root of the file tools). folio serve uses the folder it
	// was started in.
	Workspace string
	// Allow lists tools that run without asking ("*" for all). Every other
	// call that needs approval waits for an approve command.
	Allow []string
	// IdleAfter closes an engine with nothing running after this long
	// (default defaultIdleAfter, ten minutes).
	IdleAfter time.Duration
	// StreamSaveEvery, when set, is how often a streaming answer is saved
	// at the latest (engine.WithStreamSaveEvery; default the engine's).
	StreamSaveEvery time.Duration
	// Models are the models a send may switch to (see models.go); the
	// Default one is Provider and Model. Empty: only Provider and Model.
	Models []ModelOption
	// Tools are offered beside the built-in ones in every conversation
	// (an MCP server's tools); they need approval like the others.
	Tools []tools.Tool
}

// turnHost is what runs turns: the options of every conversation's engine
// and the model clients built for model switches (models.go). The server
// builds it from Options.Turns.
type turnHost struct {
	opts   TurnsOptions
	models modelSet
	// hooks let tests observe the order of saves and publications
	// (export_test.go sets them, before the first command). Each engine's
	// conversation is handed them when the engine opens.
	hooks turnsHooks
	// hosted: the server opens no engine of its own; it serves only the
	// engines lent to it (hosted.go).
	hosted bool
	// model names the lent engines' model as provider/model (hosted).
	model func() string
}

// turnsHooks let tests observe the order of saves and publications.
type turnsHooks struct {
	beforeSave func(doc transcript.Document)
	held       func(id string)          // a failure entry waits for its save
	published  func(e transcript.Entry) // an entry went to the live feed
	closing    func(id string)          // an engine's close began
	waiting    func(id string)          // a command waits for an open or close
	replacing  func(id string)          // the publisher announces a new generation of the store
	catchUp    func(id string)          // a command waits for the publisher to announce its head switch
}

// newTurnHost checks o and fills in its defaults.
func newTurnHost(o TurnsOptions) (*turnHost, error) {
	if o.Provider == nil {
		return nil, errors.New("server: turns need a provider")
	}
	if o.Workspace == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("server: workspace: %w", err)
		}
		o.Workspace = wd
	}
	if o.IdleAfter <= 0 {
		o.IdleAfter = defaultIdleAfter
	}
	return &turnHost{opts: o}, nil
}
