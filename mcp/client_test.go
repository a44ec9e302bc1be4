package mcp

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/foliodev/folio/mcp/mcpschema"
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

func TestProgressAndResult(t *testing.T) {
	r := newRig(t, nil)
	if got := r.set.Names(); strings.Join(got, ",") != "demo__fail,demo__progress" && strings.Join(got, ",") != "demo__progress,demo__fail" {
		t.Fatalf("tools %v", got)
	}
	rec := r.call(context.Background(), "demo__progress", `{"steps":3,"delay_ms":60}`)
	if rec.Outcome.Status != transcript.ToolOK {
		t.Fatalf("outcome %+v: %s", rec.Outcome, rec.Result.Text)
	}
	// Progress replaced one value: each published value is the whole
	// state, with a growing update count, never a list of lines.
	r.mu.Lock()
	var running []mcpschema.Call
	for _, v := range r.values {
		if v.Status == mcpschema.StatusRunning && v.Updates > 0 {
			running = append(running, v)
		}
	}
	r.mu.Unlock()
	if len(running) == 0 {
		t.Fatal("no progress value was published")
	}
	last := running[len(running)-1]
	if last.Total != 3 || last.Message == "" || len(last.Content) != 0 {
		t.Fatalf("progress value %+v", last)
	}
	p := primary(t, rec)
	if p.Status != mcpschema.StatusOK || len(p.Content) != 2 {
		t.Fatalf("final value %+v", p)
	}
	if p.Content[0].Type != "text" || p.Content[0].Text != "counted 3 steps" {
		t.Fatalf("text block %+v", p.Content[0])
	}
	img := p.Content[1]
	if img.Type != "image" || img.ContentType != "image/png" || img.Item != "image-1" || img.Ref == "" {
		t.Fatalf("image block %+v", img)
	}
	if len(rec.Supplementals) != 1 || rec.Supplementals[0].Key != "image-1" {
		t.Fatalf("supplementals %+v", rec.Supplementals)
	}
	a := rec.Supplementals[0].Presentation.Artifact
	if a == nil || a.Ref != img.Ref || a.ContentType != "image/png" || !a.Final || a.CommittedBytes != img.Bytes {
		t.Fatalf("image artifact %+v", a)
	}
	data, err := r.host.ReadArtifact(*a, 0, a.CommittedBytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(data)); err != nil {
		t.Fatalf("the artifact is not the PNG: %v", err)
	}
	if !strings.Contains(rec.Result.Text, "counted 3 steps") || !strings.Contains(rec.Result.Text, "image/png") {
		t.Fatalf("model text %q", rec.Result.Text)
	}
}

func TestToolErrorIsClassified(t *testing.T) {
	r := newRig(t, nil)
	rec := r.call(context.Background(), "demo__fail", `{}`)
	if rec.Outcome.Status != transcript.ToolFailed || rec.Outcome.Reason != reasonToolError {
		t.Fatalf("outcome %+v", rec.Outcome)
	}
	if !strings.Contains(rec.Result.Text, "always fails") || !rec.Result.IsError {
		t.Fatalf("result %+v", rec.Result)
	}
	if p := primary(t, rec); p.Status != mcpschema.StatusError {
		t.Fatalf("final value %+v", p)
	}
	// The server is still usable.
	if rec := r.call(context.Background(), "demo__progress", `{"steps":1,"delay_ms":1}`); rec.Outcome.Status != transcript.ToolOK {
		t.Fatalf("after a tool error: %+v", rec.Outcome)
	}
}

func TestInvalidArgumentsNeverReachTheServer(t *testing.T) {
	r := newRig(t, nil)
	rec := r.call(context.Background(), "demo__progress", `{"steps":"many"}`)
	if rec.Outcome.Reason != "invalid_arguments" {
		t.Fatalf("outcome %+v", rec.Outcome)
	}
	for _, l := range r.eventLines() {
		if strings.HasSuffix(l, "call progress") {
			t.Fatalf("the server saw the call: %v", r.eventLines())
		}
	}
}

