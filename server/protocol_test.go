package server

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/foliodev/folio/history"
)

// TestMalformedFramesKeepTheConnection: every bad frame gets an error and
// the connection answers the next good frame.
func TestMalformedFramesKeepTheConnection(t *testing.T) {
	ts := newTestServer(t, Options{})
	c := ts.dialRaw(t)
	c.write([]byte(`{"type":"ping","id":"early"}`))
	if f := c.await(func(f frame) bool { return f.Re == "early" }); f.Code != "hello-required" {
		t.Fatalf("before hello: %s", f.raw)
	}
	if f := c.call(map[string]any{"type": "hello", "protocol": ProtocolVersion}); f.Type != "welcome" {
		t.Fatalf("hello: %s", f.raw)
	}
	cases := []struct {
		name, frame, code string
	}{
		{"not json", `{"type":`, "bad-request"},
		{"not an object", `[1,2]`, "bad-request"},
		{"no type", `{"id":"x"}`, "bad-request"},
		{"unknown type", `{"type":"launch","id":"x"}`, "unknown-type"},
		{"unknown member", `{"type":"ping","id":"x","extra":1}`, "bad-request"},
		{"wrong member type", `{"type":"page","id":"x","token":5}`, "bad-request"},
		{"bad conversation id", `{"type":"open","id":"x","conversation":"../../etc/passwd"}`, "invalid-id"},
		{"missing conversation", `{"type":"open","id":"x","conversation":"nope"}`, "not-found"},
		{"too large", `{"type":"ping","id":"x","pad":"` + strings.Repeat("a", maxFrame) + `"}`, "too-large"},
	}
	for _, tc := range cases {
		c.write([]byte(tc.frame))
		f := c.await(func(f frame) bool { return f.Type == "error" })
		if f.Code != tc.code {
			t.Errorf("%s: got %s", tc.name, f.raw[:min(200, len(f.raw))])
		}
		if p := c.call(map[string]any{"type": "ping"}); p.Type != "pong" {
			t.Fatalf("%s: connection unusable: %s", tc.name, p.raw)
		}
	}
	if err := c.ws.Write(c.ctx, websocket.MessageBinary, []byte{1, 2}); err != nil {
		t.Fatal(err)
	}
	if f := c.await(func(f frame) bool { return f.Type == "error" }); f.Code != "bad-request" {
		t.Fatalf("binary frame: %s", f.raw)
	}
	if p := c.call(map[string]any{"type": "ping"}); p.Type != "pong" {
		t.Fatal("connection unusable after a binary frame")
	}
}

func TestWrongProtocolVersionCloses(t *testing.T) {
	ts := newTestServer(t, Options{})
	c := ts.dialRaw(t)
	f := c.call(map[string]any{"type": "hello", "protocol": 1})
	if f.Code != "protocol-version" {
		t.Fatalf("hello v1: %s", f.raw)
	}
	for range c.frames {
	}
	if websocket.CloseStatus(c.err) != websocket.StatusPolicyViolation {
		t.Fatalf("close status: %v", c.err)
	}
}

func TestSecurity(t *testing.T) {
	if err := CheckAddr("0.0.0.0:7878", ""); !errors.Is(err, ErrNonLoopback) {
		t.Errorf("0.0.0.0 without token: %v", err)
	}
	if err := CheckAddr(":7878", ""); !errors.Is(err, ErrNonLoopback) {
		t.Errorf("all interfaces without token: %v", err)
	}
	for _, a := range []string{"127.0.0.1:7878", "[::1]:7878", "localhost:0"} {
		if err := CheckAddr(a, ""); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
	if err := CheckAddr("0.0.0.0:7878", "secret"); err != nil {
		t.Errorf("with token: %v", err)
	}

	ts := newTestServer(t, Options{Token: testToken})
	get := func(path, auth string) int {
		req, _ := http.NewRequest("GET", ts.url+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := get("/api/v2/conversations", ""); s != 401 {
		t.Errorf("no token: %d", s)
	}
	if s := get("/api/v2/conversations", "wrong"); s != 401 {
		t.Errorf("wrong token: %d", s)
	}
	if s := get("/api/v2/conversations", testToken); s != 200 {
		t.Errorf("right token: %d", s)
	}
	for _, p := range []string{"/api/v2/conversations/..%2F..%2Fetc", "/api/v2/conversations/.hidden", "/api/v2/conversations/a%00b"} {
		if s := get(p, testToken); s != 400 {
			t.Errorf("%s: %d, want 400", p, s)
		}
	}
	ctx := context.Background()
	wsURL := "ws" + strings.TrimPrefix(ts.url, "http") + "/api/v2/ws"
	if _, _, err := websocket.Dial(ctx, wsURL, nil); err == nil {
		t.Error("WebSocket without token accepted")
	}
	if _, _, err := websocket.Dial(ctx, wsURL+"?token="+testToken, nil); err == nil {
		t.Error("WebSocket with the token in the query accepted; only the header or subprotocol may carry it")
	}
	ws, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{Subprotocols: []string{Subprotocol, TokenSubprotocolPrefix + base64.RawURLEncoding.EncodeToString([]byte(testToken))}})
	if err != nil {
		t.Fatalf("WebSocket with token: %v", err)
	}
	ws.CloseNow()
	h := http.Header{"Origin": {"https://evil.example"}}
	h.Set("Authorization", "Bearer "+testToken)
	if _, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: h}); err == nil || resp.StatusCode != 403 {
		t.Error("cross-origin WebSocket accepted")
	}
	resp, err := http.Get(ts.url + "/")
	must(t, err)
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("app CSP: %q", csp)
	}
}

