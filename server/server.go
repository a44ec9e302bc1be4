package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/server/auth"
)

// ProtocolVersion is the protocol this server speaks (docs/protocol.md).
const ProtocolVersion = 4

// Options configure a Server.
type Options struct {
	// DataDir is folio's data folder; logs are in DataDir/conversations.
	DataDir string
	// Token, when set, is required on every API request and WebSocket
	// upgrade (see admit.go); it must pass CheckToken. Required to listen
	// on a non-loopback address. folio serve makes one per launch.
	Token string
	// Auth, when set, signs people in through OpenID Connect (package
	// auth): every API request and WebSocket needs a session instead of
	// Token, which must then be empty.
	Auth *auth.Auth
	// AllowedHosts are extra names (or name:port) the Host header may
	// carry besides the bound address, localhost, 127.0.0.1 and [::1].
	AllowedHosts []string
	// Turns, when set, has the server run real turns: one engine.Engine
	// per conversation, built from these options (turns.go).
	Turns *TurnsOptions
	// Engine, instead of Turns, runs commands elsewhere. Without either,
	// commands are rejected with engine-unavailable and the server is a
	// reader of the logs.
	Engine Engine
	// App serves the web app (package webui's handler). Without one, a
	// placeholder page is served.
	App http.Handler
	// TempDir is where the server makes its snapshot folder (default
	// os.TempDir()).
	TempDir string
	// FollowInterval is the follower's tick per open conversation (default
	// 250ms).
	FollowInterval time.Duration
	// Snapshots is the per-connection LRU size (default 4).
	Snapshots int
	// Logger receives operational messages (never payloads).
	Logger *slog.Logger
	// Replica, when set, keeps the conversations in a database several
	// servers share; DataDir then holds this server's copies (replica.go).
	Replica Replica
	// DialOwner, when set, reaches a conversation another folio process
	// of this user owns (a terminal chat) through that process's local
	// endpoint: commands are forwarded to it and its live state relayed,
	// instead of refused as locked (remote_owner.go). server/client's
	// DialOwner is one.
	DialOwner DialOwner
}

// Server serves folio's HTTP API, WebSocket protocol and web app.
type Server struct {
	opts     Options
	snapRoot string // the server's folder: its lock and snapDir
	snapDir  string
	snapLock func() error  // held while the server lives; see snapdir.go
	slots    chan struct{} // one per open WebSocket, at most maxConns
	done     chan struct{}
	closeMu  sync.Once
	closeMu2 sync.Once // releases snapLock

	mu    sync.Mutex
	convs map[string]*conversation
	// convIdle is how long an unfollowed conversation stays (convIdle;
	// tests set 0 to evict at once).
	convIdle time.Duration
	conns    map[*conn]struct{}
	tokens   map[string]*conn // every live snapshot token → its connection

	metaCache  metaCache
	fileOwners *fileOwners   // owners on the file store (owners.go)
	artifacts  artifactCache // final artifacts found in logs (artifacts.go)

	onConnClosed func(websocket.StatusCode) // test hook: a connection finished releasing, with the code it was closed with; guarded by mu

	// eng runs commands: the server's own engines (turnsEngine) when
	// turns is set, else Options.Engine.
	eng   Engine
	turns *turnHost // from Options.Turns; nil when commands run elsewhere
	// enginesClosed: closeEngines began, no engine opens any more; guarded
	// by mu. stopJanitor stops closing idle engines.
	enginesClosed bool
	stopJanitor   chan struct{}

	fwd forwards     // commands crossing replicas (replica.go)
	rep replicaParts // opts.Replica by job; every part nil on a single server

	// relayed: the turn, queue and approvals other replicas' engines
	// relayed (replica_live.go).
	relayed relayedStates

	// remotes are the conversations attached to another process's
	// engine (remote_owner.go); guarded by mu.
	remotes map[string]*remoteOwner
}

