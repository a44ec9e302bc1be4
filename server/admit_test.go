package server

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/foliodev/folio/history"
)

// tree lists every file under dir with its size and modification time, to
// show that a refused request wrote nothing.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	must(t, err)
	return b.String()
}

type attack struct {
	name   string
	method string
	path   string
	header map[string]string
	body   string
	status int
}

// TestAdmissionRefusesAttacks sends what a hostile page (or a rebinding
// DNS name) could send. Each is refused with a JSON error before any
// handler runs, and the data folder is byte-for-byte as it was.
func TestAdmissionRefusesAttacks(t *testing.T) {
	ts := newTestServer(t, Options{Token: testToken})
	ts.writeGen(t, "c", 20, 1)
	port := ts.url[strings.LastIndex(ts.url, ":")+1:]
	self := "http://127.0.0.1:" + port
	bearer := "Bearer " + testToken
	json := "application/json"
	ws := map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	cases := []attack{
		{"foreign Host on the API", "GET", "/api/v2/conversations", map[string]string{"Host": "attacker.example:" + port, "Authorization": bearer}, "", 421},
		{"foreign Host on the app", "GET", "/", map[string]string{"Host": "attacker.example:" + port}, "", 421},
		{"foreign Host on a create", "POST", "/api/v2/conversations", map[string]string{"Host": "attacker.example:" + port, "Authorization": bearer, "Content-Type": json}, "{}", 421},
		{"loopback name on another port", "GET", "/api/v2/conversations", map[string]string{"Host": "localhost:1", "Authorization": bearer}, "", 421},
		{"foreign Host on the WebSocket", "GET", "/api/v2/ws", with(ws, "Host", "attacker.example:"+port, "Origin", "http://attacker.example:"+port, "Authorization", bearer), "", 421},
		{"foreign Origin on the WebSocket", "GET", "/api/v2/ws", with(ws, "Origin", "http://evil.example", "Authorization", bearer), "", 403},
		{"foreign Origin on POST", "POST", "/api/v2/conversations", map[string]string{"Origin": "http://evil.example", "Authorization": bearer, "Content-Type": json}, "{}", 403},
		{"foreign Origin on PATCH", "PATCH", "/api/v2/conversations/c", map[string]string{"Origin": "http://evil.example", "Authorization": bearer, "Content-Type": json}, `{"title":"x"}`, 403},
		{"foreign Origin on DELETE", "DELETE", "/api/v2/conversations/c", map[string]string{"Origin": "http://evil.example", "Authorization": bearer}, "", 403},
		{"foreign Origin on an upload", "POST", "/api/v2/conversations/c/attachments?name=a", map[string]string{"Origin": "http://evil.example", "Authorization": bearer}, "x", 403},
		{"null Origin", "POST", "/api/v2/conversations", map[string]string{"Origin": "null", "Authorization": bearer, "Content-Type": json}, "{}", 403},
		{"same host, other port Origin", "DELETE", "/api/v2/conversations/c", map[string]string{"Origin": "http://127.0.0.1:1", "Authorization": bearer}, "", 403},
		{"text/plain post", "POST", "/api/v2/conversations", map[string]string{"Origin": self, "Authorization": bearer, "Content-Type": "text/plain"}, `{"title":"x"}`, 415},
		{"form post", "POST", "/api/v2/conversations", map[string]string{"Origin": self, "Authorization": bearer, "Content-Type": "application/x-www-form-urlencoded"}, "title=x", 415},
		{"multipart rename", "PATCH", "/api/v2/conversations/c", map[string]string{"Authorization": bearer, "Content-Type": "multipart/form-data; boundary=x"}, "--x--", 415},
		{"post without a type", "POST", "/api/v2/conversations", map[string]string{"Authorization": bearer}, "", 415},
		{"no token", "GET", "/api/v2/conversations", nil, "", 401},
		{"no token on a create", "POST", "/api/v2/conversations", map[string]string{"Content-Type": json}, "{}", 401},
		{"no token on an upload", "POST", "/api/v2/conversations/c/attachments?name=a", nil, "x", 401},
		{"no token on DELETE", "DELETE", "/api/v2/conversations/c", nil, "", 401},
		{"wrong token", "GET", "/api/v2/conversations", map[string]string{"Authorization": "Bearer " + strings.Repeat("x", len(testToken))}, "", 401},
		{"token without Bearer", "GET", "/api/v2/conversations", map[string]string{"Authorization": testToken}, "", 401},
		{"token as Basic", "GET", "/api/v2/conversations", map[string]string{"Authorization": "Basic " + testToken}, "", 401},
		{"token in the query", "GET", "/api/v2/conversations?token=" + testToken, nil, "", 401},
		{"WebSocket without a token", "GET", "/api/v2/ws", ws, "", 401},
		{"WebSocket with a wrong token", "GET", "/api/v2/ws", with(ws, "Sec-WebSocket-Protocol", Subprotocol+", "+TokenSubprotocolPrefix+base64.RawURLEncoding.EncodeToString([]byte("wrong-token-0123456789"))), "", 401},
		{"WebSocket with the token in the query", "GET", "/api/v2/ws?token=" + testToken, ws, "", 401},
	}
	hc := http.DefaultClient
	before := tree(t, ts.data)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, ts.url+tc.path, strings.NewReader(tc.body))
			must(t, err)
			for k, v := range tc.header {
				if k == "Host" {
					req.Host = v
				} else {
					req.Header.Set(k, v)
				}
			}
			resp, err := hc.Do(req)
			must(t, err)
			if resp.StatusCode == http.StatusSwitchingProtocols {
				resp.Body.Close()
				t.Fatal("upgraded")
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, b)
			}
			if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || !strings.Contains(string(b), `"error":{"code":"`) {
				t.Fatalf("not a JSON error: %q %s", resp.Header.Get("Content-Type"), b)
			}
		})
	}
	if after := tree(t, ts.data); after != before {
		t.Fatalf("a refused request changed the data folder:\nbefore\n%s\nafter\n%s", before, after)
	}
}