func TestConversationResources(t *testing.T) {
	ts := newTestServer(t, Options{Token: testToken})
	do := func(method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, ts.url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = io_copy(&b, resp)
		return resp.StatusCode, b.String()
	}
	s, body := do("POST", "/api/v2/conversations", `{"title":"First"}`)
	if s != 201 || !strings.Contains(body, `"title":"First"`) {
		t.Fatalf("create: %d %s", s, body)
	}
	id := between(body, `"id":"`, `"`)
	if s, body = do("PATCH", "/api/v2/conversations/"+id, `{"title":"Renamed"}`); s != 200 || !strings.Contains(body, `"title":"Renamed"`) {
		t.Fatalf("rename: %d %s", s, body)
	}
	if s, body = do("GET", "/api/v2/conversations", ""); s != 200 || !strings.Contains(body, `"title":"Renamed"`) {
		t.Fatalf("list: %d %s", s, body)
	}
	if s, body = do("GET", "/api/v2/conversations/"+id, ""); s != 200 || strings.Contains(body, "compactions") {
		t.Fatalf("metadata must not carry the graph: %d %s", s, body)
	}
	if s, body = do("GET", "/api/v2/conversations/"+id+"/graph", ""); s != 200 || !strings.Contains(body, `"compactions":[]`) {
		t.Fatalf("graph: %d %s", s, body)
	}
	if s, body = do("POST", "/api/v2/conversations/"+id+"/attachments?name=notes.txt", "hello"); s != 201 || !strings.Contains(body, `"size":5`) {
		t.Fatalf("upload: %d %s", s, body)
	}
	if s, _ = do("PATCH", "/api/v2/conversations/"+id, `{"title":"x","extra":1}`); s != 400 {
		t.Fatalf("unknown member: %d", s)
	}
	if s, _ = do("PATCH", "/api/v2/conversations/"+id, `{"title":"`+strings.Repeat("x", maxJSONBody)+`"}`); s != 413 {
		t.Fatalf("oversized body: %d", s)
	}
	c := ts.dial(t)
	c.open(id)
	if s, _ = do("DELETE", "/api/v2/conversations/"+id, ""); s != 204 {
		t.Fatalf("delete: %d", s)
	}
	c.event("deleted")
	if s, _ = do("GET", "/api/v2/conversations/"+id, ""); s != 404 {
		t.Fatalf("after delete: %d", s)
	}
}

func between(s, a, b string) string {
	i := strings.Index(s, a)
	if i < 0 {
		return ""
	}
	s = s[i+len(a):]
	return s[:strings.Index(s, b)]
}

// TestRenameRespectsTheWriterLock: while another writer holds the log's
// lock, a rename is refused instead of interleaving writes.
func TestRenameRespectsTheWriterLock(t *testing.T) {
	ts := newTestServer(t, Options{})
	path := ts.writeGen(t, "c", 20, 1)
	l, err := history.Open(path)
	must(t, err)
	req, _ := http.NewRequest("PATCH", ts.url+"/api/v2/conversations/c", strings.NewReader(`{"title":"x"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("rename under another writer's lock: %d", resp.StatusCode)
	}
	must(t, l.Close())
	req, _ = http.NewRequest("PATCH", ts.url+"/api/v2/conversations/c", strings.NewReader(`{"title":"x"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("rename after the lock was released: %d", resp.StatusCode)
	}
}