// New makes a server and its private snapshot folder. Close removes it.
func New(opts Options) (*Server, error) {
	if opts.DataDir == "" {
		return nil, errors.New("server: no data folder")
	}
	if opts.FollowInterval <= 0 {
		opts.FollowInterval = 250 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Token != "" && opts.Auth != nil {
		return nil, errors.New("server: both a token and sign-in (Auth) are set; sign-in replaces the token")
	}
	if opts.Token != "" {
		if err := CheckToken(opts.Token); err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
	}
	if err := os.MkdirAll(filepath.Join(opts.DataDir, "conversations"), 0o700); err != nil {
		return nil, fmt.Errorf("server: data folder: %w", err)
	}
	var t *turnHost
	if opts.Turns != nil {
		if opts.Engine != nil {
			return nil, errors.New("server: both Turns and Engine are set")
		}
		var err error
		if t, err = newTurnHost(*opts.Turns); err != nil {
			return nil, err
		}
	}
	removeDeadSnapshotDirs(opts.TempDir, opts.Logger)
	dir, unlock, err := makeSnapshotDir(opts.TempDir)
	if err != nil {
		return nil, fmt.Errorf("server: snapshot folder: %w", err)
	}
	s := &Server{
		opts:       opts,
		fileOwners: newFileOwners(filepath.Join(opts.DataDir, "owners")),
		snapRoot:   dir,
		snapDir:    filepath.Join(dir, "snapshots"),
		snapLock:   unlock,
		slots:      make(chan struct{}, maxConns),
		done:       make(chan struct{}),
		convs:      map[string]*conversation{},
		convIdle:   convIdle,
		conns:      map[*conn]struct{}{},
		tokens:     map[string]*conn{},
		rep:        partsOf(opts.Replica),
	}
	s.eng = opts.Engine
	if opts.Turns != nil {
		s.turns, s.eng, s.stopJanitor = t, turnsEngine{s}, make(chan struct{})
		go s.janitor(s.stopJanitor)
	}
	s.bindReplica()
	s.watchSessionEnds() // accounts.go
	return s, nil
}

// Close closes the server's engines (Options.Turns), disconnects every
// client, releases every snapshot and removes the snapshot folder.
func (s *Server) Close() error {
	// Engines first: a running turn stops and is saved, its last events go
	// out, and every log's lock is released.
	if s.turns != nil {
		if err := s.closeEngines(); err != nil {
			s.opts.Logger.Error("closing engines", "err", err)
		}
	}
	s.closeMu.Do(func() { close(s.done) })
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.close(1001, "server shutting down")
	}
	s.mu.Lock()
	for _, cv := range s.convs {
		cv.mu.Lock()
		if cv.f != nil {
			cv.f.Close()
			cv.f = nil
		}
		cv.mu.Unlock()
	}
	s.mu.Unlock()
	err := os.RemoveAll(s.snapRoot)
	s.closeMu2.Do(func() { s.snapLock() })
	return err
}

// CheckAddr refuses a listen address that is not loopback unless a token is
// set.
func CheckAddr(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if token != "" {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%w: %q", ErrNonLoopback, addr)
	}
	return nil
}

// ListenAndServe serves on addr until ctx ends.
func (s *Server) ListenAndServe(ctx context.Context, addr string, ready func(net.Addr)) error {
	if s.opts.Auth == nil {
		if err := CheckAddr(addr, s.opts.Token); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10}
	if ready != nil {
		ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Close()
		hs.Shutdown(sctx)
		return nil
	case err := <-errc:
		s.Close()
		return err
	}
}

// Handler is the server's whole HTTP surface.
func (s *Server) Handler() http.Handler {
	api := http.NewServeMux()
	api.HandleFunc("GET /api/v2/conversations", s.listConversations)
	api.HandleFunc("POST /api/v2/conversations", s.createConversation)
	api.HandleFunc("GET /api/v2/models", s.listModels)
	api.HandleFunc("GET /api/v2/search", s.searchConversations)
	api.HandleFunc("GET /api/v2/workspace", s.getWorkspace)
	// Every route naming a conversation answers only whom it belongs to
	// (owners.go).
	for pattern, h := range map[string]http.HandlerFunc{
		"GET /api/v2/conversations/{id}":                   s.getConversation,
		"PATCH /api/v2/conversations/{id}":                 s.renameConversation,
		"DELETE /api/v2/conversations/{id}":                s.deleteConversation,
		"GET /api/v2/conversations/{id}/graph":             s.getGraph,
		"POST /api/v2/conversations/{id}/attachments":      s.uploadAttachment,
		"GET /api/v2/conversations/{id}/commands/{cmd}":    s.getReceipt,
		"GET /api/v2/conversations/{id}/artifacts/{ref}":   s.readArtifact,
		"PUT /api/v2/conversations/{id}/owner":             s.setOwner,
		"POST /api/v2/conversations/{id}/shares":           s.createShare,
		"GET /api/v2/conversations/{id}/shares":            s.listShares,
		"DELETE /api/v2/conversations/{id}/shares/{share}": s.revokeShare,
	} {
		api.HandleFunc(pattern, s.owned(h))
	}
	api.HandleFunc("GET /api/v2/ws", s.serveWS)
	api.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		httpError(w, http.StatusNotFound, "not-found", "no such resource: "+r.Method+" "+clip(r.URL.Path))
	})

	mux := http.NewServeMux()
	mux.Handle("/api/", s.authorize(api))
	app := s.opts.App
	if app == nil {
		app = placeholder()
	}
	if s.opts.Auth != nil {
		mux.Handle("/auth/", s.opts.Auth.Handler())
		app = s.signInFirst(app)
	}
	mux.Handle("/", app)
	return s.admit(mux)
}

// logPath is the log of conversation id, found by history's one rule
// (history.Locate): folio's conversations/<id>.jsonl, else Jazz's
// conversations/<agentId>/<id>.jsonl, else where a new log would go. The id
// must have passed validConversationID, which admits only names
// history.Path accepts; any other gives "", which names no file.
//
// On a replica, it first brings the copy up to date (syncCopy).
func (s *Server) logPath(id string) string {
	s.syncCopy(id)
	return s.localPath(id)
}

// localPath is logPath without syncing a replica's copy.
func (s *Server) localPath(id string) string {
	p, err := history.Locate(s.opts.DataDir, id)
	if err != nil {
		return ""
	}
	return p
}

// Publish delivers a live change of a conversation from an in-process
// producer (the engine) to every connection following it, after the
// reconciliation rules (see docs/protocol.md). A change that would move a
// client backwards is dropped, not an error.
func (s *Server) Publish(conversation string, ch Change) error {
	if err := validConversationID(conversation); err != nil {
		return err
	}
	return s.conv(conversation).publish(ch)
}
