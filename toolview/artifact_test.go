package toolview

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/foliodev/folio/transcript"
)

func TestArtifactCheckpointsAndBoundedReads(t *testing.T) {
	dir := t.TempDir()
	h := New(WithCadence(0), WithArtifactDir(dir), withRangeLimit(1024))
	inv := mustOpen(t, h, Spec{Tool: "echo", Producer: testManifest(t)})
	p := inv.Presentation()
	w, err := p.NewArtifact("text/plain")
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("0123456789"), 300) // 3000 bytes
	w.Write(body)

	cp := w.Checkpoint(schemaText, 1, false)
	cp.CommittedBytes = 2000
	if _, err := p.ReplaceArtifact(cp); err != nil {
		t.Fatal(err)
	}
	st, _ := attach(h, inv.ID())
	it, _ := st.Item("")
	a := *it.Value.Artifact
	if a.CommittedBytes != 2000 || a.Revision != 1 || a.Final || !a.Available || a.ContentType != "text/plain" {
		t.Fatalf("artifact reference = %+v", a)
	}
	got, err := h.ReadArtifact(a, 1500, 1024)
	if err != nil || !bytes.Equal(got, body[1500:2000]) {
		t.Fatalf("read is not clipped to committed bytes: %d bytes, %v", len(got), err)
	}
	for _, r := range []struct{ off, n int64 }{{0, 1025}, {2000, 1}, {-1, 10}, {0, 0}} {
		if _, err := h.ReadArtifact(a, r.off, r.n); !errors.Is(err, ErrRangeLimit) {
			t.Errorf("read %d+%d: %v", r.off, r.n, err)
		}
	}
	bad := a
	bad.Ref = "../../etc/passwd"
	if _, err := h.ReadArtifact(bad, 0, 10); err == nil {
		t.Error("a malformed reference was read")
	}

	for name, c := range map[string]ArtifactCheckpoint{
		"shrink":         func() ArtifactCheckpoint { c := cp; c.CommittedBytes = 10; return c }(),
		"beyond written": func() ArtifactCheckpoint { c := cp; c.CommittedBytes = 5000; return c }(),
		"unknown ref":    func() ArtifactCheckpoint { c := cp; c.Ref = "00000000000000000000000000000000"; return c }(),
	} {
		if _, err := p.ReplaceArtifact(c); rejectReason(t, err) != ReasonArtifact {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Another item cannot point at this item's artifact.
	if _, err := inv.Supplemental("other").ReplaceArtifact(cp); rejectReason(t, err) != ReasonArtifact {
		t.Errorf("foreign reference: %v", err)
	}
	if _, err := p.ReplaceArtifact(w.Checkpoint(schemaText, 1, true)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Error("write after final")
	}
	if _, err := p.ReplaceArtifact(w.Checkpoint(schemaText, 1, true)); rejectReason(t, err) != ReasonArtifact {
		t.Errorf("checkpoint after final: %v", err)
	}
	if m := h.Metrics(); m.ArtifactRangeRejected != 4 || m.ArtifactReads != 1 {
		t.Errorf("artifact metrics: %+v", m)
	}
}

// TestActiveArtifactDoesNotKeepTimerRunning closes an invocation whose
// artifact is not final and checks the record's timing is fixed at closure.
func TestActiveArtifactDoesNotKeepTimerRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := New(WithArtifactDir(t.TempDir()))
		inv := mustOpen(t, h, Spec{ID: "timer", Tool: "echo", Producer: testManifest(t)})
		p := inv.Presentation()
		w, _ := p.NewArtifact("text/plain")
		w.Write([]byte("partial"))
		p.ReplaceArtifact(w.Checkpoint(schemaText, 1, false)) // active, not final
		time.Sleep(1500 * time.Millisecond)
		rec, _ := inv.Close(Outcome{Status: transcript.ToolOK}, Result{})
		if rec.Duration != 1500*time.Millisecond {
			t.Fatalf("duration %v", rec.Duration)
		}
		time.Sleep(time.Hour)
		st, _ := attach(h, "timer")
		if st.Duration != 1500*time.Millisecond {
			t.Fatalf("duration moved after closure: %v", st.Duration)
		}
		if m := metaOf(st, "", time.Now()); m.Elapsed != 1500*time.Millisecond || m.Status != "ok" {
			t.Fatalf("fallback metadata keeps running: %+v", m)
		}
		if _, err := w.Write([]byte("more")); !errors.Is(err, ErrClosed) {
			t.Fatalf("write after closure: %v", err)
		}
	})
}

// WithArtifactKept hears of the artifact an item keeps at closure, with its
// synced file, before the closure record is out; an artifact the retained
// checkpoint does not refer to is removed, not reported.
func TestArtifactKeptHook(t *testing.T) {
	dir := t.TempDir()
	type kept struct {
		ref  string
		data string
	}
	var got []kept
	h := New(WithCadence(0), WithArtifactDir(dir), WithArtifactKept(func(ref, path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("kept artifact %s: %v", ref, err)
		}
		got = append(got, kept{ref, string(b)})
	}))
	inv := mustOpen(t, h, Spec{Tool: "echo", Producer: testManifest(t)})
	p := inv.Presentation()
	dropped, err := p.NewArtifact("text/plain")
	if err != nil {
		t.Fatal(err)
	}
	dropped.Write([]byte("dropped"))
	w, err := p.NewArtifact("text/plain")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("kept output"))
	if _, err := p.ReplaceArtifact(w.Checkpoint(schemaText, 1, true)); err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("reported before closure: %+v", got)
	}
	rec, err := inv.Close(Outcome{Status: transcript.ToolOK}, Result{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ref != w.Ref() || got[0].data != "kept output" || rec.Presentation.Artifact.Ref != w.Ref() {
		t.Fatalf("kept %+v, record %+v", got, rec.Presentation)
	}
	if _, err := os.Stat(filepath.Join(dir, dropped.Ref())); err == nil {
		t.Error("the dropped artifact's file is still there")
	}
}

// TestDurationRunsFromInvoke opens an invocation (the model starts the
// call), lets it wait as a call waits for its arguments and its approval,
// then invokes it: the record times the tool's run only, from Invoke to
// closure. A scope closed without running times from Open.
func TestDurationRunsFromInvoke(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := New()
		inv := mustOpen(t, h, Spec{ID: "waited", Tool: "echo", Producer: testManifest(t)})
		time.Sleep(4600 * time.Millisecond)
		invoked := time.Now()
		rec := inv.Invoke(context.Background(), []byte(`{"text":"hi"}`), func(context.Context, *Invocation, []byte) (Result, error) {
			time.Sleep(250 * time.Millisecond)
			return Result{Text: "ok"}, nil
		})
		if rec.Duration != 250*time.Millisecond || !rec.Start.Equal(invoked) {
			t.Fatalf("duration %v from %v, want 250ms from the invoke at %v", rec.Duration, rec.Start, invoked)
		}
		if d := rec.ToolContent().Receipt.DurationMs; d == nil || *d != 250 {
			t.Fatalf("the entry's duration %v", d)
		}
		never := mustOpen(t, h, Spec{ID: "denied", Tool: "echo", Producer: testManifest(t)})
		time.Sleep(time.Second)
		if rec, _ := never.Close(Outcome{Status: transcript.ToolDenied}, Result{}); rec.Duration != time.Second {
			t.Fatalf("a scope closed without running: %v", rec.Duration)
		}
	})
}
