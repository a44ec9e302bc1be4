package plugin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foliodev/folio/internal/proc"
	"github.com/foliodev/folio/toolview"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Protocol method names.
const (
	methodCall            = "tools/call"
	methodReplace         = "presentation/replace"
	methodReplaceArtifact = "presentation/replaceArtifact"
	// methodContribute is how plugins written before the replace methods
	// published: one legacy placement envelope per notification. It is
	// accepted until the supported-history cutoff removes legacy envelopes.
	methodContribute = "presentation/contribute"
)

// callID is the JSON-RPC id of the one request each process receives.
// Notifications name it in "call", which binds them to this invocation.
const callID = 1

// Plugin is a loaded out-of-process tool provider.
type Plugin struct {
	// Manifest is what the host validates against: tools, argument schemas
	// and adapters.
	Manifest *toolview.Manifest
	exe      string
	args     []string
	dir      string
	grace    time.Duration

	wg          sync.WaitGroup
	stderrBytes atomic.Int64

	// A persistent plugin's one process (see persistent.go).
	persistent bool
	startMu    sync.Mutex
	mu         sync.Mutex
	proc       *process
	backoff    proc.Backoff
	closed     bool
	starts     atomic.Int64
	nextID     atomic.Int64
	stray      atomic.Int64
}

type manifestWire struct {
	Name       string                 `json:"name"`
	Executable string                 `json:"executable"`
	Args       []string               `json:"args,omitzero"`
	Tools      []toolview.ToolDecl    `json:"tools"`
	Adapters   []toolview.AdapterDecl `json:"adapters,omitzero"`
	Persistent bool                   `json:"persistent,omitzero"`
}

var strict = json.JoinOptions(json.RejectUnknownMembers(true), jsontext.AllowDuplicateNames(false))

// Load reads a plugin manifest file. The executable is resolved relative to
// the manifest's folder and must exist and be executable.
func Load(path string) (*Plugin, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrManifest, err)
	}
	var w manifestWire
	if err := json.Unmarshal(data, &w, strict); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrManifest, path, err)
	}
	m, err := toolview.NewManifest(w.Name, w.Tools, w.Adapters)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrManifest, path, err)
	}
	if w.Executable == "" {
		return nil, fmt.Errorf("%w: %s: /executable is empty", ErrManifest, path)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrManifest, err)
	}
	exe := w.Executable
	if !filepath.IsAbs(exe) {
		exe = filepath.Join(dir, exe)
	}
	fi, err := os.Stat(exe)
	if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return nil, fmt.Errorf("%w: %s: /executable %q is not an executable file", ErrManifest, path, w.Executable)
	}
	return &Plugin{Manifest: m, exe: exe, args: w.Args, dir: dir, grace: 5 * time.Second, persistent: w.Persistent}, nil
}

// Func returns the ToolFunc that runs this plugin for an invocation of one of
// its tools: pass it to Host.Run or Invocation.Invoke with the plugin's
// manifest as the Spec's Producer.
func (p *Plugin) Func() toolview.ToolFunc {
	if p.persistent {
		return p.callPersistent
	}
	return p.call
}

// Persistent reports whether the manifest asks for one long-running
// process serving every call.
func (p *Plugin) Persistent() bool { return p.persistent }

// Wait blocks until every per-call plugin process started so far has exited
// and its trailing output has been accounted for. A persistent plugin's
// process runs until Close.
func (p *Plugin) Wait() { p.wg.Wait() }

// StderrBytes counts what plugins wrote to stderr (discarded, never logged).
func (p *Plugin) StderrBytes() int64 { return p.stderrBytes.Load() }

type request struct {
	JSONRPC string     `json:"jsonrpc"`
	ID      int        `json:"id"`
	Method  string     `json:"method"`
	Params  callParams `json:"params"`
}

type callParams struct {
	Name      string         `json:"name"`
	Arguments jsontext.Value `json:"arguments"`
	Artifact  *artifactInfo  `json:"artifact,omitzero"`
}

