package engine_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/mcp"
	"github.com/foliodev/folio/mcp/mcpschema"
	"github.com/foliodev/folio/provider/demo"
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

// buildMCPDemo builds examples/mcpdemo for a test.
func buildMCPDemo(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcpdemo")
	if out, err := exec.Command("go", "build", "-o", bin, "../examples/mcpdemo").CombinedOutput(); err != nil {
		t.Fatalf("building examples/mcpdemo: %v\n%s", err, out)
	}
	return bin
}

type mcpView struct {
	Status  string `json:"status"`
	Updates int    `json:"updates"`
	Message string `json:"message"`
	Content []struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Item        string `json:"item"`
		Ref         string `json:"ref"`
		ContentType string `json:"contentType"`
	} `json:"content"`
}

func mcpPayload(t *testing.T, p *transcript.Presentation) mcpView {
	t.Helper()
	var v mcpView
	if p == nil || p.Schema != mcpschema.Progress {
		t.Fatalf("presentation %+v", p)
	}
	if err := json.Unmarshal(p.Payload, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// The demo model calls the example MCP server's tools through the engine:
// progress replaces one live value in one tool entry, the final content
// (text and an image artifact) is the entry's retained presentation and
// survives a reload, and a failing tool is classified while the
// conversation goes on.
func TestMCPToolsThroughTheEngine(t *testing.T) {
	bin := buildMCPDemo(t)
	ctx := context.Background()
	m := mcp.New([]mcp.ServerConfig{{Name: "demo", Command: bin}})
	defer m.Close()
	ts, err := m.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	builtin, err := tools.Builtin(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	set, err := builtin.With(ts...)
	if err != nil {
		t.Fatal(err)
	}
	arts := filepath.Join(t.TempDir(), "artifacts")
	host := toolview.New(toolview.WithArtifactDir(arts))
	defer host.Close()
	path := filepath.Join(t.TempDir(), "conversations", "c1.jsonl")
	log, err := history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	h := &harness{t: t, store: store, log: log, path: path,
		eng: engine.New(store, demo.New(demo.Options{}), engine.WithSaver(log), engine.WithTools(set),
			engine.WithHost(host), engine.WithAllowed("demo__*"))}
	defer h.eng.Close()

	// Watch the store while the call runs.
	sub := h.store.Subscribe()
	var mu sync.Mutex
	var live []mcpView
	maxEntries := 0
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for snap := range sub.C() {
			n := 0
			for _, e := range snap.Document.Entries() {
				tc, ok := e.Content.(transcript.Tool)
				if !ok || tc.Receipt.App != "demo__progress" {
					continue
				}
				n++
				if tc.Presentation != nil && tc.Presentation.Schema == mcpschema.Progress {
					var v mcpView
					if json.Unmarshal(tc.Presentation.Payload, &v) == nil && v.Status == "running" && v.Updates > 0 {
						mu.Lock()
						if len(live) == 0 || live[len(live)-1].Updates != v.Updates {
							live = append(live, v)
						}
						mu.Unlock()
					}
				}
			}
			mu.Lock()
			maxEntries = max(maxEntries, n)
			mu.Unlock()
		}
	}()
	r := h.send("c1", `/demo call demo__progress {"steps":4,"delay_ms":150}`)
	sub.Close()
	<-watched
	if r.State != engine.Done {
		t.Fatalf("turn %+v", r)
	}
	if len(live) < 2 || maxEntries != 1 {
		t.Fatalf("live progress values %+v in at most %d entries; want several values replacing each other in one entry", live, maxEntries)
	}
	for i := 1; i < len(live); i++ {
		if live[i].Updates <= live[i-1].Updates {
			t.Fatalf("progress went backwards: %+v", live)
		}
	}

	check := func(es []transcript.Entry, where string) {
		t.Helper()
		var tc transcript.Tool
		var answer string
		for _, e := range es {
			switch c := e.Content.(type) {
			case transcript.Tool:
				if c.Receipt.App == "demo__progress" {
					tc = c
				}
			case transcript.Agent:
				answer += c.Markdown
			}
		}
		if tc.Receipt.Status != transcript.ToolOK {
			t.Fatalf("%s: receipt %+v", where, tc.Receipt)
		}
		v := mcpPayload(t, tc.Presentation)
		if v.Status != "ok" || len(v.Content) != 2 || v.Content[0].Text != "counted 4 steps" || v.Content[1].Type != "image" {
			t.Fatalf("%s: final value %+v", where, v)
		}
		if len(tc.Supplementals) != 1 || tc.Supplementals[0].Key != "image-1" {
			t.Fatalf("%s: supplementals %+v", where, tc.Supplementals)
		}
		a := tc.Supplementals[0].Presentation.Artifact
		if a == nil || a.ContentType != "image/png" || a.Ref != v.Content[1].Ref || !a.Final {
			t.Fatalf("%s: image artifact %+v", where, a)
		}
		b, err := host.ReadArtifact(*a, 0, a.CommittedBytes)
		if err != nil || !strings.HasPrefix(string(b), "\x89PNG") {
			t.Fatalf("%s: artifact %v %.8q", where, err, b)
		}
		if !strings.Contains(answer, "`demo__progress` returned: counted 4 steps") {
			t.Fatalf("%s: answer %q", where, answer)
		}
	}
	check(h.entries(), "live")
	check(h.reload().Document.Entries(), "after reload")

	// A failing tool: classified, and the conversation goes on.
	r = h.send("c2", `/demo call demo__fail`)
	if r.State != engine.Done {
		t.Fatalf("turn after the failing tool %+v", r)
	}
	var failed transcript.Tool
	var answer string
	for _, e := range h.entries() {
		switch c := e.Content.(type) {
		case transcript.Tool:
			if c.Receipt.App == "demo__fail" {
				failed = c
			}
		case transcript.Agent:
			answer = c.Markdown
		}
	}
	if failed.Receipt.Status != transcript.ToolFailed || failed.Receipt.Reason != "mcp_tool_error" {
		t.Fatalf("failed receipt %+v", failed.Receipt)
	}
	if v := mcpPayload(t, failed.Presentation); v.Status != "error" {
		t.Fatalf("failed value %+v", v)
	}
	if !strings.Contains(answer, "`demo__fail` failed: this tool always fails") {
		t.Fatalf("answer %q", answer)
	}
}

// MCP tools need approval like the built-in writers: nothing allows them
// by default, and "server__*" allows one server's tools only.
func TestMCPToolsNeedApproval(t *testing.T) {
	bin := buildMCPDemo(t)
	m := mcp.New([]mcp.ServerConfig{{Name: "demo", Command: bin}})
	defer m.Close()
	ts, err := m.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	set, err := tools.NewSet(ts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		allow  []string
		asked  bool
		status transcript.ToolStatus
	}{
		{nil, true, transcript.ToolDenied},
		{[]string{"other__*"}, true, transcript.ToolDenied},
		{[]string{"demo__fail"}, false, transcript.ToolFailed},
		{[]string{"demo__*"}, false, transcript.ToolFailed},
	} {
		asked := false
		eng := engine.New(transcript.NewStore(), demo.New(demo.Options{}), engine.WithTools(set), engine.WithAllowed(c.allow...),
			engine.WithApprover(func(context.Context, engine.Approval) engine.Decision { asked = true; return engine.Deny }))
		if _, err := eng.Send(context.Background(), "c", "/demo call demo__fail", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := eng.Wait(context.Background(), "c"); err != nil {
			t.Fatal(err)
		}
		var st transcript.ToolStatus
		for _, e := range eng.Store().Snapshot().Document.Entries() {
			if tc, ok := e.Content.(transcript.Tool); ok {
				st = tc.Receipt.Status
			}
		}
		eng.Close()
		if asked != c.asked || st != c.status {
			t.Errorf("allow %v: asked %v status %q, want %v %q", c.allow, asked, st, c.asked, c.status)
		}
	}
}

// Stopping a turn while an MCP call runs cancels the call: the server is
// told (the SDK sends notifications/cancelled) and the entry ends canceled.
func TestMCPStopCancelsTheCall(t *testing.T) {
	bin := buildMCPDemo(t)
	events := filepath.Join(t.TempDir(), "events")
	m := mcp.New([]mcp.ServerConfig{{Name: "demo", Command: bin, Env: map[string]string{"MCPDEMO_EVENTS": events}}})
	defer m.Close()
	ts, err := m.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	set, err := tools.NewSet(ts...)
	if err != nil {
		t.Fatal(err)
	}
	store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	eng := engine.New(store, demo.New(demo.Options{}), engine.WithTools(set), engine.WithAllowed("demo__*"))
	defer eng.Close()
	sub := store.Subscribe()
	defer sub.Close()
	if _, err := eng.Send(context.Background(), "c", `/demo call demo__progress {"steps":50,"delay_ms":1000}`, nil); err != nil {
		t.Fatal(err)
	}
	// Wait for the first progress value in the entry, then stop.
	for snap := range sub.C() {
		running := false
		for _, e := range snap.Document.Entries() {
			if tc, ok := e.Content.(transcript.Tool); ok && tc.Presentation != nil && strings.Contains(string(tc.Presentation.Payload), `"updates":1`) {
				running = true
			}
		}
		if running {
			break
		}
	}
	if !eng.Stop() {
		t.Fatal("no turn to stop")
	}
	if _, err := eng.Wait(context.Background(), "c"); err != nil {
		t.Fatal(err)
	}
	var tc transcript.Tool
	for _, e := range store.Snapshot().Document.Entries() {
		if c, ok := e.Content.(transcript.Tool); ok {
			tc = c
		}
	}
	if tc.Receipt.Status != transcript.ToolFailed || tc.Receipt.Reason != "canceled" {
		t.Fatalf("receipt %+v", tc.Receipt)
	}
	// The server saw the cancellation (it writes the line when its
	// handler's context ends); poll, since it is another process.
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(events)
		if strings.Contains(string(b), "cancelled progress") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server saw no cancellation:\n%s", b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
