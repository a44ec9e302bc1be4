package mcp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/mcp/mcpschema"
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/toolview"
)

// demoBin is examples/mcpdemo, built once for the package's tests.
var demoBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcpdemo")
	if err != nil {
		panic(err)
	}
	demoBin = filepath.Join(dir, "mcpdemo")
	out, err := exec.Command("go", "build", "-o", demoBin, "../examples/mcpdemo").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building examples/mcpdemo: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// rig is a manager for the example server and a host with an artifact
// folder, recording every primary value the host publishes.
type rig struct {
	t      *testing.T
	m      *Manager
	host   *toolview.Host
	set    *tools.Set
	events string

	mu     sync.Mutex
	values []mcpschema.Call
	seen   chan mcpschema.Call
}

func newRig(t *testing.T, env map[string]string, opts ...Option) *rig {
	t.Helper()
	r := &rig{t: t, events: filepath.Join(t.TempDir(), "events"), seen: make(chan mcpschema.Call, 256)}
	e := map[string]string{"MCPDEMO_EVENTS": r.events}
	for k, v := range env {
		e[k] = v
	}
	r.m = New([]ServerConfig{{Name: "demo", Command: demoBin, Env: e}}, opts...)
	t.Cleanup(r.m.Close)
	r.host = toolview.New(toolview.WithArtifactDir(filepath.Join(t.TempDir(), "artifacts")))
	t.Cleanup(func() { r.host.Close() })
	r.host.Subscribe(func(ch toolview.Change) {
		if ch.Item != "" || ch.Value == nil || ch.Value.Schema != mcpschema.Progress {
			return
		}
		var p mcpschema.Call
		if err := json.Unmarshal(ch.Value.Payload, &p); err != nil {
			t.Errorf("payload %s: %v", ch.Value.Payload, err)
			return
		}
		r.mu.Lock()
		r.values = append(r.values, p)
		r.mu.Unlock()
		select {
		case r.seen <- p:
		default:
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ts, err := r.m.Tools(ctx)
	if err != nil {
		t.Fatalf("Tools: %v", err)
	}
	if r.set, err = tools.NewSet(ts...); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *rig) call(ctx context.Context, name, args string) toolview.Record {
	r.t.Helper()
	tl, ok := r.set.Get(name)
	if !ok {
		r.t.Fatalf("no tool %s in %v", name, r.set.Names())
	}
	rec, err := r.host.Run(ctx, toolview.Spec{Tool: name, Producer: r.set.Manifest()}, []byte(args), tl.Run)
	if err != nil {
		r.t.Fatalf("Run %s: %v", name, err)
	}
	return rec
}

// waitProgress waits for a running value with at least one update.
func (r *rig) waitProgress() mcpschema.Call {
	r.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case p := <-r.seen:
			if p.Status == mcpschema.StatusRunning && p.Updates > 0 {
				return p
			}
		case <-timeout:
			r.t.Fatal("no progress arrived")
		}
	}
}

func (r *rig) eventLines() []string {
	b, _ := os.ReadFile(r.events)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// eventually polls cond until it holds (for effects in other processes,
// which give no signal), failing after a generous bound.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never happened: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func primary(t *testing.T, rec toolview.Record) mcpschema.Call {
	t.Helper()
	if rec.Presentation == nil {
		t.Fatalf("record has no presentation: %+v", rec)
	}
	if rec.Presentation.Schema != mcpschema.Progress {
		t.Fatalf("schema %q", rec.Presentation.Schema)
	}
	var p mcpschema.Call
	if err := json.Unmarshal(rec.Presentation.Payload, &p); err != nil {
		t.Fatal(err)
	}
	return p
}
