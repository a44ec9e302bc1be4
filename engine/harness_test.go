package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

type harness struct {
	t     *testing.T
	store *transcript.Store
	prov  *scripted
	eng   *engine.Engine
	log   *history.Log
	path  string
}

func newHarness(t *testing.T, prov *scripted, opts ...engine.Option) *harness {
	t.Helper()
	path := filepath.Join(t.TempDir(), "conversations", "c1.jsonl")
	log, err := history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	opts = append([]engine.Option{engine.WithSaver(log), engine.WithModel("test-model"),
		engine.WithJitter(func() float64 { return 0 })}, opts...)
	h := &harness{t: t, store: store, prov: prov, log: log, path: path}
	h.eng = engine.New(store, prov, opts...)
	t.Cleanup(func() {
		h.eng.Close()
		log.Close()
	})
	return h
}

// send sends text and waits for its turn to end.
func (h *harness) send(id, text string) engine.Receipt {
	h.t.Helper()
	if _, err := h.eng.Send(context.Background(), id, text, nil); err != nil {
		h.t.Fatal(err)
	}
	r, err := h.eng.Wait(context.Background(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

// idle waits until the store's snapshot shows no running turn and no
// command running or queued: the engine at rest, as every view sees it.
// A queued Retry is not in Live.Queue (it has no text), so idle does not
// wait for one that has not started.
func (h *harness) idle() {
	h.t.Helper()
	sub := h.store.Subscribe()
	defer sub.Close()
	for snap := range sub.C() {
		if idleLive(snap.Live) {
			return
		}
	}
}

func idleLive(l transcript.Live) bool {
	if _, running := l.Turn(); running {
		return false
	}
	for _, c := range l.Queue.All() {
		if c.State == transcript.CommandRunning || c.State == transcript.CommandQueued {
			return false
		}
	}
	return true
}

func (h *harness) entries() []transcript.Entry { return h.store.Snapshot().Document.Entries() }

func kinds(es []transcript.Entry) string {
	var k []string
	for _, e := range es {
		k = append(k, string(e.Content.Kind()))
	}
	return strings.Join(k, " ")
}

func (h *harness) wantKinds(want string) []transcript.Entry {
	h.t.Helper()
	es := h.entries()
	if got := kinds(es); got != want {
		h.t.Fatalf("entries: got  %s\n          want %s", got, want)
	}
	return es
}

// reload reads the saved log from disk, as a new process would.
func (h *harness) reload() *history.Conversation {
	h.t.Helper()
	f, err := os.Open(h.path)
	if err != nil {
		h.t.Fatal(err)
	}
	defer f.Close()
	c, err := history.Read(f)
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

// fakeTool is a tool whose behaviour a test sets; it records the arguments
// it was invoked with.
type fakeTool struct {
	name     string
	approval bool
	run      func(ctx context.Context, inv *toolview.Invocation, args []byte) (toolview.Result, error)

	mu   sync.Mutex
	args []string
}

func (f *fakeTool) Decl() toolview.ToolDecl {
	return toolview.ToolDecl{Name: f.name, Description: "test tool", InputSchema: jsontext.Value(`{"type":"object"}`)}
}
func (f *fakeTool) NeedsApproval() bool { return f.approval }
func (f *fakeTool) Run(ctx context.Context, inv *toolview.Invocation, args []byte) (toolview.Result, error) {
	f.mu.Lock()
	f.args = append(f.args, string(args))
	f.mu.Unlock()
	if f.run != nil {
		return f.run(ctx, inv, args)
	}
	return toolview.Result{Text: "ok: " + string(args), Summary: f.name}, nil
}
func (f *fakeTool) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.args...)
}

func toolSet(t *testing.T, ts ...tools.Tool) *tools.Set {
	t.Helper()
	s, err := tools.NewSet(ts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var _ = time.Second

var engine_WithTools = engine.WithTools

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func waitForCancel(ctx context.Context, _ *toolview.Invocation, _ []byte) (toolview.Result, error) {
	<-ctx.Done()
	return toolview.Result{}, ctx.Err()
}
