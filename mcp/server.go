package mcp

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/foliodev/folio/internal/proc"
)

// State is where a server is in its lifecycle.
type State string

// Server states, as `folio mcp ls` shows them.
const (
	StateIdle    State = "idle"    // configured, not started yet
	StateRunning State = "running" // connected
	StateCrashed State = "crashed" // exited or disconnected; restarts on the next call
	StateFailed  State = "failed"  // the last start failed
	StateStopped State = "stopped" // the manager was closed
)

// server is one configured MCP server and its current session.
type server struct {
	cfg    ServerConfig
	m      *Manager
	client *sdk.Client

	startMu sync.Mutex   // one start at a time
	backoff proc.Backoff // the wait before a start that follows crashes

	mu      sync.Mutex
	sess    *sdk.ClientSession
	cmd     *exec.Cmd // the running stdio process
	state   State
	lastErr string // why the last start failed (never a secret)
	starts  int
	tools   []*sdk.Tool
	closed  bool

	sinks sync.Map // progress token -> *presenter
}

func newServer(m *Manager, cfg ServerConfig) *server {
	s := &server{cfg: cfg, m: m, state: StateIdle}
	s.client = sdk.NewClient(&sdk.Implementation{Name: "folio", Version: m.version}, &sdk.ClientOptions{
		ProgressNotificationHandler: s.onProgress,
	})
	return s
}

func (s *server) onProgress(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	if req == nil || req.Params == nil {
		return
	}
	if p, ok := s.sinks.Load(fmt.Sprint(req.Params.ProgressToken)); ok {
		p.(*presenter).progress(req.Params.Progress, req.Params.Total, req.Params.Message)
	}
}

// session returns the running session, starting the server if it is not
// running. After a crash it first waits out the backoff (or ctx).
func (s *server) session(ctx context.Context) (*sdk.ClientSession, error) {
	s.mu.Lock()
	if sess := s.sess; sess != nil {
		s.mu.Unlock()
		return sess, nil
	}
	s.mu.Unlock()

	s.startMu.Lock()
	defer s.startMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	if sess := s.sess; sess != nil {
		s.mu.Unlock()
		return sess, nil
	}
	s.mu.Unlock()
	if err := s.backoff.Wait(ctx); err != nil {
		return nil, err
	}
	return s.start(ctx)
}

// startTimeout bounds a server's start and handshake.
const startTimeout = 30 * time.Second

// start connects to the server; the caller holds startMu.
func (s *server) start(ctx context.Context) (*sdk.ClientSession, error) {
	transport, cmd, err := s.transport()
	if err != nil {
		s.fail(err)
		return nil, err
	}
	// The session outlives the call that started it: connect under a
	// context that only bounds the handshake.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), startTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	sess, err := s.client.Connect(cctx, transport, nil)
	if err != nil {
		if cmd != nil && cmd.Process != nil {
			proc.KillGroup(cmd)
		}
		err = fmt.Errorf("%w: %s: %s", ErrUnavailable, s.cfg.Name, s.redact(err.Error()))
		s.fail(err)
		return nil, err
	}
	var listed []*sdk.Tool
	for t, err := range sess.Tools(cctx, nil) {
		if err != nil {
			break
		}
		listed = append(listed, t)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = sess.Close()
		if cmd != nil {
			proc.KillGroup(cmd)
		}
		return nil, ErrClosed
	}
	s.sess, s.cmd, s.state, s.lastErr = sess, cmd, StateRunning, ""
	s.starts++
	if len(listed) > 0 {
		s.tools = listed
	}
	s.mu.Unlock()
	s.saveCache(listed)
	go s.watch(sess, cmd)
	return sess, nil
}

// watch notices the session ending. Unless folio closed it, that is a
// crash: the calls in flight fail, and the next call restarts the server
// after the backoff. The process group is killed either way, so a server's
// own children never outlive it.
func (s *server) watch(sess *sdk.ClientSession, cmd *exec.Cmd) {
	_ = sess.Wait()
	if cmd != nil {
		proc.KillGroup(cmd)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess != sess {
		return
	}
	s.sess, s.cmd = nil, nil
	if !s.closed {
		s.state = StateCrashed
		s.backoff.Crashed()
	}
}

func (s *server) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state = StateFailed
	s.lastErr = err.Error()
}

// redact takes the configured URL out of a transport error, which may
// quote it whole, query (and any key in it) included.
func (s *server) redact(msg string) string {
	if s.cfg.URL == "" {
		return msg
	}
	return strings.ReplaceAll(msg, s.cfg.URL, redactURL(s.cfg.URL))
}

// succeeded resets the backoff after a good call.
func (s *server) succeeded() { s.backoff.Succeeded() }

// transport builds the SDK transport from the configuration, resolving
// environment references. Errors name missing variables, never values.
func (s *server) transport() (sdk.Transport, *exec.Cmd, error) {
	c := s.cfg
	if c.HTTP() {
		hdr := http.Header{}
		for k, v := range c.Headers {
			val, missing := expand(v, s.m.getenv)
			if len(missing) > 0 {
				return nil, nil, fmt.Errorf("%w: %s: header %s needs %s set in the environment", ErrUnavailable, c.Name, k, strings.Join(missing, ", "))
			}
			hdr.Set(k, val)
		}
		return &sdk.StreamableClientTransport{Endpoint: c.URL, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: headerTransport{base: http.DefaultTransport, h: hdr}}}, nil, nil
	}
	env := proc.MinimalEnv(s.m.getenv, "FOLIO_MCP=1")
	keys := make([]string, 0, len(c.Env))
	for k := range c.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		val, missing := expand(c.Env[k], s.m.getenv)
		if len(missing) > 0 {
			return nil, nil, fmt.Errorf("%w: %s: env %s needs %s set in the environment", ErrUnavailable, c.Name, k, strings.Join(missing, ", "))
		}
		env = append(env, k+"="+val)
	}
	cmd := exec.Command(c.Command, c.Args...)
	cmd.Env = env
	cmd.Dir = s.m.dir
	cmd.Stderr = countWriter{s.m}
	// Its own process group, so stopping it stops whatever it started.
	proc.NewGroup(cmd)
	return &sdk.CommandTransport{Command: cmd, TerminateDuration: s.m.grace}, cmd, nil
}

// stop closes the session and kills the process group.
func (s *server) stop() {
	s.startMu.Lock()
	defer s.startMu.Unlock()
	s.mu.Lock()
	s.closed = true
	sess, cmd := s.sess, s.cmd
	s.sess, s.cmd = nil, nil
	s.state = StateStopped
	s.mu.Unlock()
	if cmd != nil {
		proc.KillGroup(cmd)
	}
	if sess != nil {
		_ = sess.Close()
	}
}

// pid is the running stdio process's ID, or 0.
func (s *server) pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

type headerTransport struct {
	base http.RoundTripper
	h    http.Header
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return t.base.RoundTrip(r)
}

type countWriter struct{ m *Manager }

func (w countWriter) Write(b []byte) (int, error) {
	w.m.stderrBytes.Add(int64(len(b)))
	return len(b), nil
}