func TestResultOverTheBoundGoesToAnArtifact(t *testing.T) {
	r := newRig(t, nil, withResultBound(1000))
	rec := r.call(context.Background(), "demo__progress", `{"steps":1,"delay_ms":1,"text_bytes":5000}`)
	p := primary(t, rec)
	tb := p.Content[0]
	if !tb.Truncated || tb.Item != "result" || tb.Ref == "" || tb.Bytes < 5000 || len(tb.Text) > headBytes {
		t.Fatalf("text block %+v", tb)
	}
	if len(rec.Result.Text) > 1200 || !strings.Contains(rec.Result.Text, "kept as artifact "+tb.Ref) {
		t.Fatalf("model text (%d bytes) %q", len(rec.Result.Text), rec.Result.Text)
	}
	var art *transcript.Artifact
	for _, s := range rec.Supplementals {
		if s.Key == "result" {
			art = s.Presentation.Artifact
		}
	}
	if art == nil || art.CommittedBytes != tb.Bytes {
		t.Fatalf("result artifact %+v", art)
	}
	// Read back in bounded ranges.
	var all []byte
	for off := int64(0); off < art.CommittedBytes; off += 1024 {
		b, err := r.host.ReadArtifact(*art, off, min(1024, art.CommittedBytes-off))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	if !strings.HasPrefix(string(all), "counted 1 steps\nfiller text.") || int64(len(all)) != tb.Bytes {
		t.Fatalf("artifact holds %d bytes: %.40q", len(all), all)
	}
}

func TestCrashMidCallFailsAndRestarts(t *testing.T) {
	r := newRig(t, nil)
	first := r.m.byName["demo"].pid()
	done := make(chan struct{})
	var rec = make(chan struct{ reason, text string }, 1)
	go func() {
		defer close(done)
		x := r.call(context.Background(), "demo__progress", `{"steps":50,"delay_ms":1000}`)
		rec <- struct{ reason, text string }{x.Outcome.Reason, x.Result.Text}
	}()
	r.waitProgress()
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
	got := <-rec
	if got.reason != reasonCrashed || !strings.Contains(got.text, "restarted") {
		t.Fatalf("crashed call: %+v", got)
	}
	if st := r.m.Status()[0]; st.State != StateCrashed {
		t.Fatalf("state after the crash: %+v", st)
	}
	again := r.call(context.Background(), "demo__progress", `{"steps":1,"delay_ms":1}`)
	if again.Outcome.Status != transcript.ToolOK {
		t.Fatalf("call after the crash: %+v %s", again.Outcome, again.Result.Text)
	}
	st := r.m.Status()[0]
	if st.State != StateRunning || st.Starts != 2 {
		t.Fatalf("status after restart: %+v", st)
	}
	if second := r.m.byName["demo"].pid(); second == first || second == 0 {
		t.Fatalf("pid %d then %d", first, second)
	}
}

func TestCancelSendsCancellation(t *testing.T) {
	r := newRig(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan string, 1)
	go func() {
		x := r.call(ctx, "demo__progress", `{"steps":50,"delay_ms":1000}`)
		done <- x.Outcome.Reason
	}()
	r.waitProgress()
	cancel()
	if reason := <-done; reason != "canceled" {
		t.Fatalf("reason %q", reason)
	}
	eventually(t, "the server saw the cancellation", func() bool {
		for _, l := range r.eventLines() {
			if strings.HasSuffix(l, "cancelled progress") {
				return true
			}
		}
		return false
	})
	// The server is still running and serves the next call.
	if st := r.m.Status()[0]; st.State != StateRunning || st.Starts != 1 {
		t.Fatalf("status %+v", st)
	}
}

func TestCloseKillsTheProcessGroup(t *testing.T) {
	r := newRig(t, map[string]string{"MCPDEMO_CHILD": "1"})
	pid := r.m.byName["demo"].pid()
	var child int
	eventually(t, "the server started its child", func() bool {
		for _, l := range r.eventLines() {
			if f := strings.Fields(l); len(f) == 3 && f[1] == "child" {
				child, _ = strconv.Atoi(f[2])
				return true
			}
		}
		return false
	})
	r.m.Close()
	for _, p := range []int{pid, child} {
		eventually(t, "process "+strconv.Itoa(p)+" is gone", func() bool { return gone(p) })
	}
	if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) && !allZombies(pid) {
		t.Fatalf("process group %d still has members: %v", pid, err)
	}
	rec := r.call(context.Background(), "demo__progress", `{}`)
	if rec.Outcome.Reason != reasonUnavailable {
		t.Fatalf("call after Close: %+v", rec.Outcome)
	}
}

// gone reports whether pid no longer runs (absent, or a zombie waiting for
// a parent that is not folio).
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] == 'Z'
}

// allZombies reports whether every process in group pgid is a zombie.
func allZombies(pgid int) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[i+2:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && !gone(p) {
			return false
		}
	}
	return true
}

// With a cache, a later session offers the tools without starting the
// server; the first call starts it. Another configuration is not served
// from the cache.
func TestCachedToolsStartOnFirstUse(t *testing.T) {
	cache := t.TempDir()
	cfg := ServerConfig{Name: "demo", Command: demoBin}
	m := New([]ServerConfig{cfg}, WithCache(cache))
	if _, err := m.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := m.Status()[0]; st.Starts != 1 {
		t.Fatalf("first session %+v", st)
	}
	m.Close()
	b, err := os.ReadFile(filepath.Join(cache, "demo.tools.json"))
	if err != nil || !strings.Contains(string(b), `"progress"`) {
		t.Fatalf("cache %s %v", b, err)
	}

	m = New([]ServerConfig{cfg}, WithCache(cache))
	defer m.Close()
	ts, err := m.Tools(context.Background())
	if err != nil || len(ts) != 2 {
		t.Fatalf("%v %d tools", err, len(ts))
	}
	if st := m.Status()[0]; st.State != StateIdle || st.Starts != 0 || m.byName["demo"].pid() != 0 {
		t.Fatalf("listing from the cache started the server: %+v", st)
	}
	set, err := tools.NewSet(ts...)
	if err != nil {
		t.Fatal(err)
	}
	host := toolview.New(toolview.WithArtifactDir(t.TempDir()))
	defer host.Close()
	tl, _ := set.Get("demo__progress")
	rec, err := host.Run(context.Background(), toolview.Spec{Tool: "demo__progress", Producer: set.Manifest()}, []byte(`{"steps":1,"delay_ms":1}`), tl.Run)
	if err != nil || rec.Outcome.Status != transcript.ToolOK {
		t.Fatalf("%v %+v", err, rec)
	}
	if st := m.Status()[0]; st.State != StateRunning || st.Starts != 1 {
		t.Fatalf("after the first call %+v", st)
	}

	changed := cfg
	changed.Args = []string{"--other"}
	m2 := New([]ServerConfig{changed}, WithCache(cache))
	defer m2.Close()
	if _, err := m2.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := m2.Status()[0]; st.Starts != 1 {
		t.Fatalf("a changed configuration was served from the cache: %+v", st)
	}
}
