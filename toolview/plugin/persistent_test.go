package plugin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

// persistentScript writes a persistent plugin whose loop body (run for each
// line in $request, with the call's id in $id) is the given sh.
func persistentScript(t *testing.T, body string) (*Plugin, string) {
	t.Helper()
	src := "#!/bin/sh\nwhile IFS= read -r request; do\n" +
		`id=$(printf '%s' "$request" | sed -n 's/^{"jsonrpc":"2.0","id":\([0-9]*\),.*/\1/p')` + "\n" + body + "\ndone\n"
	p, dir := writePlugin(t, src, `{"name":"p","executable":"plugin.sh","persistent":true,"tools":[{"name":"t","inputSchema":{"type":"object"}}],
		"adapters":[{"schema":"s","version":1}]}`)
	t.Cleanup(func() { _ = p.Close() })
	return p, dir
}

const answer = `case $request in *'"method":"tools/call"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":"done %s"}}\n' "$id" "$id";; esac`

// 100 calls to the example plugin start one process, and each gets its own
// presentation and result; concurrent calls are answered by ID.
func TestPersistentManyCallsOneProcess(t *testing.T) {
	p := example(t)
	if !p.Persistent() {
		t.Fatal("the example plugin is not persistent")
	}
	h := toolview.New(toolview.WithArtifactDir(t.TempDir()))
	defer h.Close()
	for i := range 100 {
		n := i%3 + 1
		rec, err := h.Run(context.Background(), toolview.Spec{Tool: "countdown", Producer: p.Manifest}, fmt.Appendf(nil, `{"n":%d}`, n), p.Func())
		if err != nil || rec.Outcome.Status != transcript.ToolOK || rec.Result.Text != fmt.Sprintf("counted down from %d", n) {
			t.Fatalf("call %d: %v %+v", i, err, rec)
		}
		if a := rec.Presentation.Artifact; a == nil || a.CommittedBytes != int64(7*n) {
			t.Fatalf("call %d: artifact %+v", i, a)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for i := range 10 {
		wg.Go(func() {
			n := i + 1
			rec, err := h.Run(context.Background(), toolview.Spec{Tool: "countdown", Producer: p.Manifest}, fmt.Appendf(nil, `{"n":%d}`, n), p.Func())
			if err != nil || rec.Result.Text != fmt.Sprintf("counted down from %d", n) {
				errs <- fmt.Errorf("concurrent call %d: %v %+v", n, err, rec.Result)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := p.Starts(); got != 1 {
		t.Fatalf("%d processes started for 110 calls, want 1", got)
	}
}

// A plugin that dies mid-call fails that call as plugin_exited; the next
// call starts a new process.
func TestPersistentCrashRestarts(t *testing.T) {
	p, _ := persistentScript(t, `case $request in *crash*) exit 3;; esac
`+answer)
	h := toolview.New()
	defer h.Close()
	run := func(args string) toolview.Record {
		rec, err := h.Run(context.Background(), toolview.Spec{Tool: "t", Producer: p.Manifest}, []byte(args), p.Func())
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	if rec := run(`{}`); rec.Outcome.Status != transcript.ToolOK {
		t.Fatalf("first call %+v", rec)
	}
	first := p.PID()
	if rec := run(`{"crash":true}`); rec.Outcome.Reason != "plugin_exited" {
		t.Fatalf("crashed call %+v", rec.Outcome)
	}
	rec := run(`{}`)
	if rec.Outcome.Status != transcript.ToolOK || !strings.HasPrefix(rec.Result.Text, "done ") {
		t.Fatalf("call after the crash %+v", rec)
	}
	if p.Starts() != 2 || p.PID() == first {
		t.Fatalf("starts %d, pid %d then %d", p.Starts(), first, p.PID())
	}
}

// Cancelling a call tells the plugin, and its late answer is dropped.
func TestPersistentCancel(t *testing.T) {
	p, dir := persistentScript(t, `case $request in *tools/cancel*) echo "$request" >>cancels; continue;; esac
case $request in *slow*) sleep 1;; esac
`+answer)
	h := toolview.New()
	defer h.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec, _ := h.Run(ctx, toolview.Spec{Tool: "t", Producer: p.Manifest}, []byte(`{"slow":true}`), p.Func())
	if rec.Outcome.Reason != "canceled" {
		t.Fatalf("outcome %+v", rec.Outcome)
	}
	rec, _ = h.Run(context.Background(), toolview.Spec{Tool: "t", Producer: p.Manifest}, []byte(`{}`), p.Func())
	if rec.Outcome.Status != transcript.ToolOK {
		t.Fatalf("next call %+v", rec)
	}
	b, err := os.ReadFile(filepath.Join(dir, "cancels"))
	if err != nil || !strings.Contains(string(b), `"method":"tools/cancel","params":{"call":1}`) {
		t.Fatalf("the plugin got no cancellation: %q %v", b, err)
	}
	if p.Stray() != 1 || p.Starts() != 1 {
		t.Fatalf("stray %d starts %d", p.Stray(), p.Starts())
	}
}

// Close stops the plugin and whatever it started.
func TestPersistentCloseKillsTheGroup(t *testing.T) {
	p, dir := persistentScript(t, `[ -f child ] || { sleep 300 & echo $! >child; }
`+answer)
	h := toolview.New()
	defer h.Close()
	if rec, _ := h.Run(context.Background(), toolview.Spec{Tool: "t", Producer: p.Manifest}, []byte(`{}`), p.Func()); rec.Outcome.Status != transcript.ToolOK {
		t.Fatalf("%+v", rec)
	}
	pid := p.PID()
	b, err := os.ReadFile(filepath.Join(dir, "child"))
	if err != nil {
		t.Fatal(err)
	}
	child, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int{pid, child} {
		deadline := time.Now().Add(10 * time.Second)
		for !gone(id) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d outlived Close", id)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	rec, _ := h.Run(context.Background(), toolview.Spec{Tool: "t", Producer: p.Manifest}, []byte(`{}`), p.Func())
	if rec.Outcome.Reason != "plugin_unavailable" {
		t.Fatalf("call after Close %+v", rec.Outcome)
	}
}

func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] == 'Z'
}
