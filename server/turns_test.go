package server

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/provider/demo"
	"github.com/foliodev/folio/transcript"
)

// These tests run the real engine with the demo model behind a real server
// on loopback, through a real WebSocket.

// newTurnsServer starts a server whose commands run real turns at the given
// demo rate (tokens per second).
func newTurnsServer(t *testing.T, rate float64, data string, token ...string) (*testServer, *testTurns) {
	t.Helper()
	opts := Options{Turns: &TurnsOptions{
		Provider:  demo.New(demo.Options{TokensPerSecond: rate}),
		Model:     "demo",
		Workspace: t.TempDir(),
	}, DataDir: data}
	if len(token) > 0 {
		opts.Token = token[0]
	}
	ts := newTestServer(t, opts)
	return ts, ts.engines()
}

// create makes an empty conversation over HTTP.
func (ts *testServer) create(t *testing.T) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, ts.url+"/api/v2/conversations", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	if ts.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+ts.opts.Token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m wireMeta
	if err := json.UnmarshalRead(resp.Body, &m, json.RejectUnknownMembers(false)); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %v", resp.StatusCode, err)
	}
	return m.ID
}

func (ts *testServer) logOf(id string) string {
	return filepath.Join(ts.data, "conversations", id+".jsonl")
}

type turnEvent struct {
	State string `json:"state"`
	Turn  string `json:"turn"`
	Reply string `json:"reply"`
	Items []struct {
		CommandID    string `json:"commandId"`
		InvocationID string `json:"invocationId"`
		Tool         string `json:"tool"`
	} `json:"items"`
	Approvals []ApprovalItem `json:"approvals"`
}

func (f frame) control(t *testing.T) turnEvent {
	t.Helper()
	var e turnEvent
	if err := json.Unmarshal(f.raw, &e, json.RejectUnknownMembers(false)); err != nil {
		t.Fatal(err)
	}
	return e
}

func (f frame) entry(t *testing.T) transcript.Entry {
	t.Helper()
	e, err := transcript.DecodeEntry(f.Entry)
	if err != nil {
		t.Fatalf("event entry: %v: %s", err, f.raw)
	}
	return e
}

func (c *client) send(conv, cmdID, text string) Receipt {
	c.t.Helper()
	f := c.call(map[string]any{"type": "send", "conversation": conv, "commandId": cmdID, "text": text})
	if f.Receipt == nil {
		c.t.Fatalf("send: %s", f.raw)
	}
	return *f.Receipt
}

// finished waits for the command's receipt event with a final state.
func (c *client) finished(cmdID string) Receipt {
	c.t.Helper()
	f := c.await(func(f frame) bool {
		return f.Type == "event" && f.Op == "receipt" && f.Receipt.CommandID == cmdID && f.Receipt.State.Final()
	})
	return *f.Receipt
}

// running waits for the turn event saying a turn runs with its user entry.
func (c *client) running() turnEvent {
	c.t.Helper()
	f := c.await(func(f frame) bool {
		if f.Type != "event" || f.Op != "turn" {
			return false
		}
		var e turnEvent
		json.Unmarshal(f.raw, &e, json.RejectUnknownMembers(false))
		return e.State == "running" && e.Turn != ""
	})
	return f.control(c.t.(*testing.T))
}

// pageAll reads the whole conversation after a fresh open: one page plus
// the snapshot's checkpoint (an open may share an earlier capture and carry
// what changed since in the checkpoint).
func (c *client) pageAll(t *testing.T, conv string) []transcript.Entry {
	t.Helper()
	snap := c.open(conv)
	p := c.page(snap.Token, conv, "earliest", "after", 4<<20)
	var gs []struct {
		Entries []jsontext.Value `json:"entries"`
	}
	if err := json.Unmarshal(p.Groups, &gs); err != nil {
		t.Fatalf("page: %v: %s", err, p.raw)
	}
	var out []transcript.Entry
	have := map[string]bool{}
	add := func(raw jsontext.Value) {
		e, err := transcript.DecodeEntry(raw)
		if err != nil {
			t.Fatal(err)
		}
		if !have[e.ID] {
			have[e.ID] = true
			out = append(out, e)
		}
	}
	for _, g := range gs {
		for _, raw := range g.Entries {
			add(raw)
		}
	}
	if snap.Checkpoint != nil {
		for _, ce := range snap.Checkpoint.Entries {
			if ce.Open {
				t.Errorf("a finished turn's entry is open: %s", ce.Entry)
			}
			add(ce.Entry)
		}
	}
	return out
}

