package server

import (
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

func userTexts(es []transcript.Entry) string {
	var out []string
	for _, e := range es {
		if u, ok := e.Content.(transcript.User); ok {
			out = append(out, u.Text)
		}
	}
	return strings.Join(out, "|")
}

func getJSON(t *testing.T, url string, v any) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	if _, err := io_copy(&b, resp); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b.String())
	}
	if err := json.Unmarshal([]byte(b.String()), v, json.RejectUnknownMembers(false)); err != nil {
		t.Fatalf("GET %s: %v: %s", url, err, b.String())
	}
	return b.String()
}

// Edit-and-resend and branch selection over a real WebSocket, with the
// real engine: the edit makes a branch whose pages show the edited message,
// tokens of the old head are refused with a rebuild, selecting main shows
// the original again, metadata lists the branches and their alternatives
// without the graph, and the graph request returns the tree.
func TestEditAndSelectBranchOverTheWire(t *testing.T) {
	ts, _ := newTurnsServer(t, 0, "")
	id := ts.create(t)
	c := ts.dial(t)
	c.open(id)
	c.send(id, "k1", "first")
	c.finished("k1")
	c.send(id, "k2", "second")
	c.finished("k2")
	es := c.pageAll(t, id)
	if got := userTexts(es); got != "first|second" {
		t.Fatalf("before the edit: %s", got)
	}
	var second, beforeSecond string
	for i, e := range es {
		if u, ok := e.Content.(transcript.User); ok && u.Text == "second" {
			second, beforeSecond = e.ID, es[i-1].ID
		}
	}
	old := c.open(id)

	// Edit while nothing runs: a new branch, its head in the receipt.
	ed := c.call(map[string]any{"type": "edit", "conversation": id, "commandId": "e1", "entryId": second, "text": "second, edited"})
	if ed.Receipt == nil || ed.Receipt.State == transcript.CommandRejected || ed.Receipt.Head != "b1" {
		t.Fatalf("edit: %s", ed.raw)
	}
	c.await(func(f frame) bool { return f.Type == "event" && f.Op == "head" && f.Head == "b1" })
	if r := c.finished("e1"); r.State != transcript.CommandDone || r.Code != "" {
		t.Fatalf("edited turn: %+v", r)
	}
	stale := c.page(old.Token, id, "earliest", "after", 1<<20)
	if stale.Type != "error" || !stale.Rebuild {
		t.Fatalf("a token of the old head: %s", stale.raw)
	}
	es = c.pageAll(t, id)
	if got := userTexts(es); got != "first|second, edited" {
		t.Fatalf("the new head shows %s", got)
	}
	var edited string
	for _, e := range es {
		if u, ok := e.Content.(transcript.User); ok && u.Text == "second, edited" {
			edited = e.ID
		}
	}
	if snap := c.open(id); snap.Head != "b1" {
		t.Fatalf("snapshot head %q", snap.Head)
	}

	var m wireMeta
	raw := getJSON(t, ts.url+"/api/v2/conversations/"+id, &m)
	if m.Head != "b1" || len(m.Branches) != 2 || m.Branches[1].Head != "b1" || m.Branches[1].ForkedFrom != "main" ||
		m.Branches[1].After != beforeSecond || m.Branches[1].Label != "second, edited" {
		t.Fatalf("meta %s", raw)
	}
	if len(m.Alternatives) != 1 || m.Alternatives[0].EntryID != edited || m.Alternatives[0].Index != 1 ||
		strings.Join(m.Alternatives[0].Heads, ",") != "main,b1" {
		t.Fatalf("alternatives %s", raw)
	}
	if strings.Contains(raw, "compactions") || strings.Contains(raw, "links") {
		t.Fatalf("metadata carries the graph: %s", raw)
	}

	// Back to main: the original shows again, and metadata points at it.
	sel := c.call(map[string]any{"type": "select-branch", "conversation": id, "commandId": "s1", "head": "main"})
	if sel.Receipt == nil || sel.Receipt.State != transcript.CommandDone || sel.Receipt.Head != "main" {
		t.Fatalf("select main: %s", sel.raw)
	}
	if got := userTexts(c.pageAll(t, id)); got != "first|second" {
		t.Fatalf("main shows %s", got)
	}
	raw = getJSON(t, ts.url+"/api/v2/conversations/"+id, &m)
	if m.Head != "main" || len(m.Alternatives) != 1 || m.Alternatives[0].EntryID != second || m.Alternatives[0].Index != 0 {
		t.Fatalf("meta after select %s", raw)
	}
	if r := c.call(map[string]any{"type": "select-branch", "conversation": id, "commandId": "s2", "head": "b7"}); r.Receipt == nil || r.Receipt.Code != "not-found" {
		t.Fatalf("select an unknown head: %s", r.raw)
	}
	if r := c.call(map[string]any{"type": "send", "conversation": id, "commandId": "k9", "text": "x", "head": "b1"}); r.Receipt == nil || r.Receipt.Code != "not-found" {
		t.Fatalf("send to a head that is not selected: %s", r.raw)
	}

	var g branchGraph
	raw = getJSON(t, ts.url+"/api/v2/conversations/"+id+"/graph", &g)
	if g.Head != "main" || len(g.Branches) != 2 || g.Branches[1].ForkedFrom != "main" || g.Compactions == nil || g.Links == nil {
		t.Fatalf("graph %s", raw)
	}

	conv, err := history.ReadFile(ts.logOf(id))
	if err != nil || conv.Head != "main" || len(conv.Problems) != 0 {
		t.Fatalf("log: head %q problems %v err %v", conv.Head, conv.Problems, err)
	}
}

