package tui

import "errors"

// ErrAdapterExists is returned by Registry.Register when the schema and
// version already have an adapter.
var ErrAdapterExists = errors.New("tui: presentation adapter already registered")

// ErrPayload is returned by the built-in adapters when a presentation
// payload does not match their schema; the painter then shows host
// metadata instead.
var ErrPayload = errors.New("tui: presentation payload does not match its schema")
