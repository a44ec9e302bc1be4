package server

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/foliodev/folio/server/auth"
	"github.com/foliodev/folio/server/auth/authtest"
)

// closedWith waits until c's connection is closed and returns its close
// status and reason.
func closedWith(t *testing.T, c *client) (websocket.StatusCode, string) {
	t.Helper()
	guard := time.After(20 * time.Second) // a hang guard, not a measure
	for {
		select {
		case _, ok := <-c.frames:
			if !ok {
				var ce websocket.CloseError
				if errors.As(c.err, &ce) {
					return ce.Code, ce.Reason
				}
				return -1, ""
			}
		case <-guard:
			t.Fatal("the connection was never closed")
		}
	}
}

// stillOpen fails unless c answers a ping.
func stillOpen(t *testing.T, c *client, who string) {
	t.Helper()
	if f := c.call(map[string]any{"type": "ping"}); f.Type != "pong" {
		t.Fatalf("%s's connection: %s", who, f.raw)
	}
}

// TestSignOutClosesTheWebSockets: signing out closes every WebSocket of
// that session with 4401 "sign-in-required" at once; another person's
// connection, and the same person's other session, stay open.
func TestSignOutClosesTheWebSockets(t *testing.T) {
	as := startAccounts(t, Options{}, nil)
	alice, alice2, bob := as.signIn(t, authtest.AliceSubject), as.signIn(t, authtest.AliceSubject), as.signIn(t, authtest.BobSubject)
	a1, a2 := as.dialAs(t, alice), as.dialAs(t, alice)
	other, b := as.dialAs(t, alice2), as.dialAs(t, bob)
	stillOpen(t, a1, "alice")
	if code, _ := alice.do(t, "POST", auth.LogoutPath, ""); code != 200 {
		t.Fatalf("sign-out: %d", code)
	}
	for _, c := range []*client{a1, a2} {
		if code, reason := closedWith(t, c); code != closeSessionEnded || reason != "sign-in-required" {
			t.Fatalf("alice's socket closed with %d %q, want %d sign-in-required", code, reason, closeSessionEnded)
		}
	}
	stillOpen(t, other, "alice's other session")
	stillOpen(t, b, "bob")
}

// TestEndedSessionFoundByRecheck: a session ended where this server is not
// told (another process sharing the data folder removed its file) closes
// its sockets at the next recheck; an expired one at its expiry.
func TestEndedSessionFoundByRecheck(t *testing.T) {
	defer sessionRecheck.Store(sessionRecheck.Load())
	sessionRecheck.Store(int64(50 * time.Millisecond))
	data := t.TempDir()
	fs, err := auth.NewFileStore(filepath.Join(data, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	as := startAccounts(t, Options{DataDir: data}, fs)
	alice, bob := as.signIn(t, authtest.AliceSubject), as.signIn(t, authtest.BobSubject)
	a, b := as.dialAs(t, alice), as.dialAs(t, bob)
	// Another process's sign-out: the file goes, nobody tells this server.
	ents, _ := os.ReadDir(filepath.Join(data, "sessions"))
	sum := sha256.Sum256([]byte(cookie(alice.c, as.url, auth.SessionCookie)))
	key := hex.EncodeToString(sum[:]) // the store's key of the cookie
	found := false
	for _, e := range ents {
		if e.Name() == key+".json" {
			found = true
		}
	}
	if !found {
		t.Fatalf("alice's session file %s.json is not in the folder", key)
	}
	if err := os.Remove(filepath.Join(data, "sessions", key+".json")); err != nil {
		t.Fatal(err)
	}
	if code, reason := closedWith(t, a); code != closeSessionEnded || reason != "sign-in-required" {
		t.Fatalf("alice's socket closed with %d %q", code, reason)
	}
	stillOpen(t, b, "bob")
}
