package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foliodev/folio/internal/proc"
	"github.com/foliodev/folio/mcp/mcpschema"
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/toolview"
)

// separator joins a server's name and its tool's name.
const separator = "__"

// maxToolName is the longest tool name providers accept.
const maxToolName = 64

// toolName is the name the model sees: server__tool, with characters
// providers refuse replaced by '_' and clipped to 64 bytes.
func toolName(server, tool string) string {
	var b strings.Builder
	b.WriteString(server)
	b.WriteString(separator)
	for _, r := range tool {
		if r < 128 && (r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if len(s) > maxToolName {
		s = s[:maxToolName]
	}
	return s
}

// redactURL drops the query and any user information, which may carry
// credentials.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// serverTool is one server tool as folio offers it. It implements tools.Tool and
// tools.Presenter.
type serverTool struct {
	srv    *server
	remote string
	decl   toolview.ToolDecl
}

var (
	_ tools.Tool      = (*serverTool)(nil)
	_ tools.Presenter = (*serverTool)(nil)
)

// toolList turns the server's listed tools into folio tools. A tool whose
// schema folio cannot compile, or whose name collides after cleaning, is
// left out and named in the error.
func (s *server) toolList() ([]tools.Tool, error) {
	s.mu.Lock()
	listed := s.tools
	s.mu.Unlock()
	var out []tools.Tool
	var errs []error
	seen := map[string]bool{}
	for _, t := range listed {
		name := toolName(s.cfg.Name, t.Name)
		schema, err := json.Marshal(t.InputSchema)
		if err != nil || t.InputSchema == nil {
			schema = []byte(`{"type":"object"}`)
		}
		decl := toolview.ToolDecl{Name: name, Description: t.Description, InputSchema: jsontext.Value(schema)}
		if seen[name] {
			errs = append(errs, fmt.Errorf("mcp: %s: tool %q is named %s like another tool; left out", s.cfg.Name, t.Name, name))
			continue
		}
		if _, err := toolview.NewManifest(s.cfg.Name, []toolview.ToolDecl{decl}, nil); err != nil {
			errs = append(errs, fmt.Errorf("mcp: %s: tool %q left out: %v", s.cfg.Name, t.Name, err))
			continue
		}
		seen[name] = true
		out = append(out, &serverTool{srv: s, remote: t.Name, decl: decl})
	}
	return out, errors.Join(errs...)
}

// Decl is the tool's name, description and input schema; the host
// validates arguments against the schema before Run sees them.
func (t *serverTool) Decl() toolview.ToolDecl { return t.decl }

// NeedsApproval is always true: an MCP tool runs only when the person
// allows it, by name or by server (--allow github__*).
func (t *serverTool) NeedsApproval() bool { return true }

// Adapters declares the schemas an MCP call publishes.
func (t *serverTool) Adapters() []toolview.AdapterDecl {
	return []toolview.AdapterDecl{{Schema: mcpschema.Progress, Version: 1}, {Schema: mcpschema.Content, Version: 1}}
}

// Server is the configured server's name; Remote the tool's own name there.
func (t *serverTool) Server() string { return t.srv.cfg.Name }

// Remote is the tool's name on its server.
func (t *serverTool) Remote() string { return t.remote }

// Failure reasons a call's outcome can carry.
const (
	reasonUnavailable = "mcp_unavailable"    // the server could not be started or reached
	reasonCrashed     = "mcp_server_crashed" // it exited or disconnected during the call
	reasonProtocol    = "mcp_protocol"       // it answered with a JSON-RPC error
	reasonToolError   = "mcp_tool_error"     // the tool ran and reported an error
)

// Run calls the tool on its server, starting the server if needed.
// Progress notifications replace the call's presentation; the result's
// content blocks become its final value. Cancelling ctx makes the SDK send
// the server a cancellation for the request.
func (t *serverTool) Run(ctx context.Context, inv *toolview.Invocation, args []byte) (toolview.Result, error) {
	s := t.srv
	p := newPresenter(inv, s.cfg.Name, t.remote, s.m.resultBound)
	p.running()
	sess, err := s.session(ctx)
	if err != nil {
		p.finish(mcpschema.StatusError, "could not start the server")
		if ctx.Err() != nil {
			return toolview.Result{Text: "the tool call was canceled", IsError: true}, ctx.Err()
		}
		return toolview.Result{Text: fmt.Sprintf("MCP server %s is not available: %v", s.cfg.Name, err), IsError: true},
			&toolview.Failure{Reason: reasonUnavailable, Err: err}
	}
	token := fmt.Sprintf("folio-%d", s.m.seq.Add(1))
	s.sinks.Store(token, p)
	defer s.sinks.Delete(token)
	params := &sdk.CallToolParams{Name: t.remote, Arguments: json.RawMessage(args)}
	params.SetProgressToken(token)
	res, err := sess.CallTool(ctx, params)
	var wire *jsonrpc.Error
	switch {
	case err == nil:
		s.succeeded()
		return p.result(res, t.decl.Name)
	case ctx.Err() != nil:
		p.finish(mcpschema.StatusError, "canceled")
		return toolview.Result{Text: "the tool call was canceled", IsError: true}, ctx.Err()
	case errors.As(err, &wire):
		p.finish(mcpschema.StatusError, clipLine(wire.Message, maxMessage))
		return toolview.Result{Text: fmt.Sprintf("MCP server %s refused the call: %s", s.cfg.Name, wire.Message), IsError: true},
			&toolview.Failure{Reason: reasonProtocol, Err: fmt.Errorf("%w: code %d", ErrRemote, wire.Code)}
	default:
		s.lost(sess)
		p.finish(mcpschema.StatusError, "the server stopped during the call")
		return toolview.Result{Text: fmt.Sprintf("MCP server %s stopped during the call; it will be restarted on the next call", s.cfg.Name), IsError: true},
			&toolview.Failure{Reason: reasonCrashed, Err: fmt.Errorf("%w: %s: %v", ErrCrashed, s.cfg.Name, err)}
	}
}

// lost marks sess as crashed now, so the next call restarts the server
// instead of finding the dead session before the watcher has run.
func (s *server) lost(sess *sdk.ClientSession) {
	s.mu.Lock()
	if s.sess != sess {
		s.mu.Unlock()
		return
	}
	cmd := s.cmd
	s.sess, s.cmd = nil, nil
	if !s.closed {
		s.state = StateCrashed
		s.backoff.Crashed()
	}
	s.mu.Unlock()
	if cmd != nil {
		proc.KillGroup(cmd)
	}
	go func() { _ = sess.Close() }()
}