func kinds(es []transcript.Entry) string {
	var b []string
	for _, e := range es {
		b = append(b, string(e.Content.Kind()))
	}
	return strings.Join(b, " ")
}

func TestTurnStreamsLiveAndReloadShowsTheSame(t *testing.T) {
	ts, _ := newTurnsServer(t, 1000, "")
	id := ts.create(t)
	c := ts.dial(t)
	c.open(id)
	rc := c.send(id, "k1", "hello there")
	if rc.State != transcript.CommandQueued && rc.State != transcript.CommandRunning {
		t.Fatalf("send receipt: %+v", rc)
	}

	// Collect the live events up to the command's final receipt.
	var order []string
	final := map[string]transcript.Entry{}
	var agentTexts []string
	settled := map[string]bool{}
	revs := map[string]int64{}
	for {
		f := c.await(func(f frame) bool { return f.Type == "event" })
		if f.Op == "receipt" && f.Receipt.CommandID == "k1" && f.Receipt.State == transcript.CommandDone {
			if f.Receipt.Code != "" || f.Receipt.EntryID == "" {
				t.Fatalf("final receipt: %+v", *f.Receipt)
			}
			break
		}
		if f.Op != "upsert" && f.Op != "settle" && f.Op != "append" {
			continue
		}
		var e transcript.Entry
		if f.Op == "append" {
			e = f.appendTo(t, final[f.EntryID], revs[f.EntryID])
		} else {
			e = f.entry(t)
		}
		revs[e.ID] = f.Revision
		if settled[e.ID] {
			t.Fatalf("entry %s changed after it settled: %s", e.ID, f.raw)
		}
		if _, ok := final[e.ID]; !ok {
			order = append(order, e.ID)
		}
		final[e.ID] = e
		if !f.Open && f.Op != "append" {
			settled[e.ID] = true
		}
		if a, ok := e.Content.(transcript.Agent); ok {
			if n := len(agentTexts); n > 0 && !strings.HasPrefix(a.Markdown, agentTexts[n-1]) {
				t.Fatalf("agent text went backwards: %q then %q", agentTexts[n-1], a.Markdown)
			}
			agentTexts = append(agentTexts, a.Markdown)
		}
	}
	if len(agentTexts) < 3 {
		t.Errorf("the answer arrived in %d events; want it streamed in several", len(agentTexts))
	}
	for _, id := range order {
		if !settled[id] {
			t.Errorf("entry %s never settled", id)
		}
	}

	// A reload pages the same entries, in the same order, with the same
	// final content.
	c2 := ts.dial(t)
	got := c2.pageAll(t, id)
	if len(got) != len(order) {
		t.Fatalf("reload has %d entries (%s), live had %d", len(got), kinds(got), len(order))
	}
	for i, e := range got {
		if e.ID != order[i] || transcript.FingerprintOf(e) != transcript.FingerprintOf(final[e.ID]) {
			t.Errorf("entry %d: reload %s, live %s", i, e.ID, order[i])
		}
	}
	if k := kinds(got); k != "user reasoning agent turn-receipt" {
		t.Errorf("kinds = %s", k)
	}

	// So does a server started afresh over the same folder, which reads
	// only the log.
	cold := newTestServer(t, Options{DataDir: ts.data}).dial(t).pageAll(t, id)
	if len(cold) != len(order) {
		t.Fatalf("cold reload has %d entries (%s), live had %d", len(cold), kinds(cold), len(order))
	}
	for i, e := range cold {
		if e.ID != order[i] || transcript.FingerprintOf(e) != transcript.FingerprintOf(final[e.ID]) {
			t.Errorf("cold entry %d: %s, live %s", i, e.ID, order[i])
		}
	}
}