// TestAdmissionAllows: what the app, curl and a named host send is let in.
func TestAdmissionAllows(t *testing.T) {
	ts := newTestServer(t, Options{Token: testToken, AllowedHosts: []string{"folio.lan", "proxy.example:8443"}})
	port := ts.url[strings.LastIndex(ts.url, ":")+1:]
	for _, tc := range []struct{ host, origin string }{
		{"127.0.0.1:" + port, ""},
		{"127.0.0.1:" + port, "http://127.0.0.1:" + port},
		{"localhost:" + port, "http://localhost:" + port},
		{"LOCALHOST:" + port, ""},
		{"[::1]:" + port, "http://[::1]:" + port},
		{"folio.lan:" + port, "http://folio.lan:" + port},
		{"proxy.example:8443", "https://proxy.example:8443"},
	} {
		req, _ := http.NewRequest("POST", ts.url+"/api/v2/conversations", strings.NewReader(`{}`))
		req.Host = tc.host
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Errorf("Host %s Origin %q: %d", tc.host, tc.origin, resp.StatusCode)
		}
	}
	for _, h := range []string{"folio.lan:1", "proxy.example:" + port, "evil.folio.lan:" + port} {
		req, _ := http.NewRequest("GET", ts.url+"/api/v2/conversations", nil)
		req.Host = h
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("Host %s: %d, want 421", h, resp.StatusCode)
		}
	}
}

// TestUploadsNeedTheToken: a server without a token takes no uploads, since
// an upload's body may be of any type, which a form can send.
func TestUploadsNeedTheToken(t *testing.T) {
	ts := newTestServer(t, Options{})
	ts.writeGen(t, "c", 5, 1)
	before := tree(t, ts.data)
	resp, err := http.Post(ts.url+"/api/v2/conversations/c/attachments?name=a", "text/plain", strings.NewReader("x"))
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("upload without a token: %d", resp.StatusCode)
	}
	if tree(t, ts.data) != before {
		t.Fatal("the refused upload wrote to the data folder")
	}
}

func TestCheckToken(t *testing.T) {
	for _, tok := range []string{"", " ", strings.Repeat(" ", 20), "\t\n\u00a0\u2003 \t\n \t\n \t\n \t", "short", strings.Repeat("x", minTokenLen-1)} {
		if err := CheckToken(tok); !errors.Is(err, ErrWeakToken) {
			t.Errorf("%q accepted: %v", tok, err)
		}
		if tok != "" {
			if _, err := New(Options{DataDir: t.TempDir(), TempDir: t.TempDir(), Token: tok}); !errors.Is(err, ErrWeakToken) {
				t.Errorf("New with %q: %v", tok, err)
			}
		}
	}
	for _, tok := range []string{strings.Repeat("x", minTokenLen), NewToken()} {
		if err := CheckToken(tok); err != nil {
			t.Errorf("%q refused: %v", tok, err)
		}
	}
	if a, b := NewToken(), NewToken(); a == b || len(a) < 32 {
		t.Errorf("tokens %q %q", a, b)
	}
}

// TestDeleteTakesTheWriterLock: while another writer holds the log, DELETE
// is refused with 409 locked (naming no path) and the log stays; once the
// writer lets go, DELETE works.
func TestDeleteTakesTheWriterLock(t *testing.T) {
	ts := newTestServer(t, Options{})
	p := ts.writeGen(t, "c", 20, 1)
	l, err := history.Open(p)
	must(t, err)
	del := func() (int, string) {
		req, _ := http.NewRequest("DELETE", ts.url+"/api/v2/conversations/c", nil)
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	before := tree(t, ts.data)
	status, body := del()
	if status != http.StatusConflict || !strings.Contains(body, `"code":"locked"`) {
		t.Fatalf("delete under another writer's lock: %d %s", status, body)
	}
	if strings.Contains(body, ts.data) || strings.Contains(body, "/conversations/") {
		t.Fatalf("the refusal names a path: %s", body)
	}
	if tree(t, ts.data) != before {
		t.Fatal("the refused delete changed the data folder")
	}
	must(t, l.Close())
	if status, body = del(); status != http.StatusNoContent {
		t.Fatalf("delete after the writer let go: %d %s", status, body)
	}
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("log still there: %v", err)
	}
}

