package server

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/coder/websocket"
	"github.com/foliodev/folio/transcript"
)

// TestMain lets the test binary act as another process writing a log: with
// FOLIO_TEST_WRITER set it appends what it reads on stdin to that file, one
// write per input line (a line "HALF:<text>" writes <text> without its
// newline), fsyncing and acknowledging each on stdout.
func TestMain(m *testing.M) {
	if p := os.Getenv("FOLIO_TEST_WRITER"); p != "" {
		os.Exit(writer(p))
	}
	if d := os.Getenv("FOLIO_TEST_SERVE"); d != "" {
		os.Exit(serveForLoad(d))
	}
	if d := os.Getenv("FOLIO_TEST_REPLICA"); d != "" {
		os.Exit(serveReplica(d, os.Getenv("FOLIO_TEST_REPLICA_URL")))
	}
	code := m.Run()
	if bigLogPath != "" {
		os.Remove(bigLogPath) // the benchmarks' shared log
	}
	os.Exit(code)
}

func writer(path string) int {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	for in.Scan() {
		line := in.Text()
		if rest, ok := cutPrefix(line, "HALF:"); ok {
			f.WriteString(rest)
		} else {
			f.WriteString(line + "\n")
		}
		f.Sync()
		fmt.Println("ok")
	}
	return 0
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return s, false
}

type writerProc struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Scanner
}

func startWriter(t *testing.T, path string) *writerProc {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FOLIO_TEST_WRITER="+path)
	in, err := cmd.StdinPipe()
	must(t, err)
	out, err := cmd.StdoutPipe()
	must(t, err)
	cmd.Stderr = os.Stderr
	must(t, cmd.Start())
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	return &writerProc{t: t, in: in, out: bufio.NewScanner(out)}
}

func (w *writerProc) write(line string) {
	w.t.Helper()
	if _, err := io.WriteString(w.in, line+"\n"); err != nil {
		w.t.Fatal(err)
	}
	if !w.out.Scan() || w.out.Text() != "ok" {
		w.t.Fatalf("writer did not acknowledge %q", line)
	}
}

func appendRecord(t *testing.T, entries ...transcript.Entry) string {
	t.Helper()
	b := []byte(`{"type":"ui-append","at":"2026-03-01T00:00:00.000Z","entries":[`)
	for i, e := range entries {
		raw, err := transcript.EncodeEntry(e)
		must(t, err)
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, raw...)
	}
	return string(append(b, "]}"...))
}

func userEntry(id, text string) transcript.Entry {
	return transcript.Entry{ID: id, Content: transcript.User{Text: text}, Timestamp: tsAt(5)}
}

// TestLiveFollowOfAnotherProcess: a separate process appends to a log a tab
// has open; the tab gets each accepted entry once, in order, with the
// previous entry named, a torn line only once it is whole, a rejected batch
// never, and a superseding snapshot as a new generation.
func TestLiveFollowOfAnotherProcess(t *testing.T) {
	ts := newTestServer(t, Options{})
	path := ts.writeGen(t, "c", 50, 1)
	c := ts.dial(t)
	snap := c.open("c")
	last := c.page(snap.Token, "c", "latest", "before", 0).groups(t)
	lastGroup := last[len(last)-1].Entries
	lastID := lastGroup[len(lastGroup)-1].ID

	w := startWriter(t, path)
	w.write(appendRecord(t, userEntry("t-1", "first")))
	ev := c.event("upsert")
	e, err := transcript.DecodeEntry(ev.Entry)
	must(t, err)
	if e.ID != "t-1" || ev.After != lastID || ev.Open || ev.Seq != snap.Seq+1 || ev.Generation != snap.Generation {
		t.Fatalf("first event: %s (after want %s)", ev.raw, lastID)
	}

	// A batch with a repeated ID is rejected whole; a torn line waits.
	w.write(appendRecord(t, userEntry("t-2", "x"), userEntry("t-2", "y")))
	rec := appendRecord(t, userEntry("t-3", "third"))
	w.write("HALF:" + rec[:20])
	w.write(rec[20:])
	ev = c.event("upsert")
	e, _ = transcript.DecodeEntry(ev.Entry)
	if e.ID != "t-3" || ev.After != "t-1" || ev.Seq != snap.Seq+2 {
		t.Fatalf("after a rejected batch and a torn line: %s", ev.raw)
	}

	// A superseding snapshot is a new generation; the old token is stale.
	w.write(`{"type":"ui-transcript","at":"2026-03-01T00:00:01.000Z","entries":[` + appendRecord(t, userEntry("n-1", "new"))[len(`{"type":"ui-append","at":"2026-03-01T00:00:00.000Z","entries":[`):])
	rp := c.event("replaced")
	if rp.Generation != snap.Generation+1 {
		t.Fatalf("replaced: %s", rp.raw)
	}
	if f := c.page(snap.Token, "c", "latest", "before", 0); f.Code != "token-stale" {
		t.Fatalf("old token after replacement: %s", f.raw)
	}
	s2 := c.open("c")
	if s2.Entries != 1 || s2.Generation != rp.Generation {
		t.Fatalf("new snapshot: %s", s2.raw)
	}
	w.write(appendRecord(t, userEntry("n-2", "more")))
	ev = c.event("upsert")
	e, _ = transcript.DecodeEntry(ev.Entry)
	if e.ID != "n-2" || ev.After != "n-1" || ev.Generation != s2.Generation || ev.Seq != s2.Seq+1 {
		t.Fatalf("event in the new generation: %s", ev.raw)
	}
	for _, f := range c.held {
		if f.Type == "event" && f.Op == "upsert" {
			t.Fatalf("unexpected extra event: %s", f.raw)
		}
	}
}

