package server

import (
	"fmt"
	"testing"

	"github.com/coder/websocket"
	"github.com/foliodev/folio/transcript"
)

// TestTokensAreScoped: a token works only on its connection, for its
// conversation and head, while its document generation stands.
func TestTokensAreScoped(t *testing.T) {
	ts := newTestServer(t, Options{})
	ts.writeGen(t, "one", 300, 1)
	ts.writeGen(t, "two", 300, 2)
	a, b := ts.dial(t), ts.dial(t)
	sa := a.open("one")
	a.open("two")

	expect := func(c *client, f frame, code string) {
		t.Helper()
		if f.Type != "error" || f.Code != code || !f.Rebuild {
			t.Fatalf("want %s with rebuild, got %s", code, f.raw)
		}
	}
	if f := a.page(sa.Token, "one", "latest", "before", 0); f.Type != "page" {
		t.Fatalf("own token refused: %s", f.raw)
	}
	expect(b, b.page(sa.Token, "one", "latest", "before", 0), "token-scope")
	expect(a, a.page(sa.Token, "two", "latest", "before", 0), "token-scope")
	expect(a, a.call(map[string]any{"type": "page", "token": sa.Token, "conversation": "one", "head": "other",
		"anchor": "latest", "direction": "before"}), "token-scope")
	expect(a, a.page("s-made-up", "one", "latest", "before", 0), "token-unknown")

	// Selecting another branch makes the old head's snapshot stale.
	if err := ts.Publish("one", Change{Op: OpHead, Head: "b2"}); err != nil {
		t.Fatal(err)
	}
	a.event("head")
	expect(a, a.page(sa.Token, "one", "latest", "before", 0), "token-stale")
	s2 := a.call(map[string]any{"type": "open", "conversation": "one", "head": "b2"})
	if s2.Type != "snapshot" || s2.Head != "b2" {
		t.Fatalf("open new head: %s", s2.raw)
	}
	expect(a, a.call(map[string]any{"type": "page", "token": s2.Token, "conversation": "one", "head": "main",
		"anchor": "latest", "direction": "before"}), "token-scope")

	// Replacing the document (a new generation) makes it stale too.
	if err := ts.Publish("one", Change{Op: OpReplaced}); err != nil {
		t.Fatal(err)
	}
	if ev := a.event("replaced"); ev.Generation != s2.Generation+1 {
		t.Fatalf("replaced to generation %d, snapshot had %d", ev.Generation, s2.Generation)
	}
	expect(a, a.page(s2.Token, "one", "latest", "before", 0), "token-stale")
}

// TestSnapshotFilesReleased counts the live snapshots (each holds its log's
// page index open; none copies the log): the LRU keeps four, an evicted
// token says so, release and disconnect close them at once.
func TestSnapshotFilesReleased(t *testing.T) {
	closed := make(chan struct{}, 4)
	ts := newTestServer(t, Options{})
	ts.setOnConnClosed(func(websocket.StatusCode) { closed <- struct{}{} })
	for i := range 7 {
		ts.writeGen(t, fmt.Sprint("c", i), 500, uint64(i))
	}
	c := ts.dial(t)
	var toks []string
	for i := range 6 {
		toks = append(toks, c.open(fmt.Sprint("c", i)).Token)
		if n := ts.snapshots(t); n != min(i+1, 4) {
			t.Fatalf("after %d opens: %d files", i+1, n)
		}
	}
	if f := c.page(toks[0], "c0", "latest", "before", 0); f.Code != "token-expired" || !f.Rebuild {
		t.Fatalf("evicted token: %s", f.raw)
	}
	if f := c.call(map[string]any{"type": "release", "token": toks[5]}); f.Type != "released" {
		t.Fatalf("release: %s", f.raw)
	}
	if n := ts.snapshots(t); n != 3 {
		t.Fatalf("after release: %d files", n)
	}
	// Reopening what this connection holds shares the file; a new capture
	// on another connection adds one.
	c.open("c4")
	other := ts.dial(t)
	other.open("c6")
	if n := ts.snapshots(t); n != 4 {
		t.Fatalf("with a second connection: %d files", n)
	}
	c.ws.Close(1000, "bye")
	<-closed
	if n := ts.snapshots(t); n != 1 {
		t.Fatalf("after the first disconnect: %d files", n)
	}
	other.ws.Close(1000, "bye")
	<-closed
	if n := ts.snapshots(t); n != 0 {
		t.Fatalf("files left after disconnect: %d", n)
	}
}