// A select-branch receipt is final only once the head switch's new
// generation is announced: a tab that opens after the receipt holds a token
// that stays valid until something new happens. The publisher is held at
// the announcement until the tab has opened, unless the command itself
// waits for it (then holding it longer would hold the receipt too); on the
// old ordering the announcement came after the receipt, moved the
// generation under the fresh token, and this failed every time.
func TestSelectBranchMovesTheGenerationBeforeItsReceipt(t *testing.T) {
	ts, turns := newTurnsServer(t, 0, "")
	var armed atomic.Bool
	hold := make(chan struct{})
	release := sync.OnceFunc(func() { close(hold) })
	turns.hooks.replacing = func(string) {
		if armed.Load() {
			<-hold
		}
	}
	turns.hooks.catchUp = func(string) {
		if armed.Load() {
			release()
		}
	}
	id := ts.create(t)
	c := ts.dial(t)
	c.open(id)
	c.send(id, "k1", "first")
	c.finished("k1")
	var first string
	for _, e := range c.pageAll(t, id) {
		if u, ok := e.Content.(transcript.User); ok && u.Text == "first" {
			first = e.ID
		}
	}
	ed := c.call(map[string]any{"type": "edit", "conversation": id, "commandId": "e1", "entryId": first, "text": "first, edited"})
	if ed.Receipt == nil || ed.Receipt.Head != "b1" {
		t.Fatalf("edit: %s", ed.raw)
	}
	c.finished("e1")

	armed.Store(true)
	sel := c.call(map[string]any{"type": "select-branch", "conversation": id, "commandId": "s1", "head": "main"})
	if sel.Receipt == nil || sel.Receipt.State != transcript.CommandDone || sel.Receipt.Head != "main" {
		t.Fatalf("select main: %s", sel.raw)
	}
	snap := c.open(id)
	release()
	// Something new: a turn on main. Its final receipt goes out after
	// everything the publisher had left to announce.
	c.send(id, "k2", "again")
	done := c.await(func(f frame) bool {
		return f.Type == "event" && f.Op == "receipt" && f.Receipt.CommandID == "k2" && f.Receipt.State.Final()
	})
	if done.Generation != snap.Generation {
		t.Fatalf("the generation moved after the select's final receipt: snapshot %d, later events %d", snap.Generation, done.Generation)
	}
	if p := c.page(snap.Token, id, "earliest", "after", 1<<20); p.Type == "error" {
		t.Fatalf("the token of an open after the select's final receipt: %s", p.raw)
	}
	for _, f := range c.held {
		if f.Type == "event" && f.Op == "replaced" && f.Generation > snap.Generation {
			t.Fatalf("replaced after the select's final receipt: %s", f.raw)
		}
	}
}

