package mcp

import "errors"

// ErrConfig is returned by Parse and LoadConfig for a malformed mcpServers
// section, or one that holds a literal secret. The message names the file
// and the JSON location, never a value.
var ErrConfig = errors.New("mcp config")

// ErrUnavailable is returned (inside a toolview.Failure with reason
// mcp_unavailable) by a tool call whose server cannot be started or
// reached.
var ErrUnavailable = errors.New("mcp server unavailable")

// ErrCrashed is returned (inside a toolview.Failure with reason
// mcp_server_crashed) by a tool call whose server exited or dropped the
// connection while the call was in flight.
var ErrCrashed = errors.New("mcp server crashed during the call")

// ErrRemote is returned (inside a toolview.Failure with reason
// mcp_protocol) when the server answers a call with a JSON-RPC error.
var ErrRemote = errors.New("mcp server refused the call")

// ErrClosed is returned by a call made after the Manager was closed.
var ErrClosed = errors.New("mcp manager closed")
