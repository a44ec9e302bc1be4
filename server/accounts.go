package server

import (
	"context"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/foliodev/folio/server/auth"
)

// Accounts: with Options.Auth, a request is someone's. signedIn admits an
// API request only with a session (and a write or WebSocket upgrade only
// with the session's CSRF token or the server's own Origin), and puts the
// person in the request's context for the ownership checks (owners.go).

type identityKey struct{}

// identityOf is the person a request was admitted for; ok is false on a
// server without accounts.
func identityOf(ctx context.Context) (auth.Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(auth.Identity)
	return id, ok
}

func withIdentity(ctx context.Context, id auth.Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// signedIn checks the request's session; on refusal it has answered.
func (s *Server) signedIn(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if t := requestShareToken(r); t != "" {
		return s.viaShare(w, r, t)
	}
	id, sess, err := s.opts.Auth.Identify(r)
	if err != nil {
		if !auth.IsNoSession(err) {
			s.opts.Logger.Error("cannot read a session", "err", err)
			httpError(w, http.StatusServiceUnavailable, "unavailable", "sessions cannot be read just now; try again")
			return r, false
		}
		httpError(w, http.StatusUnauthorized, "sign-in-required", "sign in first: "+auth.LoginPath)
		return r, false
	}
	if (stateChanging(r.Method) || isUpgrade(r)) && !auth.WriteAllowed(r, sess) {
		httpError(w, http.StatusForbidden, "csrf", "a write needs the session's CSRF token in "+auth.CSRFHeader)
		return r, false
	}
	return r.WithContext(withIdentity(r.Context(), id)), true
}

// signInFirst sends a browser that opens the app without a session to
// sign in, and back to where it was going.
func (s *Server) signInFirst(app http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/" {
			if _, _, err := s.opts.Auth.Identify(r); err != nil {
				w.Header().Set("Cache-Control", "no-store")
				http.Redirect(w, r, auth.LoginPath+"?return="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
		}
		app.ServeHTTP(w, r)
	})
}

// Sign-out closes the person's WebSockets. A connection admitted with a
// session is closed with closeSessionEnded (reason "sign-in-required")
// when that session ends: at once when the store tells (a sign-out or a
// rotation on this replica, or on any replica of a PostgreSQL store), at
// its expiry, and otherwise at the next recheck (another process sharing
// a file store's data folder).
const closeSessionEnded websocket.StatusCode = 4401

// sessionRecheck is how often an open connection's session is read again,
// in nanoseconds (30 s; tests shorten it while other tests' connections
// read it, hence atomic).
var sessionRecheck atomic.Int64

func init() { sessionRecheck.Store(int64(30 * time.Second)) }

// watchSessionEnds has the store tell this server about ended sessions.
func (s *Server) watchSessionEnds() {
	if s.opts.Auth != nil {
		s.opts.Auth.OnEnded(s.sessionEnded)
	}
}

// sessionEnded closes the connections admitted with session key.
func (s *Server) sessionEnded(key string) {
	s.mu.Lock()
	var ended []*conn
	for c := range s.conns {
		if id, ok := identityOf(c.person()); ok && id.Session == key {
			ended = append(ended, c)
		}
	}
	s.mu.Unlock()
	for _, c := range ended {
		go c.close(closeSessionEnded, "sign-in-required")
	}
}

// watchSession closes c when its session expires or is found ended.
func (c *conn) watchSession() {
	id, ok := identityOf(c.person())
	if !ok || id.Session == "" || c.srv.opts.Auth == nil {
		return
	}
	for {
		wait := min(time.Duration(sessionRecheck.Load()), time.Until(id.Expires))
		t := time.NewTimer(max(wait, 0))
		select {
		case <-c.closed:
			t.Stop()
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := c.srv.opts.Auth.Check(ctx, id.Session)
		cancel()
		if auth.IsNoSession(err) {
			c.close(closeSessionEnded, "sign-in-required")
			return
		}
	}
}
