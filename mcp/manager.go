package mcp

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foliodev/folio/tools"
)

// defaultResultBound is how much of a result's text a call keeps inline,
// in its presentation and in what the model reads; the whole text goes to
// an artifact past it.
const defaultResultBound = 64 << 10

// Manager owns the configured servers of one folio session.
type Manager struct {
	servers []*server
	byName  map[string]*server

	getenv      func(string) string
	dir         string
	resultBound int
	grace       time.Duration
	version     string
	cacheDir    string

	seq         atomic.Int64
	stderrBytes atomic.Int64
}

// Option configures a Manager.
type Option func(*Manager)

// WithDir sets the working folder of stdio servers (default folio's).
func WithDir(dir string) Option { return func(m *Manager) { m.dir = dir } }

// WithVersion sets the client version folio announces.
func WithVersion(v string) Option { return func(m *Manager) { m.version = v } }

// WithCache keeps each server's tool list in dir (folio uses the data
// folder's mcp/ folder). A server whose list is cached for its current
// configuration is not started by Tools: it starts on the first call of
// one of its tools.
func WithCache(dir string) Option { return func(m *Manager) { m.cacheDir = dir } }

// New returns a manager for the configured servers. Nothing starts until a
// server's tools are listed or called.
func New(cfgs []ServerConfig, opts ...Option) *Manager {
	m := &Manager{byName: map[string]*server{}, getenv: os.Getenv, resultBound: defaultResultBound,
		grace: 2 * time.Second, version: "dev"}
	for _, o := range opts {
		o(m)
	}
	for _, c := range cfgs {
		s := newServer(m, c)
		m.servers = append(m.servers, s)
		m.byName[c.Name] = s
	}
	return m
}

// Tools returns every server's tools as server__tool. A server's list comes
// from the cache when it holds one for the server's configuration (the
// server is not started); otherwise the server is started (or the running
// one reused) and asked. A server that cannot be started offers no tools;
// its error is in the joined error, and the others' tools are still
// returned.
func (m *Manager) Tools(ctx context.Context) ([]tools.Tool, error) {
	type res struct {
		ts  []tools.Tool
		err error
	}
	out := make([]res, len(m.servers))
	var wg sync.WaitGroup
	for i, s := range m.servers {
		wg.Go(func() {
			if s.loadCache() {
				out[i].ts, out[i].err = s.toolList()
				return
			}
			if _, err := s.session(ctx); err != nil {
				out[i].err = err
				return
			}
			out[i].ts, out[i].err = s.toolList()
		})
	}
	wg.Wait()
	var all []tools.Tool
	var errs []error
	for _, r := range out {
		all = append(all, r.ts...)
		if r.err != nil {
			errs = append(errs, r.err)
		}
	}
	return all, errors.Join(errs...)
}

// ServerStatus is what `folio mcp ls` shows of a server: never a value
// from its env or headers.
type ServerStatus struct {
	Name      string
	Transport string // "stdio" or "http"
	Target    string // the command, or the URL without its query
	State     State
	Error     string   // why the last start failed
	Starts    int      // how often it was started
	Tools     []string // server__tool names
	EnvNames  []string // variables its env and headers reference
}

// Status describes every server in name order.
func (m *Manager) Status() []ServerStatus {
	out := make([]ServerStatus, 0, len(m.servers))
	for _, s := range m.servers {
		s.mu.Lock()
		st := ServerStatus{Name: s.cfg.Name, State: s.state, Error: s.lastErr, Starts: s.starts, EnvNames: s.cfg.References()}
		for _, t := range s.tools {
			st.Tools = append(st.Tools, toolName(s.cfg.Name, t.Name))
		}
		s.mu.Unlock()
		if s.cfg.HTTP() {
			st.Transport, st.Target = "http", redactURL(s.cfg.URL)
		} else {
			st.Transport, st.Target = "stdio", s.cfg.Command
		}
		out = append(out, st)
	}
	return out
}

// StderrBytes counts what stdio servers wrote to stderr (discarded, since
// it may hold secrets).
func (m *Manager) StderrBytes() int64 { return m.stderrBytes.Load() }

// Close stops every server: sessions are closed and each stdio server's
// process group is killed. Calls in flight fail; later calls return
// ErrClosed.
func (m *Manager) Close() {
	var wg sync.WaitGroup
	for _, s := range m.servers {
		wg.Go(s.stop)
	}
	wg.Wait()
}
