package server

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// These tests follow a conversation's engine through its life: open,
// rename, titles, idle close and reopen, shutdown, receipts.

// The server's own engine holds the lock; a rename goes through it.
func TestRenameWhileEngineOpen(t *testing.T) {
	ts, _ := newTurnsServer(t, 0, "")
	id := ts.create(t)
	c := ts.dial(t)
	c.open(id)
	c.send(id, "k1", "hello")
	c.finished("k1")
	if code, body := ts.do(t, http.MethodPatch, "/api/v2/conversations/"+id, `{"title":"renamed"}`); code != http.StatusOK {
		t.Fatalf("rename answered %d: %s", code, body)
	}
	conv, err := history.ReadFile(ts.logOf(id))
	if err != nil || conv.Title != "renamed" {
		t.Fatalf("title %q, %v", conv.Title, err)
	}
}

// A conversation created without a title is named from its first message by
// the terminal's rule (history.DisplayTitle), and a later rename is not
// undone by the next turn's save.
func TestFirstSendTitlesTheConversation(t *testing.T) {
	ts, _ := newTurnsServer(t, 0, "")
	id := ts.create(t)
	c := ts.dial(t)
	c.open(id)
	c.send(id, "k1", "  Plan the trip to Lisbon\nwith three stops")
	c.finished("k1")
	conv, err := history.ReadFile(ts.logOf(id))
	if err != nil || conv.Title != "Plan the trip to Lisbon with three stops" {
		t.Fatalf("title after the first send = %q, %v; want the message on one line", conv.Title, err)
	}
	if code, body := ts.do(t, http.MethodPatch, "/api/v2/conversations/"+id, `{"title":"mine"}`); code != http.StatusOK {
		t.Fatalf("rename answered %d: %s", code, body)
	}
	c.send(id, "k2", "and back")
	c.finished("k2")
	if conv, err = history.ReadFile(ts.logOf(id)); err != nil || conv.Title != "mine" {
		t.Fatalf("title after a rename and another send = %q, %v; want the rename kept", conv.Title, err)
	}
}

// A tab that opens while a reply streams gets the streaming entry in its
// checkpoint, then the rest as events: no frame replay, nothing lost.
func TestOpenMidStreamGetsTheStreamingEntry(t *testing.T) {
	ts, _ := newTurnsServer(t, 300, "")
	id := ts.create(t)
	c := ts.dial(t)
	c.open(id)
	c.send(id, "k1", "write a long essay")
	// Wait until the answer streams.
	c.await(func(f frame) bool {
		return f.Type == "event" && f.Op == "upsert" && f.Open && bytes.Contains(f.Entry, []byte(`"kind":"agent"`))
	})
	c2 := ts.dial(t)
	snap := c2.open(id)
	if snap.Checkpoint == nil {
		t.Fatalf("no checkpoint mid-stream: %s", snap.raw)
	}
	var streaming string
	for _, ce := range snap.Checkpoint.Entries {
		if ce.Open && bytes.Contains(ce.Entry, []byte(`"kind":"agent"`)) {
			e, err := transcript.DecodeEntry(ce.Entry)
			if err != nil {
				t.Fatal(err)
			}
			streaming = e.ID
		}
	}
	if streaming == "" {
		t.Fatalf("the checkpoint lacks the streaming answer: %s", snap.raw)
	}
	var st struct {
		State controlState `json:"state"`
	}
	if err := json.Unmarshal(snap.raw, &st, json.RejectUnknownMembers(false)); err != nil || st.State.Turn == nil || st.State.Turn.State != "running" {
		t.Fatalf("snapshot state: %v %s", err, snap.raw)
	}
	// Stopped, the answer settles with its partial text; the new tab sees
	// that as an event above its snapshot.
	stop := c.call(map[string]any{"type": "stop", "conversation": id, "commandId": "s", "turn": st.State.Turn.Turn})
	if stop.Receipt.State != transcript.CommandDone {
		t.Fatalf("stop: %s", stop.raw)
	}
	f := c2.await(func(f frame) bool {
		return f.Type == "event" && f.Op == "settle" && bytes.Contains(f.Entry, []byte(streaming))
	})
	if f.Revision <= snap.Seq {
		t.Fatalf("settle revision %d is not above the snapshot's seq %d", f.Revision, snap.Seq)
	}
}

