//go:build linux

package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/foliodev/folio/server"
	"github.com/foliodev/folio/server/pager"
)

// slowReaderRSSBound is what the server may reach, at its peak, while a
// client that reads nothing asks for 1,100 pages at the largest budget.
// Before the outgoing queue was bounded in bytes the same probe took the
// server to 3.5 GB.
const slowReaderRSSBound = 200 << 20

// slowReaderGrowthBound is what those requests may add to the peak the
// server reached opening the conversation.
const slowReaderGrowthBound = 64 << 20

// A client asks a real "folio serve" for 1,100 pages of 4 MiB and reads
// none of them: the server closes it with 4008 once its queue passes the
// byte bound, and its resident memory stays bounded. The peak (VmHWM) is
// read from /proc and logged with the baseline; run with -v to see it.
func TestSlowReaderKeepsServerRSSBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds folio and serves a 5 MB conversation")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	log := filepath.Join(data, "conversations", "big.jsonl")
	must(t, os.MkdirAll(filepath.Dir(log), 0o700))
	bin := buildFolio(t)
	if out, err := exec.Command(bin, "gen", "--messages", "12000", "--seed", "7", "--id", "big", "--out", log).CombinedOutput(); err != nil {
		t.Fatalf("gen: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, addr, token := startServe(t, ctx, bin, data)
	pid := srv.Process.Pid
	base := procKB(t, pid, "VmRSS")

	ws, _, err := websocket.Dial(ctx, "ws://"+addr+"/api/v2/ws", &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	must(t, err)
	defer ws.CloseNow()
	ws.SetReadLimit(64 << 20)
	write := func(v any) error {
		b, _ := json.Marshal(v)
		return ws.Write(ctx, websocket.MessageText, b)
	}
	must(t, write(map[string]any{"type": "hello", "id": "h", "protocol": server.ProtocolVersion}))
	must(t, write(map[string]any{"type": "open", "id": "o", "conversation": "big"}))
	var snap struct {
		Re    string `json:"re"`
		Token string `json:"token"`
		Bytes int64  `json:"bytes"`
	}
	for snap.Re != "o" {
		_, b, err := ws.Read(ctx)
		must(t, err)
		_ = json.Unmarshal(b, &snap)
	}
	if snap.Token == "" || snap.Bytes < pager.MaxBudget+pager.MaxBudget/8 {
		t.Fatalf("the conversation is too small for 4 MiB pages: %+v", snap)
	}
	opened := procKB(t, pid, "VmHWM")
	// 1,100 requests, none of whose answers is read.
	sent := 0
	for i := range 1100 {
		err := write(map[string]any{"type": "page", "id": "p" + strconv.Itoa(i), "token": snap.Token, "conversation": "big",
			"anchor": "latest", "direction": "before", "budgetBytes": pager.MaxBudget})
		if err != nil {
			break // the server closed the connection
		}
		sent++
	}
	// Read what was queued, to the close: it must be the lag close.
	code := websocket.StatusCode(-1)
	for {
		if _, _, err := ws.Read(ctx); err != nil {
			code = websocket.CloseStatus(err)
			break
		}
	}
	peak, now := procKB(t, pid, "VmHWM"), procKB(t, pid, "VmRSS")
	t.Logf("slow reader: %d of 1100 page requests sent at %d MiB before the close (%d); server RSS %.1f MB at start, peak %.1f MB after opening the %.1f MB conversation, peak (VmHWM) %.1f MB after the requests, %.1f MB now",
		sent, pager.MaxBudget>>20, code, float64(base)/1024, float64(opened)/1024, float64(snap.Bytes)/(1<<20), float64(peak)/1024, float64(now)/1024)
	if code != 4008 {
		t.Errorf("the connection closed with %d, want 4008", code)
	}
	if peak*1024 > slowReaderRSSBound {
		t.Errorf("server peak RSS %.1f MB, want under %d MB", float64(peak)/1024, slowReaderRSSBound>>20)
	}
	// What the requests add: the 16 MiB queue, the page being built and
	// the collector's slack, not a page per request.
	if grew := (peak - opened) * 1024; grew > slowReaderGrowthBound {
		t.Errorf("the requests grew the server's peak RSS by %.1f MB, want under %d MB", float64(grew)/(1<<20), slowReaderGrowthBound>>20)
	}
}

// startServe runs "folio serve" on a free loopback port over data, on the
// demo model, and returns it with the address and token it printed.
func startServe(t *testing.T, ctx context.Context, bin, data string) (srv *exec.Cmd, addr, token string) {
	t.Helper()
	srv = exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--data", data, "--provider", "demo", "--dir", filepath.Dir(data))
	srv.Env = append(os.Environ(), "FOLIO_HOME="+data)
	out, err := srv.StdoutPipe()
	must(t, err)
	must(t, srv.Start())
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	openLine := regexp.MustCompile(`open http://([0-9.:]+)/#token=(\S+)`)
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if m := openLine.FindStringSubmatch(sc.Text()); m != nil {
			return srv, m[1], m[2]
		}
	}
	t.Fatalf("serve printed no address to open: %v", sc.Err())
	return nil, "", ""
}

// unknownIDsRSSGrowthBound is what 200,000 requests naming conversations
// that do not exist may add to the server's resident memory. Before live
// state was kept only for conversations that exist, they added 265 MB.
const unknownIDsRSSGrowthBound = 32 << 20

// 200,000 receipt requests naming conversations that do not exist (what a
// cross-site <img> could send, here with the token) are each answered with
// an unknown receipt, and the server's resident memory stays where it was:
// no state is kept for a conversation that does not exist.
func TestUnknownConversationIDsKeepServerRSSBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds folio and sends 200,000 requests")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	must(t, os.MkdirAll(filepath.Join(data, "conversations"), 0o700))
	bin := buildFolio(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, addr, token := startServe(t, ctx, bin, data)
	pid := srv.Process.Pid
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	get := func(i int) string {
		req, err := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("http://%s/api/v2/conversations/nope-%06d/commands/k1", addr, i), nil)
		must(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := hc.Do(req)
		must(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"state":"unknown"`) {
			return fmt.Sprintf("%d %s", resp.StatusCode, b)
		}
		return ""
	}
	for i := range 1000 { // warm up: connections, buffers, the collector's pace
		if got := get(i); got != "" {
			t.Fatalf("request %d: %s, want an unknown receipt", i, got)
		}
	}
	base := procKB(t, pid, "VmHWM")
	const n, workers = 200_000, 8
	var wrong atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				if get(1000+i) != "" {
					wrong.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	peak := procKB(t, pid, "VmHWM")
	t.Logf("unknown conversation IDs: %d requests; server peak RSS %.1f MB before, %.1f MB after", n, float64(base)/1024, float64(peak)/1024)
	if wrong.Load() != 0 {
		t.Errorf("%d requests were not answered with an unknown receipt", wrong.Load())
	}
	if grew := (peak - base) * 1024; grew > unknownIDsRSSGrowthBound {
		t.Errorf("the requests grew the server's peak RSS by %.1f MB, want under %d MB", float64(grew)/(1<<20), unknownIDsRSSGrowthBound>>20)
	}
}

// procKB reads one kB field of /proc/<pid>/status.
func procKB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	must(t, err)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			must(t, err)
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
