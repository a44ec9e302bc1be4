package engine_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

// A tool's duration is its execution. The model takes 1 s to write two
// calls; the first needs approval, which the person gives 4.6 s later; the
// second waits behind it. Each call's entry, live and in the saved log,
// holds only the time its tool ran, the turn receipt only the model's time,
// and together with the approval wait they make up the turn's wall time:
// nothing is counted twice.
func TestToolDurationIsItsExecution(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sleeper := func(d time.Duration) func(context.Context, *toolview.Invocation, []byte) (toolview.Result, error) {
			return func(context.Context, *toolview.Invocation, []byte) (toolview.Result, error) {
				time.Sleep(d)
				return toolview.Result{Text: "ok"}, nil
			}
		}
		rm := &fakeTool{name: "rm", approval: true, run: sleeper(200 * time.Millisecond)}
		read := &fakeTool{name: "read", run: sleeper(300 * time.Millisecond)}
		p := newScripted(
			cat(callStart(0, "k1", "rm"), pause(700*time.Millisecond), callDelta(0, `{"path":"x"}`), callEnd(0, "k1", "rm", `{"path":"x"}`),
				callStart(1, "k2", "read"), pause(300*time.Millisecond), callDelta(1, `{}`), callEnd(1, "k2", "read", `{}`), done()),
			cat(text("done"), done()))
		h := newHarness(t, p, engine.WithTools(toolSet(t, rm, read)))
		start := time.Now()
		if _, err := h.eng.Send(context.Background(), "c1", "tidy up", nil); err != nil {
			t.Fatal(err)
		}
		const wait = 4600 * time.Millisecond
		time.Sleep(time.Second) // the model writes both calls
		synctest.Wait()
		snap := h.store.Snapshot()
		if snap.Live.Approvals.Len() != 1 {
			t.Fatalf("%d approvals after the model's step", snap.Live.Approvals.Len())
		}
		time.Sleep(wait)
		if err := h.eng.Approve(snap.Live.Approvals.At(0).ID, engine.AllowOnce); err != nil {
			t.Fatal(err)
		}
		if _, err := h.eng.Wait(context.Background(), "c1"); err != nil {
			t.Fatal(err)
		}
		wall := time.Since(start)

		want := map[string]float64{"rm": 200, "read": 300}
		check := func(where string, es []transcript.Entry) {
			t.Helper()
			var tools, steps float64
			receipts := 0
			for _, e := range es {
				switch c := e.Content.(type) {
				case transcript.Tool:
					d := c.Receipt.DurationMs
					if d == nil || *d != want[c.Receipt.App] {
						t.Errorf("%s: %s's duration %v ms, want its execution, %v ms", where, c.Receipt.App, deref(d), want[c.Receipt.App])
					}
					if d != nil {
						tools += *d
					}
				case transcript.TurnReceipt:
					receipts++
					for _, s := range c.Steps {
						steps += s.DurationMs
					}
				}
			}
			if receipts != 1 || steps != 1000 {
				t.Errorf("%s: %d receipts whose steps take %v ms, want one of 1000 ms (the model's time)", where, receipts, steps)
			}
			if got := steps + tools + float64(wait.Milliseconds()); got != float64(wall.Milliseconds()) {
				t.Errorf("%s: steps %v + tools %v + the approval wait %v = %v ms, but the turn took %v", where, steps, tools, wait, got, wall)
			}
		}
		check("live", h.entries())
		check("saved", h.reload().Document.Entries())
	})
}

func deref(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}