// TestGraphWorkOnlyWhenNeeded: a log without compactions or links skips the
// graph; one with a compaction reports it and annotates covered pages.
func TestGraphWorkOnlyWhenNeeded(t *testing.T) {
	ts := newTestServer(t, Options{})
	ts.writeGen(t, "plain", 3000, 1)
	ts.writeGen(t, "compacted", 8000, 1)
	c := ts.dial(t)
	plain := c.open("plain")
	if plain.Graph {
		t.Fatal("graph built for a log without compaction or links")
	}
	comp := c.open("compacted")
	if !comp.Graph {
		t.Fatal("graph skipped for a log with compactions")
	}
	f := c.page(comp.Token, "compacted", "earliest", "after", 0)
	if len(f.Coverage) == 0 {
		t.Fatalf("first page of a compacted log has no coverage")
	}
	if f := c.page(plain.Token, "plain", "earliest", "after", 0); len(f.Coverage) != 0 {
		t.Fatal("coverage on a plain log")
	}
}

func TestReconnectGetsCheckpointsNotReplay(t *testing.T) {
	ts := newTestServer(t, Options{})
	ts.writeGen(t, "c", 100, 1)
	c := ts.dial(t)
	s := c.open("c")
	ts0 := s.Seq
	now := s.Generation
	reply := transcript.Entry{ID: "live-1", Content: transcript.Agent{Markdown: "Hel"}, Timestamp: tsAt(1)}
	tool := transcript.Entry{ID: "live-2", Content: transcript.Tool{Receipt: transcript.ToolReceipt{App: "shell", Summary: "go test", Status: transcript.ToolOK}, InvocationID: "inv-9"}, Timestamp: tsAt(2)}
	must(t, ts.Publish("c", Change{Op: OpUpsert, Entry: reply}))
	for i, text := range []string{"Hello", "Hello, wor", "Hello, world"} {
		reply.Content = transcript.Agent{Markdown: text}
		must(t, ts.Publish("c", Change{Op: OpUpsert, Entry: reply}))
		_ = i
	}
	must(t, ts.Publish("c", Change{Op: OpUpsert, Entry: tool, After: "live-1"}))
	for rev := int64(1); rev <= 3; rev++ {
		must(t, ts.Publish("c", Change{Op: OpPresentation, EntryID: "live-2", InvocationID: "inv-9",
			Presentation: &transcript.Presentation{Schema: "folio.shell/terminal", Version: 1, Revision: rev, Payload: []byte(`{"n":1}`)}}))
	}
	c.ws.Close(1000, "")

	d := ts.dial(t)
	f := d.call(map[string]any{"type": "open", "conversation": "c", "since": map[string]any{"generation": now, "seq": ts0}})
	cp := f.Checkpoint
	if cp == nil || cp.Replaced {
		t.Fatalf("checkpoint: %s", f.raw)
	}
	if len(cp.Entries) != 2 {
		t.Fatalf("checkpoint has %d entries, want the 2 changed ones once each: %s", len(cp.Entries), f.raw)
	}
	e, err := transcript.DecodeEntry(cp.Entries[0].Entry)
	if err != nil || e.Content.(transcript.Agent).Markdown != "Hello, world" || !cp.Entries[0].Open {
		t.Fatalf("first checkpoint entry: %s %v", cp.Entries[0].Entry, err)
	}
	if len(cp.Presentations) != 1 || cp.Presentations[0].Presentation.Revision != 3 || cp.Presentations[0].Revision <= cp.Entries[0].Revision {
		t.Fatalf("presentation checkpoint: %+v", cp.Presentations)
	}
	// Another generation: rebuild.
	f = d.call(map[string]any{"type": "open", "conversation": "c", "since": map[string]any{"generation": now - 1, "seq": 0}})
	if f.Checkpoint == nil || !f.Checkpoint.Replaced {
		t.Fatalf("old generation: %s", f.raw)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