type artifactInfo struct {
	Ref  string `json:"ref"`
	Path string `json:"path"`
}

// message is any line a plugin may print.
type message struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      jsontext.Value `json:"id,omitzero"`
	Method  string         `json:"method,omitzero"`
	Params  jsontext.Value `json:"params,omitzero"`
	Result  jsontext.Value `json:"result,omitzero"`
	Error   *rpcError      `json:"error,omitzero"`
}

type rpcError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    jsontext.Value `json:"data,omitzero"`
}

type callResult struct {
	Content string `json:"content"`
	IsError bool   `json:"isError,omitzero"`
	Summary string `json:"summary,omitzero"`
}

type replaceParams struct {
	Call      int            `json:"call"`
	Item      string         `json:"item,omitzero"`
	Ephemeral bool           `json:"ephemeral,omitzero"`
	Schema    string         `json:"schema"`
	Version   int64          `json:"version"`
	Revision  int64          `json:"revision,omitzero"`
	Payload   jsontext.Value `json:"payload"`
}

type replaceArtifactParams struct {
	Call           int            `json:"call"`
	Item           string         `json:"item,omitzero"`
	Ephemeral      bool           `json:"ephemeral,omitzero"`
	Schema         string         `json:"schema"`
	Version        int64          `json:"version"`
	Revision       int64          `json:"revision,omitzero"`
	Ref            string         `json:"ref"`
	ContentType    string         `json:"contentType,omitzero"`
	CommittedBytes int64          `json:"committedBytes"`
	Final          bool           `json:"final,omitzero"`
	Available      bool           `json:"available"`
	Data           jsontext.Value `json:"data,omitzero"`
}

type contributeParams struct {
	Call     int            `json:"call"`
	Envelope jsontext.Value `json:"envelope"`
}

// lineOverhead is what a notification may add around a payload at the bound.
const lineOverhead = 16 << 10

// request builds the tools/call line for one invocation, creating its
// artifact when the tool asks for one.
func (p *Plugin) request(inv *toolview.Invocation, args []byte, id int) ([]byte, error) {
	decl, ok := p.Manifest.Tool(inv.Tool())
	if !ok {
		return nil, fmt.Errorf("plugin %q has no tool %q", p.Manifest.Name, inv.Tool())
	}
	compact := jsontext.Value(append([]byte(nil), args...))
	if err := compact.Compact(); err != nil {
		return nil, fmt.Errorf("plugin %q: arguments are not JSON: %w", p.Manifest.Name, err)
	}
	params := callParams{Name: decl.Name, Arguments: compact}
	if decl.Artifacts {
		w, err := inv.Presentation().NewArtifact("application/octet-stream")
		if err != nil {
			return nil, err
		}
		params.Artifact = &artifactInfo{Ref: w.Ref(), Path: w.Path()}
	}
	return json.Marshal(request{JSONRPC: "2.0", ID: id, Method: methodCall, Params: params})
}

