package engine_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

func roles(ms []message.Message) string {
	var s string
	for i, m := range ms {
		if i > 0 {
			s += " "
		}
		s += string(m.Role)
	}
	return s
}

// A steer interrupts a text response even while the provider is silent:
// the emitted text stays, the request is closed before the next one, and
// the steering entry sits between the reply content before and after.
func TestSteerDuringSilentTextResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newScripted(
			cat(text("Part one"), block()), // then silence, no more tokens
			cat(text("Focused."), done()))
		h := newHarness(t, p)
		ctx := context.Background()
		h.eng.Send(ctx, "c1", "write", nil)
		synctest.Wait()
		if _, err := h.eng.Steer("s1", "focus on X"); err != nil {
			t.Fatal(err)
		}
		r, _ := h.eng.Wait(ctx, "c1")
		if r.State != engine.Done {
			t.Fatalf("turn %+v", r)
		}
		if s, _ := h.eng.Status("s1"); s.State != engine.Applied {
			t.Errorf("steer %+v", s)
		}
		es := h.wantKinds("user agent steering agent turn-receipt")
		if es[1].Content.(transcript.Agent).Markdown != "Part one" {
			t.Errorf("emitted text lost: %+v", es[1].Content)
		}
		if st := es[2].Content.(transcript.Steering); st.Text != "focus on X" || st.CommandID != "s1" {
			t.Errorf("steering %+v", st)
		}
		if p.ctx(0).Err() == nil {
			t.Error("the interrupted request was not closed")
		}
		reqs := p.reqs()
		if len(reqs) != 2 || roles(reqs[1].Messages) != "user assistant user" || reqs[1].Messages[1].Content != "Part one" {
			t.Fatalf("second request %s", roles(reqs[1].Messages))
		}
		if msgs := h.eng.Messages(); !msgs[3].Continuation {
			t.Error("the reply after the steer is not marked as a continuation")
		}
	})
}

// A steer that arrives while tool arguments stream waits for the step to
// end: the call completes and runs, then the steer is applied before the
// next request.
func TestSteerDuringToolArgumentsWaitsForSafePoint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := make(chan struct{})
		tool := &fakeTool{name: "probe"}
		p := newScripted(
			cat(callStart(0, "k1", "probe"), callDelta(0, `{"a":`), gate(g), callDelta(0, `1}`),
				callEnd(0, "k1", "probe", `{"a":1}`), done()),
			cat(text("After."), done()))
		h := newHarness(t, p, engine.WithTools(toolSet(t, tool)))
		ctx := context.Background()
		h.eng.Send(ctx, "c1", "go", nil)
		synctest.Wait()
		h.eng.Steer("s1", "also Y")
		synctest.Wait()
		if p.ctx(0).Err() != nil {
			t.Fatal("a tool-argument stream was interrupted")
		}
		close(g)
		h.eng.Wait(ctx, "c1")
		if got := tool.calls(); len(got) != 1 || got[0] != `{"a":1}` {
			t.Fatalf("tool calls %q", got)
		}
		h.wantKinds("user tool steering agent turn-receipt")
		reqs := p.reqs()
		if len(reqs) != 2 || roles(reqs[1].Messages) != "user assistant tool user" {
			t.Fatalf("requests %d", len(reqs))
		}
	})
}

// A steer during a running tool neither cancels nor replays it.
func TestSteerDuringRunningTool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var toolCtx context.Context
		tool := &fakeTool{name: "slow", run: func(ctx context.Context, _ *toolview.Invocation, _ []byte) (toolview.Result, error) {
			toolCtx = ctx
			<-release
			return toolview.Result{Text: "slow done"}, nil
		}}
		p := newScripted(cat(call(0, "k1", "slow", `{}`), done()), cat(text("ok"), done()))
		h := newHarness(t, p, engine.WithTools(toolSet(t, tool)))
		ctx := context.Background()
		h.eng.Send(ctx, "c1", "go", nil)
		synctest.Wait()
		h.eng.Steer("s1", "hurry")
		synctest.Wait()
		if toolCtx.Err() != nil {
			t.Fatal("the steer cancelled the running tool")
		}
		close(release)
		h.eng.Wait(ctx, "c1")
		if n := len(tool.calls()); n != 1 {
			t.Errorf("tool ran %d times", n)
		}
		es := h.wantKinds("user tool steering agent turn-receipt")
		if es[1].Content.(transcript.Tool).Receipt.Status != transcript.ToolOK {
			t.Errorf("tool %+v", es[1].Content)
		}
	})
}

func TestSteerWithoutTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, newScripted())
		if _, err := h.eng.Steer("s1", "x"); !errors.Is(err, engine.ErrNoTurn) {
			t.Errorf("got %v", err)
		}
	})
}

// Stop during a text response keeps the partial reply and records stopped.
func TestStopDuringText(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newScripted(cat(think("hmm"), text("partial answer"), block()))
		h := newHarness(t, p)
		ctx := context.Background()
		h.eng.Send(ctx, "c1", "go", nil)
		synctest.Wait()
		if !h.eng.Stop() {
			t.Fatal("no turn to stop")
		}
		r, _ := h.eng.Wait(ctx, "c1")
		if r.State != engine.Stopped {
			t.Fatalf("state %s", r.State)
		}
		es := h.wantKinds("user reasoning agent stopped")
		if es[2].Content.(transcript.Agent).Markdown != "partial answer" {
			t.Error("partial reply lost")
		}
		if p.ctx(0).Err() == nil {
			t.Error("request not cancelled")
		}
		// The saved log holds the same.
		if got := kinds(h.reload().Document.Entries()); got != "user reasoning agent stopped" {
			t.Errorf("saved %s", got)
		}
	})
}

// Stop during a tool cancels it; the trace keeps the tool's record.
func TestStopDuringTool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tool := &fakeTool{name: "wait", run: func(ctx context.Context, _ *toolview.Invocation, _ []byte) (toolview.Result, error) {
			<-ctx.Done()
			return toolview.Result{}, ctx.Err()
		}}
		p := newScripted(cat(text("Running."), call(0, "k1", "wait", `{}`), call(1, "k2", "wait", `{"n":2}`), done()))
		h := newHarness(t, p, engine.WithTools(toolSet(t, tool)))
		ctx := context.Background()
		h.eng.Send(ctx, "c1", "go", nil)
		synctest.Wait()
		h.eng.Stop()
		h.eng.Wait(ctx, "c1")
		es := h.wantKinds("user agent tool tool stopped")
		t1, t2 := es[2].Content.(transcript.Tool), es[3].Content.(transcript.Tool)
		if t1.Receipt.Status != transcript.ToolFailed || t1.Receipt.Reason != "canceled" {
			t.Errorf("running tool %+v", t1.Receipt)
		}
		if t2.Receipt.NotDone == "" || t2.Receipt.Reason != "not_run" {
			t.Errorf("second tool %+v", t2.Receipt)
		}
		st := es[4].Content.(transcript.Stopped)
		if len(st.Summary.NotDone) != 2 {
			t.Errorf("stopped summary %+v", st.Summary)
		}
		if n := len(tool.calls()); n != 1 {
			t.Errorf("tool ran %d times", n)
		}
		// Every call in the model's history has its answer.
		msgs := h.eng.Messages()
		if roles(msgs) != "user assistant tool tool" {
			t.Errorf("messages %s", roles(msgs))
		}
	})
}

// Stop while a steer waits for its safe point: the reply stays, the steer
// is rejected and stays the caller's draft, and nothing is sent by itself.
func TestStopDuringPendingSteer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tool := &fakeTool{name: "wait", run: func(ctx context.Context, _ *toolview.Invocation, _ []byte) (toolview.Result, error) {
			<-ctx.Done()
			return toolview.Result{}, ctx.Err()
		}}
		p := newScripted(cat(text("Working."), call(0, "k1", "wait", `{}`), done()))
		h := newHarness(t, p, engine.WithTools(toolSet(t, tool)))
		ctx := context.Background()
		h.eng.Send(ctx, "c1", "go", nil)
		synctest.Wait()
		if r, err := h.eng.Steer("s1", "change course"); err != nil || r.State != engine.Running {
			t.Fatalf("steer %+v %v", r, err)
		}
		h.eng.Stop()
		if _, err := h.eng.Steer("s2", "late"); err == nil {
			t.Error("a steer was accepted after stop")
		}
		h.eng.Wait(ctx, "c1")
		synctest.Wait()
		s, _ := h.eng.Status("s1")
		if s.State != engine.Rejected || s.Text != "change course" {
			t.Errorf("steer %+v", s)
		}
		if n := len(p.reqs()); n != 1 {
			t.Errorf("%d requests: the rejected steer was sent", n)
		}
		es := h.wantKinds("user agent tool stopped")
		if es[1].Content.(transcript.Agent).Markdown != "Working." {
			t.Error("partial reply lost")
		}
	})
}

