//go:build linux

package server

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/server/auth/authtest"
)

// shortData is a data folder whose socket path fits sun_path whatever the
// test's name.
func shortData(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "fl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// unixHTTP is an HTTP client that reaches path whatever the URL says.
func unixHTTP(path string) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}}}
}

func TestLocalEndpointSameUser(t *testing.T) {
	data := shortData(t)
	ts := newTestServer(t, Options{DataDir: data, Token: testToken})
	ts.writeGen(t, "c1", 4, 1)
	ep, err := ts.ServeLocal(t.Context(), data)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	if ep.Path != history.EndpointPath(data, os.Getpid()) {
		t.Fatalf("endpoint at %s, want %s", ep.Path, history.EndpointPath(data, os.Getpid()))
	}
	// The real modes: the socket 0600 in a 0700 folder.
	st, err := os.Stat(ep.Path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&os.ModeSocket == 0 || st.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, want a socket 0600", st.Mode())
	}
	if dt, _ := os.Stat(filepath.Dir(ep.Path)); dt.Mode().Perm() != 0o700 {
		t.Fatalf("folder mode %v, want 0700", dt.Mode().Perm())
	}

	// Same user: no token, no Host of the server's; the API answers.
	hc := unixHTTP(ep.Path)
	resp, err := hc.Get("http://folio/api/v2/conversations")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"c1"`) {
		t.Fatalf("list over the endpoint: %d %s", resp.StatusCode, body)
	}
	// And the WebSocket: hello, welcome, open, snapshot.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://folio/api/v2/ws", &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	for _, req := range []string{`{"type":"hello","id":"h","protocol":4}`, `{"type":"open","id":"o","conversation":"c1"}`} {
		if err := ws.Write(ctx, websocket.MessageText, []byte(req)); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{`"type":"welcome"`, `"type":"snapshot"`}
	for len(want) > 0 {
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), want[0]) {
			want = want[1:]
		}
	}

	// The TCP listener still wants its token: the local mark does not leak.
	resp, err = http.Get(ts.url + "/api/v2/conversations")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("TCP without token: %d, want 401", resp.StatusCode)
	}

	// Closing removes the socket.
	ep.Close()
	if _, err := os.Stat(ep.Path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket left after Close: %v", err)
	}
}

// TestLocalEndpointRefusesOtherUser runs the real SO_PEERCRED path and
// then tells the check that the peer is another user, since a test cannot
// switch users: the client gets a 403 naming both users, and nothing is
// served to it.
func TestLocalEndpointRefusesOtherUser(t *testing.T) {
	data := shortData(t)
	ts := newTestServer(t, Options{DataDir: data})
	var seen peerIdent
	other := func(p peerIdent, uid int) error {
		seen = p
		p.UID = uid + 1
		return checkPeer(p, uid)
	}
	ep, err := serveLocal(t.Context(), data, ts.Handler(), other)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	resp, err := unixHTTP(ep.Path).Get("http://folio/api/v2/conversations")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), `"peer-not-allowed"`) ||
		!strings.Contains(string(body), "serves only user") {
		t.Fatalf("another user: %d %s", resp.StatusCode, body)
	}
	// The credentials were the kernel's: this very process.
	if seen.PID != os.Getpid() || seen.UID != os.Getuid() {
		t.Fatalf("SO_PEERCRED gave %+v, want pid %d uid %d", seen, os.Getpid(), os.Getuid())
	}
}

func TestCheckPeer(t *testing.T) {
	if err := checkPeer(peerIdent{PID: 7, UID: 1000}, 1000); err != nil {
		t.Fatalf("same user refused: %v", err)
	}
	err := checkPeer(peerIdent{PID: 7, UID: 1001}, 1000)
	if !errors.Is(err, ErrPeerNotAllowed) || !strings.Contains(err.Error(), "process 7 runs as user 1001") {
		t.Fatalf("other user: %v", err)
	}
}

// A folder another program left wider than 0700 is tightened, and a dead
// process's socket is removed; a socket too long for sun_path is a clear
// error.
func TestLocalEndpointFolder(t *testing.T) {
	data := shortData(t)
	dir := history.EndpointsDir(data)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	dead := filepath.Join(dir, "999999999.sock")
	if err := os.WriteFile(dead, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ep, err := serveLocalHandler(t.Context(), data, http.NotFoundHandler())
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Fatalf("folder mode %v, want 0700", st.Mode().Perm())
	}
	if _, err := os.Stat(dead); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a dead process's socket stayed: %v", err)
	}

	long := filepath.Join(data, strings.Repeat("d", 100))
	if _, err := serveLocalHandler(t.Context(), long, http.NotFoundHandler()); err == nil || !strings.Contains(err.Error(), "shorter --data") {
		t.Fatalf("a path too long for a socket: %v", err)
	}
}

// With accounts on, a process of the operator's own user on the local
// endpoint (an attached terminal) sees every conversation, whoever owns it;
// the TCP listener still answers only a signed-in owner.
func TestLocalEndpointWithAccounts(t *testing.T) {
	data := shortData(t)
	as := startAccounts(t, Options{DataDir: data}, nil)
	as.writeGen(t, "c-gen00001", 4, 1)
	if err := as.owners().SetOwner("c-gen00001", authtest.AliceSubject); err != nil {
		t.Fatal(err)
	}
	ep, err := as.ServeLocal(t.Context(), data)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	hc := unixHTTP(ep.Path)
	for _, path := range []string{"/api/v2/conversations", "/api/v2/conversations/c-gen00001"} {
		resp, err := hc.Get("http://folio" + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), "c-gen00001") {
			t.Fatalf("GET %s over the endpoint: %d %s", path, resp.StatusCode, body)
		}
	}
	bob := as.signIn(t, authtest.BobSubject)
	if code, body := bob.do(t, "GET", "/api/v2/conversations/c-gen00001", ""); code != http.StatusNotFound {
		t.Fatalf("another person over TCP: %d %s", code, body)
	}
}