// A branched log written by another process is followed: its head switch
// reaches the tab as a new generation and a head event, and pages show the
// new head.
func TestFollowerSeesAHeadSwitchWrittenElsewhere(t *testing.T) {
	ts := newTestServer(t, Options{})
	id := "c-branched"
	l, err := history.Open(ts.logOf(id))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	at := tsAt(1)
	d, _ := transcript.NewDocument(id, []transcript.Entry{
		{ID: "u1", Content: transcript.User{Text: "first"}, Timestamp: at},
		{ID: "a1", Content: transcript.Agent{Markdown: "one"}, Timestamp: at},
		{ID: "u2", Content: transcript.User{Text: "second"}, Timestamp: at},
	})
	if err := l.Save(d, nil); err != nil {
		t.Fatal(err)
	}
	c := ts.dial(t)
	snap := c.open(id)
	if snap.Head != "main" {
		t.Fatalf("head %q", snap.Head)
	}
	b, err := l.Fork(history.Main, "a1", 0, "other")
	if err != nil {
		t.Fatal(err)
	}
	bc, err := l.SetHead(b)
	if err != nil {
		t.Fatal(err)
	}
	bd, _ := bc.Document.Append(transcript.Entry{ID: "u2b", Content: transcript.User{Text: "second, other"}, Timestamp: at})
	if err := l.Save(bd, nil); err != nil {
		t.Fatal(err)
	}
	c.await(func(f frame) bool { return f.Type == "event" && f.Op == "replaced" })
	c.await(func(f frame) bool { return f.Type == "event" && f.Op == "head" && f.Head == b })
	if got := userTexts(c.pageAll(t, id)); got != "first|second, other" {
		t.Fatalf("the followed head shows %s", got)
	}
	// Appends on the branch arrive as events.
	bd2, _ := bd.Append(transcript.Entry{ID: "a2b", Content: transcript.Agent{Markdown: "two"}, Timestamp: at})
	if err := l.Save(bd2, nil); err != nil {
		t.Fatal(err)
	}
	ev := c.await(func(f frame) bool {
		return f.Type == "event" && (f.Op == "settle" || f.Op == "upsert") && strings.Contains(string(f.Entry), `"a2b"`)
	})
	if ev.After != "u2b" {
		t.Fatalf("event %s", ev.raw)
	}
	// Main's records are not the followed head's.
	if snap := c.open(id); snap.Head != b {
		t.Fatalf("head %q", snap.Head)
	}
}

// While a turn runs, edit and select-branch are refused with busy and
// change nothing; after a stop the edit goes through.
func TestBranchCommandsWhileATurnRunsAreBusy(t *testing.T) {
	ts, _ := newTurnsServer(t, 100, "")
	id := ts.create(t)
	c := ts.dial(t)
	c.open(id)
	c.send(id, "t1", "write a long essay")
	run := c.running()
	before, err := history.ReadFile(ts.logOf(id))
	if err != nil {
		t.Fatal(err)
	}
	ed := c.call(map[string]any{"type": "edit", "conversation": id, "commandId": "e1", "entryId": run.Turn, "text": "shorter, please"})
	if ed.Receipt == nil || ed.Receipt.State != transcript.CommandRejected || ed.Receipt.Code != "busy" {
		t.Fatalf("edit while running: %s", ed.raw)
	}
	sel := c.call(map[string]any{"type": "select-branch", "conversation": id, "commandId": "s1", "head": "b1"})
	if sel.Receipt == nil || sel.Receipt.Code != "busy" {
		t.Fatalf("select while running: %s", sel.raw)
	}
	if after, _ := history.ReadFile(ts.logOf(id)); len(after.Branches) != len(before.Branches) {
		t.Fatal("a refused edit made a branch")
	}
	if f := c.call(map[string]any{"type": "stop", "conversation": id, "commandId": "x1", "turn": run.Turn}); f.Receipt.State != transcript.CommandDone {
		t.Fatalf("stop: %s", f.raw)
	}
	c.finished("t1")
	ed = c.call(map[string]any{"type": "edit", "conversation": id, "commandId": "e2", "entryId": run.Turn, "text": "shorter, please"})
	if ed.Receipt == nil || ed.Receipt.State == transcript.CommandRejected || ed.Receipt.Head != "b1" {
		t.Fatalf("edit after the stop: %s", ed.raw)
	}
	// The edited first message forks before every entry: the new head
	// holds only the new turn.
	c.await(func(f frame) bool { return f.Type == "event" && f.Op == "head" && f.Head == "b1" })
	next := c.await(func(f frame) bool {
		if f.Type != "event" || f.Op != "turn" {
			return false
		}
		e := f.control(t)
		return e.State == "running" && e.Turn != "" && e.Turn != run.Turn
	}).control(t)
	c.call(map[string]any{"type": "stop", "conversation": id, "commandId": "x2", "turn": next.Turn})
	c.finished("e2")
	if got := userTexts(c.pageAll(t, id)); got != "shorter, please" {
		t.Fatalf("the new head shows %s", got)
	}
}