// TestLaterOpenSharesCaptureWithCheckpoint: an open after appends reuses the
// earlier capture (no second read of the log, no second file) and its
// checkpoint carries what was appended since, so pages plus checkpoint are
// the current document.
func TestLaterOpenSharesCaptureWithCheckpoint(t *testing.T) {
	ts := newTestServer(t, Options{})
	path := ts.writeGen(t, "c", 200, 1)
	a := ts.dial(t)
	s1 := a.open("c")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	_, err = f.WriteString(appendRecord(t, userEntry("x-1", "later")) + "\n")
	must(t, err)
	f.Close()
	a.event("upsert")
	b := ts.dial(t)
	s2 := b.open("c")
	if s2.Seq != s1.Seq || s2.Entries != s1.Entries || ts.snapshots(t) != 1 {
		t.Fatalf("second open did not share: %s", s2.raw)
	}
	cp := s2.Checkpoint
	if cp == nil || cp.Replaced || len(cp.Entries) != 1 || cp.Entries[0].Open {
		t.Fatalf("checkpoint: %s", s2.raw)
	}
	e, err := transcript.DecodeEntry(cp.Entries[0].Entry)
	if err != nil || e.ID != "x-1" {
		t.Fatalf("checkpoint entry: %s", cp.Entries[0].Entry)
	}
}

// TestReconnectAfterAppendsWhileAway: the only tab drops, another process
// appends, the tab reconnects with what it last applied and gets exactly the
// appended entries as a checkpoint, in the same generation.
func TestReconnectAfterAppendsWhileAway(t *testing.T) {
	closed := make(chan struct{}, 1)
	ts := newTestServer(t, Options{})
	ts.setOnConnClosed(func(websocket.StatusCode) { closed <- struct{}{} })
	path := ts.writeGen(t, "c", 200, 1)
	a := ts.dial(t)
	s1 := a.open("c")
	a.ws.Close(1000, "network gone")
	<-closed
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	_, err = f.WriteString(appendRecord(t, userEntry("away-1", "while away")) + "\n" + appendRecord(t, userEntry("away-2", "still away")) + "\n")
	must(t, err)
	f.Close()

	b := ts.dial(t)
	s2 := b.call(map[string]any{"type": "open", "conversation": "c", "since": map[string]any{"generation": s1.Generation, "seq": s1.Seq}})
	cp := s2.Checkpoint
	if s2.Generation != s1.Generation || cp == nil || cp.Replaced || len(cp.Entries) != 2 {
		t.Fatalf("reconnect: %s", s2.raw)
	}
	for i, want := range []string{"away-1", "away-2"} {
		e, err := transcript.DecodeEntry(cp.Entries[i].Entry)
		if err != nil || e.ID != want {
			t.Fatalf("checkpoint entry %d: %s", i, cp.Entries[i].Entry)
		}
	}
	if cp.Entries[1].After != "away-1" {
		t.Fatalf("second entry placed after %q", cp.Entries[1].After)
	}
}
