package engine_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/receipt"
	"github.com/foliodev/folio/transcript"
)

// The engine measures each step's time to first token from the stream: the
// scripted provider waits before its first event (a different wait per
// step, and the first output of the first step is a tool call), and the
// receipt, the saved log and the step line carry exactly that wait, while
// the decode time runs from the first to the last output event.
func TestStepTimeToFirstToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tool := &fakeTool{name: "look"}
		p := newScripted(
			cat(pause(250*time.Millisecond), call(0, "k", "look", `{}`), usage(100, 10), done()),
			cat(pause(400*time.Millisecond), text("it "), pause(time.Second), text("is fine"), usage(120, 5), done()),
		)
		h := newHarness(t, p, engine.WithTools(toolSet(t, tool)))
		if r := h.send("c1", "check"); r.State != engine.Done {
			t.Fatalf("state %s", r.State)
		}
		check := func(where string, es []transcript.Entry) {
			t.Helper()
			var rc *transcript.TurnReceipt
			for _, e := range es {
				if r, ok := e.Content.(transcript.TurnReceipt); ok {
					rc = &r
				}
			}
			if rc == nil || len(rc.Steps) != 2 {
				t.Fatalf("%s: receipt %+v", where, rc)
			}
			for i, want := range []float64{250, 400} {
				s := rc.Steps[i]
				if s.TimeToFirstTokenMs == nil || *s.TimeToFirstTokenMs != want {
					t.Errorf("%s: step %d ttft %v, want %v ms", where, i+1, s.TimeToFirstTokenMs, want)
				}
				if s.DurationMs < want {
					t.Errorf("%s: step %d lasted %v ms, less than its ttft", where, i+1, s.DurationMs)
				}
			}
			if g := rc.Steps[1].GenerationDurationMs; g == nil || *g != 1000 {
				t.Errorf("%s: step 2 generation %v, want 1000 ms (first to last output)", where, g)
			}
			if got, want := receipt.StepLine(2, rc.Steps[1]), "step 2 · 1.4s · ttft 0.4s · 120 in → 5 out · 5.0 tok/s"; got != want {
				t.Errorf("%s: StepLine = %q, want %q", where, got, want)
			}
		}
		check("live", h.entries())
		check("saved log", h.reload().Document.Entries())
	})
}