// The graph request reads the tree: branches, compactions of the selected
// head (entries and coverage records) and child links.
func TestGraphHasBranchesCoverageAndChildren(t *testing.T) {
	ts := newTestServer(t, Options{})
	id := "c-graph"
	l, err := history.Open(ts.logOf(id))
	if err != nil {
		t.Fatal(err)
	}
	at := tsAt(1)
	d, _ := transcript.NewDocument(id, []transcript.Entry{
		{ID: "u1", Content: transcript.User{Text: "first"}, Timestamp: at},
		{ID: "a1", Content: transcript.Agent{Markdown: "one"}, Timestamp: at},
		{ID: "k1", Content: transcript.Compaction{Summary: "s", Covers: transcript.CompactionRange{FromID: "u1", ToID: "a1"}}, Timestamp: at},
		{ID: "u2", Content: transcript.User{Text: "second"}, Timestamp: at},
	})
	if err := l.Save(d, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Fork(history.Main, "k1", 0, "again"); err != nil {
		t.Fatal(err)
	}
	l.Close()
	f, err := os.OpenFile(ts.logOf(id), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"coverage","at":"2026-03-01T00:00:02.000Z","summaryEntry":"k0","entries":{"fromId":"x1","toId":"x9"},"messages":{"from":0,"to":4}}` + "\n")
	f.WriteString(`{"type":"child","at":"2026-03-01T00:00:02.000Z","conversationId":"c-graph.k-9","parentEntry":"a1","agentId":"researcher","title":"find it"}` + "\n")
	f.Close()

	var m wireMeta
	raw := getJSON(t, ts.url+"/api/v2/conversations/"+id, &m)
	if m.Head != "main" || len(m.Branches) != 2 || len(m.Alternatives) != 1 || m.Alternatives[0].EntryID != "u2" {
		t.Fatalf("meta %s", raw)
	}
	var g branchGraph
	raw = getJSON(t, ts.url+"/api/v2/conversations/"+id+"/graph", &g)
	if len(g.Branches) != 2 || g.Branches[1].After != "k1" || g.Branches[1].Label != "again" {
		t.Fatalf("graph branches %s", raw)
	}
	if len(g.Compactions) != 2 || g.Compactions[0] != (graphCover{EntryID: "k1", FromID: "u1", ToID: "a1"}) ||
		g.Compactions[1] != (graphCover{EntryID: "k0", FromID: "x1", ToID: "x9"}) {
		t.Fatalf("graph compactions %s", raw)
	}
	if len(g.Links) != 1 || g.Links[0] != (graphLink{From: "a1", Kind: "spawn", Conversation: "c-graph.k-9"}) {
		t.Fatalf("graph links %s", raw)
	}
}

// A fresh server opens a log whose head is a branch at that head, whether
// the open names it or not, and refuses another head.
func TestFreshServerOpensTheLogsHead(t *testing.T) {
	ts := newTestServer(t, Options{})
	id := "c-head"
	l, err := history.Open(ts.logOf(id))
	if err != nil {
		t.Fatal(err)
	}
	at := tsAt(1)
	d, _ := transcript.NewDocument(id, []transcript.Entry{
		{ID: "u1", Content: transcript.User{Text: "first"}, Timestamp: at},
		{ID: "a1", Content: transcript.Agent{Markdown: "one"}, Timestamp: at},
	})
	if err := l.Save(d, nil); err != nil {
		t.Fatal(err)
	}
	b, _ := l.Fork(history.Main, "", 0, "")
	bc, err := l.SetHead(b)
	if err != nil {
		t.Fatal(err)
	}
	bd, _ := bc.Document.Append(transcript.Entry{ID: "u1b", Content: transcript.User{Text: "other first"}, Timestamp: at})
	if err := l.Save(bd, nil); err != nil {
		t.Fatal(err)
	}
	l.Close()
	c := ts.dial(t)
	if f := c.call(map[string]any{"type": "open", "conversation": id, "head": "main"}); f.Type != "error" || f.Code != "not-found" {
		t.Fatalf("open main while %s is selected: %s", b, f.raw)
	}
	snap := c.call(map[string]any{"type": "open", "conversation": id, "head": b})
	if snap.Type != "snapshot" || snap.Head != b || snap.Entries != 1 {
		t.Fatalf("open %s: %s", b, snap.raw)
	}
	if got := userTexts(c.pageAll(t, id)); got != "other first" {
		t.Fatalf("pages show %s", got)
	}
}