func (p *Plugin) call(ctx context.Context, inv *toolview.Invocation, args []byte) (toolview.Result, error) {
	req, err := p.request(inv, args, callID)
	if err != nil {
		return toolview.Result{}, err
	}

	cmd := exec.CommandContext(ctx, p.exe, p.args...)
	cmd.Dir = p.dir
	cmd.Env = proc.MinimalEnv(os.Getenv, "FOLIO_PLUGIN=1")
	cmd.Stdin = bytes.NewReader(append(req, '\n'))
	cmd.Stderr = countWriter{&p.stderrBytes}
	cmd.WaitDelay = p.grace
	// Cancelling stops the plugin and anything it started.
	proc.NewGroup(cmd)
	cmd.Cancel = func() error { proc.KillGroup(cmd); return nil }
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return toolview.Result{}, err
	}
	if err := cmd.Start(); err != nil {
		return toolview.Result{}, fmt.Errorf("plugin %q: start: %w", p.Manifest.Name, err)
	}
	p.wg.Add(1)

	s := newSession(inv, callID)
	r := bufio.NewReaderSize(stdout, 64<<10)
	res, resErr, done := s.readUntilResult(r)
	// Whatever follows the result arrived after it: count it, apply nothing.
	// A plugin that lingers after its result is stopped after a grace period.
	kill := time.AfterFunc(p.grace, func() { proc.KillGroup(cmd) })
	go func() {
		defer p.wg.Done()
		defer kill.Stop()
		s.drainAfterResult(r)
		_ = cmd.Wait()
	}()
	if !done {
		if err := ctx.Err(); err != nil {
			return toolview.Result{Text: "the tool call was canceled", IsError: true}, err
		}
		return toolview.Result{Text: "the plugin exited without a result", IsError: true},
			&toolview.Failure{Reason: "plugin_exited", Err: ErrNoResult}
	}
	return res, resErr
}

// session applies a plugin's output for one call to its invocation.
type session struct {
	inv     *toolview.Invocation
	id      int // the call's request ID, which notifications name in "call"
	maxLine int
	items   map[string]*toolview.Presentation
}

func newSession(inv *toolview.Invocation, id int) *session {
	return &session{inv: inv, id: id, maxLine: int(inv.PayloadLimit()) + lineOverhead, items: map[string]*toolview.Presentation{}}
}

