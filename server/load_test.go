package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/internal/gen"
)

// TestLoadRun is the load measurement, not part of the suite: with
// FOLIO_LOAD_SECONDS set it starts the server as its own process over a
// generated 300,000-entry conversation, connects FOLIO_LOAD_CLIENTS (default
// 200) WebSocket clients that page at random anchors and directions for that
// many seconds while another process appends a streaming turn to the log,
// then reports errors, pages served, the server's peak RSS, and checks that
// every snapshot is gone once the clients leave: no temporary file left,
// and the server's open file descriptors back at their count before the
// clients came (snapshots hold the log and its page index open).
//
//	FOLIO_LOAD_SECONDS=60 go test -run LoadRun -v -timeout 30m ./server
func TestLoadRun(t *testing.T) {
	secs, _ := strconv.Atoi(os.Getenv("FOLIO_LOAD_SECONDS"))
	if secs <= 0 {
		t.Skip("set FOLIO_LOAD_SECONDS to run the load measurement")
	}
	clients := 200
	if n, _ := strconv.Atoi(os.Getenv("FOLIO_LOAD_CLIENTS")); n > 0 {
		clients = n
	}
	data := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(data, "conversations"), 0o700))
	path := filepath.Join(data, "conversations", "big.jsonl")
	lf, err := os.Create(path)
	must(t, err)
	var ids []string
	for e := range gen.Entries(gen.Options{Messages: 300000, Seed: 1}) {
		ids = append(ids, e.ID)
	}
	_, err = gen.Write(lf, gen.Options{Messages: 300000, Seed: 1, ConversationID: "big"})
	must(t, err)
	lf.Close()

	// The server, as its own process.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FOLIO_TEST_SERVE="+data)
	stdin, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	cmd.Stderr = os.Stderr
	must(t, cmd.Start())
	defer cmd.Process.Kill()
	out := bufio.NewScanner(stdout)
	if !out.Scan() {
		t.Fatal("server process said nothing")
	}
	addr := strings.TrimPrefix(out.Text(), "addr ")
	url := "ws://" + addr + "/api/v2/ws"

	// The clock starts once every client has its snapshot: cold capture is
	// measured by its own benchmark.
	var ctx context.Context
	start := make(chan struct{})
	var pages, errs, events atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	opened := make(chan struct{}, 2*clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := loadClient(&ctx, start, url, ids, uint64(i), opened, &pages, func([]byte) { events.Add(1) })
			if err != nil {
				opened <- struct{}{} // a client that failed to open must not stall the start
				errs.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
			}
		}()
	}
	t0 := time.Now()
	for range clients {
		<-opened
	}
	t.Logf("%d clients opened the conversation in %v", clients, time.Since(t0).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs)*time.Second)
	defer cancel()
	close(start)
	// One turn streams into the log from another process while they page.
	w := startWriter(t, path)
	turn := 0
	for ctx.Err() == nil {
		turn++
		w.write(appendRecord(t, userEntry(fmt.Sprint("load-", turn), strings.Repeat("streamed text ", 20))))
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	wg.Wait()
	io.WriteString(stdin, "report\n")
	if !out.Scan() {
		t.Fatal("server process did not report")
	}
	report := out.Text()
	stdin.Close()
	cmd.Wait()
	t.Logf("%d clients, %ds: %d pages, %d live events received, %d appended entries, %d client errors; server: %s",
		clients, secs, pages.Load(), events.Load(), turn, errs.Load(), report)
	if errs.Load() != 0 {
		t.Errorf("client errors, first: %v", firstErr.Load())
	}
	if !strings.Contains(report, "files=0 ") {
		t.Errorf("snapshot files left: %s", report)
	}
	var files, fds, startFDs int
	var rss string
	if _, err := fmt.Sscanf(report, "files=%d fds=%d startFDs=%d peakRSS=%s", &files, &fds, &startFDs, &rss); err != nil || fds != startFDs {
		t.Errorf("open descriptors after the clients left: %s", report)
	}
}