// The other interruptible boundaries: a reasoning stream, a provider that
// has not sent its first token, and a retry wait. Each is interrupted at
// once and the steer applied before the next request.
func TestSteerInterruptsReasoningSilenceAndRetryWait(t *testing.T) {
	cases := []struct {
		name  string
		first []item
		kinds string
	}{
		{"reasoning", cat(think("pondering"), block()), "user reasoning steering agent turn-receipt"},
		{"before first token", cat(block()), "user steering agent turn-receipt"},
		{"retry wait", reply(fail(rateLimited())), "user steering agent turn-receipt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newScripted(c.first, cat(text("redirected"), done()))
				h := newHarness(t, p)
				ctx := context.Background()
				h.eng.Send(ctx, "c1", "go", nil)
				synctest.Wait()
				h.eng.Steer("s1", "do this instead")
				synctest.Wait()
				// Nothing waited for a token or a timer: the turn is done
				// without the virtual clock moving.
				start := time.Now()
				r, _ := h.eng.Wait(ctx, "c1")
				if r.State != engine.Done || time.Since(start) != 0 {
					t.Fatalf("state %s after %v", r.State, time.Since(start))
				}
				h.wantKinds(c.kinds)
				last := p.reqs()[1].Messages
				if m := last[len(last)-1]; m.Role != message.User || m.Content != "do this instead" {
					t.Errorf("last message %+v", m)
				}
			})
		})
	}
}

// A stop names its turn: one that arrives after its turn ended does not
// stop the next.
func TestStopTurnComparesTheTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newScripted(cat(text("one"), done()), cat(text("two"), block()))
		h := newHarness(t, p)
		ctx := context.Background()
		h.send("a", "first")
		firstUser := h.entries()[0].ID
		h.eng.Send(ctx, "b", "second", nil)
		synctest.Wait()
		run, ok := h.store.Snapshot().Live.Turn()
		if !ok || run.CommandID != "b" || run.Entry == "" || run.Entry == firstUser {
			t.Fatalf("running %+v", run)
		}
		if err := h.eng.StopTurn(firstUser, ""); !errors.Is(err, engine.ErrStopConflict) {
			t.Fatalf("stale stop: %v", err)
		}
		if run.Reply == "" || h.eng.StopTurn(run.Entry, h.entries()[1].ID) == nil {
			t.Fatalf("reply %q: a stop naming another reply was accepted", run.Reply)
		}
		if err := h.eng.StopTurn(run.Entry, run.Reply); err != nil {
			t.Fatal(err)
		}
		if r, _ := h.eng.Wait(ctx, "b"); r.State != engine.Stopped {
			t.Errorf("state %s", r.State)
		}
		if err := h.eng.StopTurn(run.Entry, ""); !errors.Is(err, engine.ErrNoTurn) {
			t.Errorf("no turn: %v", err)
		}
	})
}

// Text that follows a finished tool call in the same response is not
// interrupted: the call would be lost. The steer waits for the response's
// end and the call runs.
func TestSteerAfterToolCallInSameResponseWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := make(chan struct{})
		tool := &fakeTool{name: "probe"}
		p := newScripted(
			cat(call(0, "k1", "probe", `{}`), text("and some text"), gate(g), done()),
			cat(text("after"), done()))
		h := newHarness(t, p, engine.WithTools(toolSet(t, tool)))
		ctx := context.Background()
		h.eng.Send(ctx, "c1", "go", nil)
		synctest.Wait()
		h.eng.Steer("s1", "change")
		synctest.Wait()
		if p.ctx(0).Err() != nil {
			t.Fatal("the response with a finished call was interrupted")
		}
		close(g)
		h.eng.Wait(ctx, "c1")
		if n := len(tool.calls()); n != 1 {
			t.Errorf("tool ran %d times", n)
		}
		h.wantKinds("user tool agent steering agent turn-receipt")
	})
}