func TestDuplicateSendIsOneTurn(t *testing.T) {
	ts, _ := newTurnsServer(t, 0, "")
	id := ts.create(t)
	c := ts.dial(t)
	c.open(id)
	a := c.send(id, "same", "hello")
	b := c.send(id, "same", "hello")
	if a.CommandID != "same" || b.CommandID != "same" {
		t.Fatalf("receipts: %+v %+v", a, b)
	}
	conflict := c.send(id, "same", "something else")
	if conflict.State != transcript.CommandRejected || conflict.Code != "command-conflict" {
		t.Fatalf("same ID, other body: %+v", conflict)
	}
	c.finished("same")
	// Polling the receipt endpoint confirms the same command, finished.
	resp, err := http.Get(ts.url + "/api/v2/conversations/" + id + "/commands/same")
	if err != nil {
		t.Fatal(err)
	}
	var polled Receipt
	err = json.UnmarshalRead(resp.Body, &polled, json.RejectUnknownMembers(false))
	resp.Body.Close()
	if err != nil || polled.State != transcript.CommandDone || polled.Kind != cmdSend {
		t.Fatalf("polled receipt: %+v %v", polled, err)
	}
	// A third delivery after the turn still starts nothing.
	if again := c.send(id, "same", "hello"); again.State != transcript.CommandDone {
		t.Fatalf("late duplicate: %+v", again)
	}
	conv, err := history.ReadFile(ts.logOf(id))
	if err != nil {
		t.Fatal(err)
	}
	users := 0
	for _, e := range conv.Document.All() {
		if _, ok := e.Content.(transcript.User); ok {
			users++
		}
	}
	if users != 1 {
		t.Fatalf("%d user entries; want 1 (%s)", users, kinds(conv.Document.Entries()))
	}
}

func TestQueuedSendsRunInOrder(t *testing.T) {
	ts, _ := newTurnsServer(t, 500, "")
	id := ts.create(t)
	c := ts.dial(t)
	c.open(id)
	c.send(id, "q1", "first message")
	c.running()
	texts := []string{"first message", "second message", "third message"}
	for i, text := range texts[1:] {
		if rc := c.send(id, fmt.Sprintf("q%d", i+2), text); rc.State != transcript.CommandQueued {
			t.Fatalf("send behind a running turn: %+v", rc)
		}
	}
	// The queue event lists both waiting sends, in order.
	q := c.await(func(f frame) bool {
		return f.Type == "event" && f.Op == "queue" && bytes.Contains(f.raw, []byte(`"q3"`))
	}).control(t)
	if len(q.Items) != 2 || q.Items[0].CommandID != "q2" || q.Items[1].CommandID != "q3" {
		t.Fatalf("queue: %+v", q.Items)
	}
	for _, k := range []string{"q1", "q2", "q3"} {
		if rc := c.finished(k); rc.State != transcript.CommandDone || rc.Code != "" {
			t.Fatalf("%s: %+v", k, rc)
		}
	}
	conv, err := history.ReadFile(ts.logOf(id))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range conv.Document.All() {
		if u, ok := e.Content.(transcript.User); ok {
			got = append(got, u.Text)
		}
	}
	if strings.Join(got, "|") != strings.Join(texts, "|") {
		t.Fatalf("turn order %q, want %q", got, texts)
	}
}

func TestRealStopIsCompareAndSet(t *testing.T) {
	ts, _ := newTurnsServer(t, 100, "")
	id := ts.create(t)
	c := ts.dial(t)
	c.open(id)
	stop := func(cmdID, turn string) Receipt {
		f := c.call(map[string]any{"type": "stop", "conversation": id, "commandId": cmdID, "turn": turn})
		return *f.Receipt
	}

	c.send(id, "t1", "write a long essay")
	first := c.running()
	if rc := stop("stop-wrong", "u-not-this-one"); rc.State != transcript.CommandRejected || rc.Code != "stop-conflict" {
		t.Fatalf("stop naming another turn: %+v", rc)
	}
	if rc := stop("stop-1", first.Turn); rc.State != transcript.CommandDone {
		t.Fatalf("stop: %+v", rc)
	}
	if rc := c.finished("t1"); rc.State != transcript.CommandStopped {
		t.Fatalf("stopped turn's receipt: %+v", rc)
	}

	// A stop that names the first turn must not stop the next one.
	c.send(id, "t2", "write another long essay")
	second := c.await(func(f frame) bool {
		if f.Type != "event" || f.Op != "turn" {
			return false
		}
		var e turnEvent
		json.Unmarshal(f.raw, &e, json.RejectUnknownMembers(false))
		return e.State == "running" && e.Turn != "" && e.Turn != first.Turn
	}).control(t)
	if rc := stop("stop-late", first.Turn); rc.State != transcript.CommandRejected || rc.Code != "stop-conflict" {
		t.Fatalf("late stop of the first turn: %+v", rc)
	}
	if rc := stop("stop-2", second.Turn); rc.State != transcript.CommandDone {
		t.Fatalf("stop the second turn: %+v", rc)
	}
	if rc := c.finished("t2"); rc.State != transcript.CommandStopped {
		t.Fatalf("second turn: %+v", rc)
	}
	if rc := stop("stop-idle", second.Turn); rc.Code != "not-running" {
		t.Fatalf("stop with nothing running: %+v", rc)
	}
	conv, err := history.ReadFile(ts.logOf(id))
	if err != nil {
		t.Fatal(err)
	}
	stopped := 0
	for _, e := range conv.Document.All() {
		if _, ok := e.Content.(transcript.Stopped); ok {
			stopped++
		}
	}
	if stopped != 2 {
		t.Fatalf("%d stopped entries, want 2: %s", stopped, kinds(conv.Document.Entries()))
	}
}