// loadClient opens the conversation and pages randomly until ctx ends.
func loadClient(ctxp *context.Context, start <-chan struct{}, url string, ids []string, seed uint64, opened chan<- struct{}, pages *atomic.Int64, onEvent func([]byte)) error {
	dctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ws, _, err := websocket.Dial(dctx, url, nil)
	if err != nil {
		return err
	}
	defer ws.Close(websocket.StatusNormalClosure, "")
	ws.SetReadLimit(64 << 20)
	n := 0
	call := func(req string) ([]byte, error) {
		n++
		id := strconv.Itoa(n)
		if err := ws.Write(dctx, websocket.MessageText, []byte(`{"id":"`+id+`",`+req[1:])); err != nil {
			return nil, err
		}
		want := []byte(`"re":"` + id + `"`)
		for {
			_, b, err := ws.Read(dctx)
			if err != nil {
				return nil, err
			}
			if bytes.HasPrefix(b, []byte(`{"type":"event"`)) {
				onEvent(b)
				continue
			}
			if !bytes.Contains(b[:min(len(b), 80)], want) {
				return nil, fmt.Errorf("unexpected frame %.120s", b)
			}
			if bytes.HasPrefix(b, []byte(`{"type":"error"`)) {
				return nil, fmt.Errorf("%.200s", b)
			}
			return b, nil
		}
	}
	if _, err := call(`{"type":"hello","protocol":4}`); err != nil {
		return err
	}
	b, err := call(`{"type":"open","conversation":"big"}`)
	if err != nil {
		return err
	}
	opened <- struct{}{}
	<-start
	ctx := *ctxp
	var snap struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(b, &snap, json.RejectUnknownMembers(false)); err != nil {
		return err
	}
	rnd := rand.New(rand.NewPCG(seed, 7))
	dirs := []string{"before", "after", "around"}
	for ctx.Err() == nil {
		req := `{"type":"page","token":"` + snap.Token + `","conversation":"big","anchor":"` + ids[rnd.IntN(len(ids))] +
			`","direction":"` + dirs[rnd.IntN(3)] + `","budgetBytes":262144}`
		if _, err := call(req); err != nil {
			return err
		}
		pages.Add(1)
	}
	return nil
}

// countFDs is how many descriptors this process has open.
func countFDs() int {
	des, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(des)
}

// serveForLoad is the server process of TestLoadRun: it serves data on a
// loopback port, prints the address, and on "report" waits for every
// connection to close and prints its peak RSS and snapshot file count.
func serveForLoad(data string) int {
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	s, err := New(Options{DataDir: data})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s.setOnConnClosed(func(websocket.StatusCode) { mu.Lock(); cond.Broadcast(); mu.Unlock() })
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	go s.ListenAndServe(ctx, "127.0.0.1:0", func(a net.Addr) { ready <- a.String() })
	addr := <-ready
	// Counted before the address is out, so no client is connected yet.
	startFDs := countFDs()
	fmt.Println("addr", addr)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() != "report" {
			continue
		}
		mu.Lock()
		for {
			s.mu.Lock()
			n := len(s.conns)
			s.mu.Unlock()
			if n == 0 {
				break
			}
			cond.Wait()
		}
		mu.Unlock()
		files, _ := filepath.Glob(filepath.Join(s.SnapshotDir(), "*"))
		fmt.Printf("files=%d fds=%d startFDs=%d peakRSS=%s\n", len(files), countFDs(), startFDs, strings.ReplaceAll(peakRSS(), " ", ""))
	}
	cancel()
	return 0
}

// peakRSS is this process's peak resident set size (VmHWM), as Linux
// reports it.
func peakRSS() string {
	st, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(st), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			return strings.Join(strings.Fields(l)[1:], " ")
		}
	}
	return ""
}