// readLine returns the next line, or (nil, size, nil) for a line over the
// bound, which is skipped without keeping its bytes.
func readLine(r *bufio.Reader, max int) (line []byte, size int, err error) {
	var buf []byte
	over := false
	for {
		chunk, err := r.ReadSlice('\n')
		size += len(chunk)
		if !over {
			if len(buf)+len(chunk) > max {
				over, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if over {
			return nil, size, err
		}
		return bytes.TrimRight(buf, "\r\n"), size, err
	}
}

func (s *session) readUntilResult(r *bufio.Reader) (toolview.Result, error, bool) {
	for {
		line, size, err := readLine(r, s.maxLine)
		if line == nil && size > 0 {
			s.inv.Diagnose(toolview.ReasonOversized, int64(s.maxLine), int64(size))
		} else if len(bytes.TrimSpace(line)) > 0 {
			if res, resErr, done := s.handle(line); done {
				return res, resErr, true
			}
		}
		if err != nil {
			return toolview.Result{}, nil, false
		}
	}
}

func (s *session) drainAfterResult(r *bufio.Reader) {
	for {
		line, size, err := readLine(r, s.maxLine)
		if size > 0 && len(bytes.TrimSpace(line)) > 0 || line == nil && size > 0 {
			s.inv.Diagnose(toolview.ReasonClosed, 0, int64(size))
		}
		if err != nil {
			return
		}
	}
}

// handle applies one line. It reports done when the line is the result.
func (s *session) handle(line []byte) (toolview.Result, error, bool) {
	var m message
	if err := json.Unmarshal(line, &m, strict); err != nil || m.JSONRPC != "2.0" {
		s.inv.Diagnose(toolview.ReasonMalformed, 0, int64(len(line)))
		return toolview.Result{}, nil, false
	}
	if m.Method == "" {
		return s.response(m)
	}
	if len(m.ID) > 0 {
		// The plugin asked folio something; folio answers nothing.
		s.inv.Diagnose(toolview.ReasonPlugin, 0, int64(len(line)))
		return toolview.Result{}, nil, false
	}
	switch m.Method {
	case methodReplace:
		var p replaceParams
		if err := json.Unmarshal(m.Params, &p, strict); err != nil || p.Call != s.id {
			s.inv.Diagnose(toolview.ReasonMalformed, 0, int64(len(line)))
			return toolview.Result{}, nil, false
		}
		// Errors are already counted by the host.
		_, _ = s.item(p.Item, p.Ephemeral).Replace(toolview.Payload{
			Schema: p.Schema, Version: p.Version, Revision: toolview.Revision(p.Revision), Data: p.Payload})
	case methodReplaceArtifact:
		var p replaceArtifactParams
		if err := json.Unmarshal(m.Params, &p, strict); err != nil || p.Call != s.id {
			s.inv.Diagnose(toolview.ReasonMalformed, 0, int64(len(line)))
			return toolview.Result{}, nil, false
		}
		_, _ = s.item(p.Item, p.Ephemeral).ReplaceArtifact(toolview.ArtifactCheckpoint{
			Schema: p.Schema, Version: p.Version, Revision: toolview.Revision(p.Revision),
			Ref: p.Ref, ContentType: p.ContentType, CommittedBytes: p.CommittedBytes,
			Final: p.Final, Available: p.Available, Data: p.Data})
	case methodContribute:
		var p contributeParams
		if err := json.Unmarshal(m.Params, &p, strict); err != nil || p.Call != s.id {
			s.inv.Diagnose(toolview.ReasonMalformed, 0, int64(len(line)))
			return toolview.Result{}, nil, false
		}
		env, err := toolview.DecodeEnvelope(p.Envelope)
		if err != nil {
			s.inv.Diagnose(toolview.ReasonMalformed, 0, int64(len(line)))
			return toolview.Result{}, nil, false
		}
		s.contribute(env)
	default:
		s.inv.Diagnose(toolview.ReasonPlugin, 0, int64(len(line)))
	}
	return toolview.Result{}, nil, false
}

func (s *session) response(m message) (toolview.Result, error, bool) {
	if id, err := strconv.Atoi(string(m.ID)); err != nil || id != s.id {
		s.inv.Diagnose(toolview.ReasonPlugin, 0, int64(len(m.ID)))
		return toolview.Result{}, nil, false
	}
	if m.Error != nil {
		return toolview.Result{Text: m.Error.Message, IsError: true}, fmt.Errorf("%w: code %d", ErrRemote, m.Error.Code), true
	}
	var r callResult
	if err := json.Unmarshal(m.Result, &r, strict); err != nil {
		s.inv.Diagnose(toolview.ReasonMalformed, 0, int64(len(m.Result)))
		return toolview.Result{Text: "the plugin returned a malformed result", IsError: true},
			&toolview.Failure{Reason: "plugin_malformed_result", Err: errors.New("plugin: malformed result")}, true
	}
	return toolview.Result{Text: r.Content, IsError: r.IsError, Summary: r.Summary}, nil, true
}

// contribute applies an older plugin's placed contribution the way a
// history's envelopes are projected: a request, progress or result placement
// replaces the invocation's primary item, a keyed supplemental its own item,
// and a hidden, unplaced or incompatible one shows nowhere. Each envelope is
// projected alone; the latest one wins as it does in a whole projection.
func (s *session) contribute(env toolview.Envelope) {
	for _, it := range toolview.ProjectLegacy([]toolview.Envelope{env}).Items {
		// Errors are already counted by the host.
		_, _ = s.item(it.Key, false).Replace(toolview.Payload{
			Schema: it.Value.Schema, Version: it.Value.Version, Data: it.Value.Payload})
	}
}

// item returns the handle a notification addresses: the primary item, or
// the keyed supplemental.
func (s *session) item(key string, ephemeral bool) *toolview.Presentation {
	if key == "" {
		return s.inv.Presentation()
	}
	if h, ok := s.items[key]; ok {
		return h
	}
	var opts []toolview.ItemOption
	if ephemeral {
		opts = append(opts, toolview.WithRetention(toolview.Ephemeral))
	}
	h := s.inv.Supplemental(key, opts...)
	s.items[key] = h
	return h
}

type countWriter struct{ n *atomic.Int64 }

func (w countWriter) Write(b []byte) (int, error) {
	w.n.Add(int64(len(b)))
	return len(b), nil
}

var _ io.Writer = countWriter{}