func TestFailureIsSavedBeforeItsEvent(t *testing.T) {
	ts, turns := newTurnsServer(t, 2000, "")
	// The ordering hook: the first save holding the failure waits until the
	// publisher has seen the failure and either held it back (right) or
	// published it (wrong), so the race is decided the same way every run.
	order := make(chan string, 64)
	var mu sync.Mutex
	var first string
	turns.hooks.held = func(string) { order <- "held" }
	turns.hooks.published = func(e transcript.Entry) {
		if e.Content.Kind() == transcript.KindFailure {
			order <- "published"
		}
	}
	turns.hooks.beforeSave = func(doc transcript.Document) {
		if doc.Len() == 0 || doc.At(doc.Len()-1).Content.Kind() != transcript.KindFailure {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if first == "" {
			first = <-order
		}
	}
	id := ts.create(t)
	c := ts.dial(t)
	c.open(id)
	c.send(id, "f1", "/demo fail rate-limit")
	var partial string
	f := c.await(func(f frame) bool {
		if f.Type != "event" || (f.Op != "upsert" && f.Op != "settle") {
			return false
		}
		e := f.entry(t)
		if a, ok := e.Content.(transcript.Agent); ok {
			partial = a.Markdown
		}
		return e.Content.Kind() == transcript.KindFailure
	})
	// The event is in hand: the log must already hold the entry.
	conv, err := history.ReadFile(ts.logOf(id))
	if err != nil {
		t.Fatal(err)
	}
	fe := f.entry(t)
	if _, ok := conv.Document.Index(fe.ID); !ok {
		t.Fatalf("failure %s was announced before it was saved; the log has %s", fe.ID, kinds(conv.Document.Entries()))
	}
	mu.Lock()
	if first != "held" {
		t.Fatalf("the failure was %s before its save", first)
	}
	mu.Unlock()
	if partial == "" {
		t.Error("no partial answer streamed before the failure")
	}
	if fl := fe.Content.(transcript.Failure); fl.Reason != "rate_limit" || !fl.Retryable {
		t.Errorf("failure: %+v", fl)
	}
	if rc := c.finished("f1"); rc.State != transcript.CommandFailed {
		t.Fatalf("receipt: %+v", rc)
	}
	// A reload shows the partial answer and exactly one failure, last.
	got := ts.dial(t).pageAll(t, id)
	if k := kinds(got); !strings.HasSuffix(k, "agent failure") || strings.Count(k, "failure") != 1 {
		t.Fatalf("reload: %s", k)
	}
	if a := got[len(got)-2].Content.(transcript.Agent); a.Markdown != partial {
		t.Errorf("reloaded partial %q, live %q", a.Markdown, partial)
	}

	// Retry names the failure; another ID is refused.
	r := c.call(map[string]any{"type": "retry", "conversation": id, "commandId": "r0", "failureId": "nope"})
	if r.Receipt.Code != "not-found" {
		t.Fatalf("retry of an unknown failure: %s", r.raw)
	}
	r = c.call(map[string]any{"type": "retry", "conversation": id, "commandId": "r1", "failureId": fe.ID})
	if r.Receipt.State == transcript.CommandRejected {
		t.Fatalf("retry: %s", r.raw)
	}
	if rc := c.finished("r1"); rc.State != transcript.CommandFailed {
		t.Fatalf("retry receipt (the demo fails every time): %+v", rc)
	}
}

func TestApprovalOverTheWire(t *testing.T) {
	ts, _ := newTurnsServer(t, 0, "")
	id := ts.create(t)
	c := ts.dial(t)
	c.open(id)
	c.send(id, "a1", "list the files in this folder")
	ap := c.await(func(f frame) bool {
		return f.Type == "event" && f.Op == "approvals" && bytes.Contains(f.raw, []byte(`"shell"`))
	}).control(t)
	if len(ap.Approvals) != 1 || ap.Approvals[0].Tool != "shell" {
		t.Fatalf("approvals: %+v", ap.Approvals)
	}
	inv := ap.Approvals[0].InvocationID

	// A tab that opens now sees the waiting call in the snapshot answer.
	snap := ts.dial(t).call(map[string]any{"type": "open", "conversation": id})
	var st struct {
		State controlState `json:"state"`
	}
	if err := json.Unmarshal(snap.raw, &st, json.RejectUnknownMembers(false)); err != nil || len(st.State.Approvals) != 1 {
		t.Fatalf("snapshot state: %v %s", err, snap.raw)
	}

	bad := c.call(map[string]any{"type": "approve", "conversation": id, "commandId": "ap0", "invocationId": "nope", "allow": true})
	if bad.Receipt.Code != "not-found" {
		t.Fatalf("approve unknown: %s", bad.raw)
	}
	ok := c.call(map[string]any{"type": "approve", "conversation": id, "commandId": "ap1", "invocationId": inv, "allow": true})
	if ok.Receipt.State != transcript.CommandDone {
		t.Fatalf("approve: %s", ok.raw)
	}
	// The call runs: its entry settles as a shell call that completed.
	for {
		f := c.await(func(f frame) bool { return f.Type == "event" && (f.Op == "upsert" || f.Op == "settle") })
		e := f.entry(t)
		if e.ID != inv || f.Open {
			continue
		}
		tool := e.Content.(transcript.Tool)
		if tool.Receipt.Status != transcript.ToolOK {
			t.Fatalf("approved shell call settled as %+v", tool.Receipt)
		}
		break
	}
	// The demo then reads a file, which needs no approval, and answers.
	if rc := c.finished("a1"); rc.Code != "" {
		t.Fatalf("turn: %+v", rc)
	}
}

func TestLockedConversationRefusesCommands(t *testing.T) {
	ts, turns := newTurnsServer(t, 0, "")
	id := ts.create(t)
	c := ts.dial(t)
	c.open(id)

	// A terminal writes the conversation: commands are refused, naming it.
	term, err := history.Open(ts.logOf(id))
	if err != nil {
		t.Fatal(err)
	}
	rc := c.send(id, "k1", "hello")
	if rc.State != transcript.CommandRejected || rc.Code != "locked" || !strings.Contains(rc.Reason, strconv.Itoa(os.Getpid())) {
		t.Fatalf("send while a terminal holds the lock: %+v", rc)
	}
	term.Close()

	// Once it quits, commands run here, and this server holds the lock.
	c.send(id, "k2", "hello")
	if rc := c.finished("k2"); rc.Code != "" {
		t.Fatalf("send after the terminal quit: %+v", rc)
	}
	if _, err := history.Open(ts.logOf(id)); err == nil {
		t.Fatal("the log is not locked while this server's engine has it open")
	}

	// A second server over the same folder is refused too.
	ts2, _ := newTurnsServer(t, 0, ts.data)
	c2 := ts2.dial(t)
	if rc := c2.send(id, "k3", "hello"); rc.Code != "locked" {
		t.Fatalf("second server: %+v", rc)
	}

	// An idle engine closes and releases the lock.
	turns.closeIdle(time.Now().Add(time.Hour))
	l, err := history.Open(ts.logOf(id))
	if err != nil {
		t.Fatalf("the lock was not released when the engine closed: %v", err)
	}
	l.Close()
}

func TestEditAndBranchesAreHonest(t *testing.T) {
	ts, _ := newTurnsServer(t, 0, "")
	id := ts.create(t)
	c := ts.dial(t)
	e := c.call(map[string]any{"type": "edit", "conversation": id, "commandId": "e1", "entryId": "x", "text": "y"})
	if e.Receipt.Code != "not-found" {
		t.Fatalf("edit of an entry that is not there: %s", e.raw)
	}
	sel := c.call(map[string]any{"type": "select-branch", "conversation": id, "commandId": "b1", "head": "main"})
	if sel.Receipt.State != transcript.CommandDone {
		t.Fatalf("select main: %s", sel.raw)
	}
	other := c.call(map[string]any{"type": "select-branch", "conversation": id, "commandId": "b2", "head": "b-1"})
	if other.Receipt.Code != "not-found" {
		t.Fatalf("select another head: %s", other.raw)
	}
}