// Shutting the server down stops the running turn, saves it and releases
// the log's lock.
func TestCloseStopsTurnsAndReleasesLocks(t *testing.T) {
	ts, _ := newTurnsServer(t, 300, "")
	id := ts.create(t)
	c := ts.dial(t)
	c.open(id)
	c.send(id, "k1", "write a long essay")
	c.running()
	if err := ts.Server.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := history.Open(ts.logOf(id))
	if err != nil {
		t.Fatalf("lock still held after Close: %v", err)
	}
	defer l.Close()
	conv, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	if k := kinds(conv.Document.Entries()); !strings.HasPrefix(k, "user") || !strings.HasSuffix(k, "stopped") {
		t.Fatalf("saved at shutdown: %s", k)
	}
}

// A command that arrives while its conversation's idle engine is being
// closed waits for the close and runs on an engine opened after it: it is
// never refused "locked" by the engine still letting go of the log.
func TestCommandDuringAnIdleCloseReopens(t *testing.T) {
	ts, turns := newTurnsServer(t, 0, "")
	id := ts.create(t)
	var armed atomic.Bool
	closing, release, waiting := make(chan struct{}), make(chan struct{}), make(chan struct{})
	turns.hooks.closing = func(string) {
		if armed.Load() {
			close(closing)
			<-release
		}
	}
	turns.hooks.waiting = func(string) {
		if armed.Load() {
			close(waiting)
		}
	}
	ctx := context.Background()
	if _, err := turns.Do(ctx, Command{Kind: cmdSend, Conversation: id, CommandID: "c1", Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	cv := ts.conv(id)
	cv.mu.Lock()
	first := cv.eng
	cv.mu.Unlock()
	if _, err := first.Wait(ctx, "c1"); err != nil {
		t.Fatal(err)
	}

	armed.Store(true)
	closed := make(chan struct{})
	go func() {
		turns.closeIdle(time.Now().Add(time.Hour))
		close(closed)
	}()
	<-closing // the idle engine is letting go, still holding the log
	type result struct {
		rc  Receipt
		err error
	}
	sent := make(chan result, 1)
	go func() {
		rc, err := turns.Do(ctx, Command{Kind: cmdSend, Conversation: id, CommandID: "c2", Text: "again"})
		sent <- result{rc, err}
	}()
	select {
	case <-waiting: // the command waits for the close
	case r := <-sent:
		t.Fatalf("a command during an idle close did not wait for it: %+v, %v", r.rc, r.err)
	}
	armed.Store(false)
	close(release)
	<-closed
	r := <-sent
	if r.err != nil || r.rc.State == transcript.CommandRejected {
		t.Fatalf("a command during an idle close: %+v, %v", r.rc, r.err)
	}
	cv.mu.Lock()
	second := cv.eng
	cv.mu.Unlock()
	if second == nil || second == first {
		t.Fatal("the command did not run on a newly opened engine")
	}
	if _, err := second.Wait(ctx, "c2"); err != nil {
		t.Fatal(err)
	}
}

// An entry the engine published before its save reached the log is in no
// snapshot read before that save: the snapshot's checkpoint carries it.
// Once the log holds it, a new capture has it in its pages instead.
func TestPublishedEntryNotYetSavedTravelsInTheCheckpoint(t *testing.T) {
	ts := newTestServer(t, Options{})
	id := ts.create(t)
	x := transcript.Entry{ID: "x-1", Content: transcript.User{Text: "hi"}, Timestamp: tsAt(1)}
	if err := ts.Publish(id, Change{Op: OpSettle, Entry: x}); err != nil {
		t.Fatal(err)
	}
	c := ts.dial(t)
	snap := c.open(id)
	if snap.Seq < 1 || snap.Checkpoint == nil || len(snap.Checkpoint.Entries) != 1 {
		t.Fatalf("snapshot at seq %d without the unsaved entry: %s", snap.Seq, snap.raw)
	}
	if r := c.call(map[string]any{"type": "release", "token": snap.Token}); r.Type != "released" {
		t.Fatal(string(r.raw))
	}

	l, err := history.Open(ts.logOf(id))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SaveEntries([]transcript.Entry{x}, nil); err != nil {
		t.Fatal(err)
	}
	l.Close()
	got := c.pageAll(t, id)
	if len(got) != 1 || got[0].ID != "x-1" {
		t.Fatalf("after the save: %s", kinds(got))
	}
	snap = c.open(id)
	if snap.Checkpoint != nil {
		t.Fatalf("a saved entry still travels in the checkpoint: %s", snap.raw)
	}
}

// When the engine's document is replaced, clients are told to rebuild.
func TestReplacedStoreDocumentIsAnnounced(t *testing.T) {
	ts := newTestServer(t, Options{})
	id := ts.create(t)
	c := ts.dial(t)
	first := c.open(id)
	store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	s := ts.conv(id) // publishing as an open engine's publisher does
	p := s.newPublisher(store.Snapshot(), turnsHooks{})
	if _, err := store.Lease().Append(transcript.User{Text: "one"}); err != nil {
		t.Fatal(err)
	}
	p.publishDoc(store.Snapshot())
	c.event("upsert")
	store.Replace(store.Snapshot().Document)
	p.publishDoc(store.Snapshot())
	f := c.event("replaced")
	if f.Generation <= first.Generation {
		t.Fatalf("replaced at generation %d, snapshot had %d", f.Generation, first.Generation)
	}
	// What is written after the replace is published for the new
	// generation; the settled entries come with the new snapshot instead.
	if _, err := store.Lease().Append(transcript.User{Text: "two"}); err != nil {
		t.Fatal(err)
	}
	p.publishDoc(store.Snapshot())
	up := c.event("upsert")
	if !bytes.Contains(up.Entry, []byte(`"two"`)) {
		t.Fatalf("after the replace: %s", up.raw)
	}
	if up.Generation != f.Generation {
		t.Fatalf("upsert of generation %d after the replace to %d", up.Generation, f.Generation)
	}
}

// TestReceiptsAreTheEngines: the server answers a command's receipt with
// what the engine has, and has nothing of its own: a command the engine
// never accepted (refused before it, or never sent) is unknown, and one it
// ran reads the same while its engine is open, after the engine closed
// (from the receipts it left beside the log) and after a restart.
func TestReceiptsAreTheEngines(t *testing.T) {
	ts, turns := newTurnsServer(t, 0, "")
	id := ts.create(t)
	c := ts.dial(t)
	c.open(id)
	c.send(id, "k1", "hello")
	c.finished("k1")
	if rc := c.send(id, "k1", "another body"); rc.Code != "command-conflict" {
		t.Fatalf("reused ID: %+v", rc)
	}
	if rc := c.call(map[string]any{"type": "stop", "conversation": id, "commandId": "st", "turn": "u-none"}).Receipt; rc.Code != "not-running" {
		t.Fatalf("stop while idle: %+v", rc)
	}
	if rc := c.call(map[string]any{"type": "select-branch", "conversation": id, "commandId": "sel", "head": "main"}).Receipt; rc.State != transcript.CommandDone {
		t.Fatalf("select the selected head: %+v", rc)
	}
	ids := []string{"k1", "st", "sel", "never"}

	polled := func(ts *testServer, cmd string) Receipt {
		t.Helper()
		resp, err := http.Get(ts.url + "/api/v2/conversations/" + id + "/commands/" + cmd)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var rc Receipt
		if err := json.UnmarshalRead(resp.Body, &rc); err != nil {
			t.Fatal(err)
		}
		return rc
	}
	cv := ts.conv(id)
	cv.mu.Lock()
	eng := cv.eng
	cv.mu.Unlock()
	want := map[string]Receipt{}
	for _, cmd := range ids {
		got := polled(ts, cmd)
		r, err := eng.Status(cmd)
		if err != nil {
			if got.State != transcript.CommandUnknown {
				t.Errorf("%s: the engine has no receipt, the server answers %+v", cmd, got)
			}
		} else if got.State != r.State || got.Kind != r.Kind || got.EntryID != r.EntryID {
			t.Errorf("%s: the server answers %+v, the engine %+v", cmd, got, r)
		}
		want[cmd] = got
	}
	if want["k1"].State != transcript.CommandDone || want["k1"].EntryID == "" || want["sel"].State != transcript.CommandDone {
		t.Fatalf("receipts: %+v", want)
	}

	turns.closeIdle(time.Now().Add(time.Hour))
	cv.mu.Lock()
	open := cv.eng != nil
	cv.mu.Unlock()
	if open {
		t.Fatal("the engine is still open")
	}
	cold, _ := newTurnsServer(t, 0, ts.data)
	for _, cmd := range ids {
		if got := polled(ts, cmd); got != want[cmd] {
			t.Errorf("%s after the engine closed: %+v, before %+v", cmd, got, want[cmd])
		}
		if got := polled(cold, cmd); got != want[cmd] {
			t.Errorf("%s after a restart: %+v, before %+v", cmd, got, want[cmd])
		}
	}
}