func TestClientTextHasNoPaths(t *testing.T) {
	for in, want := range map[string]string{
		"/home/u/.local/share/folio/conversations/c.jsonl is being written by folio process 7": "c.jsonl is being written by folio process 7",
		`open "/tmp/x/folio-serve-1/snapshots/s-1": no such file`:                              `open "s-1": no such file`,
		"read C:\\Users\\u\\folio\\c.jsonl: denied":                                            "read c.jsonl: denied",
		"no such resource: GET /api/v2/nope":                                                   "no such resource: GET /api/v2/nope",
		"a/b and 1/2 stay":                                                                     "a/b and 1/2 stay",
	} {
		if got := clientText(in); got != want {
			t.Errorf("clientText(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestConnectionLimitUnderConcurrentUpgrades: 700 upgrades at once; exactly
// maxConns are accepted and held, the rest refused with 503, and the
// server never holds more than maxConns connections.
func TestConnectionLimitUnderConcurrentUpgrades(t *testing.T) {
	if testing.Short() {
		t.Skip("700 connections")
	}
	ts := newTestServer(t, Options{})
	const n = 700
	wsURL := "ws" + strings.TrimPrefix(ts.url, "http") + "/api/v2/ws"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		ok, busy int
		other    []string
		conns    []*websocket.Conn
	)
	start := make(chan struct{})
	tr := &http.Transport{MaxConnsPerHost: 0, MaxIdleConns: 0, DisableKeepAlives: true}
	hc := &http.Client{Transport: tr}
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			c, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPClient: hc})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
				conns = append(conns, c)
			case resp != nil && resp.StatusCode == http.StatusServiceUnavailable:
				busy++
			default:
				other = append(other, fmt.Sprint(err))
			}
		}()
	}
	close(start)
	wg.Wait()
	ts.mu.Lock()
	held := len(ts.conns)
	ts.mu.Unlock()
	for _, c := range conns {
		c.CloseNow()
	}
	if len(other) > 0 {
		t.Fatalf("%d upgrades failed otherwise, e.g. %s", len(other), other[0])
	}
	if ok != maxConns || busy != n-maxConns || held > maxConns {
		t.Fatalf("accepted %d, refused %d, server holds %d; want %d, %d, at most %d", ok, busy, held, maxConns, n-maxConns, maxConns)
	}
}

// TestDeadServersSnapshotFoldersRemoved kills a server with SIGKILL (a child
// process running this test binary) and starts another on the same
// temporary folder: the dead one's folder is gone, a live one's stays.
func TestDeadServersSnapshotFoldersRemoved(t *testing.T) {
	if os.Getenv("FOLIO_TEST_SNAPSHOT_CHILD") != "" {
		s, err := New(Options{DataDir: os.Getenv("FOLIO_TEST_DATA"), TempDir: os.Getenv("FOLIO_TEST_TMP")})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		must(t, os.WriteFile(filepath.Join(s.SnapshotDir(), "s-1"), []byte("snapshot"), 0o600))
		fmt.Println("ready", s.snapRoot)
		select {} // until killed
	}
	tmp, data := t.TempDir(), t.TempDir()
	live := newTestServer(t, Options{TempDir: tmp})
	cmd := exec.Command(os.Args[0], "-test.run=^TestDeadServersSnapshotFoldersRemoved$")
	cmd.Env = append(os.Environ(), "FOLIO_TEST_SNAPSHOT_CHILD=1", "FOLIO_TEST_DATA="+data, "FOLIO_TEST_TMP="+tmp)
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	var line string
	buf := make([]byte, 4096)
	for !strings.Contains(line, "\n") {
		n, err := out.Read(buf)
		if err != nil {
			t.Fatalf("child: %v (%q)", err, line)
		}
		line += string(buf[:n])
	}
	dead, ok := strings.CutPrefix(strings.TrimSpace(line), "ready ")
	if !ok {
		t.Fatalf("child said %q", line)
	}
	// While the child lives, a new server leaves its folder alone.
	s2, err := New(Options{DataDir: data, TempDir: tmp})
	must(t, err)
	if _, err := os.Stat(dead); err != nil {
		t.Fatalf("a live server's folder was removed: %v", err)
	}
	must(t, s2.Close())
	must(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	if _, err := os.Stat(dead); err != nil {
		t.Fatalf("the killed server's folder should still be there before the next start: %v", err)
	}
	s3, err := New(Options{DataDir: data, TempDir: tmp})
	must(t, err)
	defer s3.Close()
	if _, err := os.Stat(dead); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the killed server's snapshot folder survived the next start: %v", err)
	}
	if _, err := os.Stat(live.SnapshotDir()); err != nil {
		t.Fatalf("the live server's folder was removed: %v", err)
	}
	des, _ := os.ReadDir(tmp)
	if len(des) != 2 { // live's and s3's
		var names []string
		for _, d := range des {
			names = append(names, d.Name())
		}
		t.Fatalf("folders left: %v", names)
	}
}
