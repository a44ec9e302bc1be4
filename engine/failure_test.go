package engine_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

func rateLimited() *provider.Error {
	return &provider.Error{Class: provider.ClassRateLimit, Provider: "scripted", Status: 429, RetryAfter: 3 * time.Second, Msg: "slow down"}
}

// A reply that fails after text and a tool keeps its answer and ordered
// trace, then one failure entry; the saved log has the same entries.
func TestFailureAfterPartialOutputLiveAndReloaded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tool := &fakeTool{name: "probe"}
		p := newScripted(
			cat(think("plan"), text("Step one."), call(0, "k1", "probe", `{}`), done()),
			cat(text("Half an ans"), fail(rateLimited())))
		h := newHarness(t, p, engine.WithTools(toolSet(t, tool)))
		r := h.send("c1", "go")
		if r.State != engine.Failed {
			t.Fatalf("state %s", r.State)
		}
		live := h.wantKinds("user reasoning agent tool agent failure")
		f := live[5].Content.(transcript.Failure)
		if f.Reason != "rate_limit" || !f.Retryable || f.RetryAfterMs == nil || *f.RetryAfterMs != 3000 || f.Headline == "" || f.Detail == "" {
			t.Errorf("failure %+v", f)
		}
		if live[4].Content.(transcript.Agent).Markdown != "Half an ans" {
			t.Error("partial answer lost")
		}
		// Output had been accepted, so no retry was made.
		if n := len(p.reqs()); n != 2 {
			t.Errorf("%d requests", n)
		}
		saved := h.reload().Document.Entries()
		if len(saved) != len(live) {
			t.Fatalf("saved %s", kinds(saved))
		}
		for i := range live {
			if live[i].ID != saved[i].ID || !reflect.DeepEqual(live[i].Content, saved[i].Content) {
				t.Errorf("entry %d differs after reload:\n live %+v\nsaved %+v", i, live[i].Content, saved[i].Content)
			}
		}
		if _, running := h.store.Snapshot().Live.Turn(); running {
			t.Error("a turn still runs after the failure")
		}
		// A failed turn can be retried explicitly, from the same messages.
		before := len(h.eng.Messages())
		if _, err := h.eng.Retry("r1"); err != nil {
			t.Fatal(err)
		}
		h.eng.Wait(context.Background(), "r1")
		reqs := p.reqs()
		if len(reqs[2].Messages) != before {
			t.Errorf("retry sent %d messages, want %d", len(reqs[2].Messages), before)
		}
		if _, err := h.eng.Retry("r2"); !errors.Is(err, engine.ErrNothingToRetry) {
			t.Errorf("second retry: %v", err)
		}
	})
}

// A retryable failure before any output is retried with the classified
// backoff, and the wait is visible in the live retry state.
func TestRetryBeforeOutputShowsRetryState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newScripted(
			reply(fail(&provider.Error{Class: provider.ClassProvider, Status: 503, Msg: "overloaded"})),
			cat(text("fine"), done()))
		h := newHarness(t, p, engine.WithBackoff(provider.Backoff{Base: 2 * time.Second, Max: time.Minute, Retries: 2}))
		h.eng.Send(context.Background(), "c1", "go", nil)
		synctest.Wait()
		rt := h.store.Snapshot().Live.Retry
		if !rt.Pending() || rt.Attempt != 2 || rt.Reason != "provider" {
			t.Fatalf("retry state %+v", rt)
		}
		start := time.Now()
		h.eng.Wait(context.Background(), "c1")
		if waited := time.Since(start); waited != time.Second { // equal jitter at 0: half the base
			t.Errorf("waited %v", waited)
		}
		h.wantKinds("user agent turn-receipt")
		if h.store.Snapshot().Live.Retry.Pending() {
			t.Error("retry state not cleared")
		}
	})
}

// Retries are bounded; a non-retryable class is not retried at all.
func TestRetriesBoundedAndClassified(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e503 := &provider.Error{Class: provider.ClassTransport, Msg: "reset"}
		p := newScripted(reply(fail(e503)), reply(fail(e503)), reply(fail(e503)), reply(fail(e503)))
		h := newHarness(t, p, engine.WithBackoff(provider.Backoff{Base: time.Second, Max: time.Minute, Retries: 2}))
		if r := h.send("c1", "go"); r.State != engine.Failed {
			t.Fatal(r.State)
		}
		if n := len(p.reqs()); n != 3 {
			t.Errorf("%d attempts, want 3", n)
		}
		p2 := newScripted(reply(fail(&provider.Error{Class: provider.ClassAuth, Status: 401, Msg: "bad key"})))
		h2 := newHarness(t, p2)
		h2.send("c1", "go")
		if n := len(p2.reqs()); n != 1 {
			t.Errorf("auth failure retried: %d", n)
		}
		es := h2.wantKinds("user failure")
		if f := es[1].Content.(transcript.Failure); f.Reason != "auth" || f.Retryable {
			t.Errorf("failure %+v", f)
		}
	})
}

// The same call failing three times on the same input stops the turn with
// a notice naming the reason.
func TestLoopGuard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tool := &fakeTool{name: "flaky", run: func(context.Context, *toolview.Invocation, []byte) (toolview.Result, error) {
			return toolview.Result{}, errors.New("disk quota exceeded")
		}}
		var replies [][]item
		for i := 0; i < 5; i++ {
			replies = append(replies, cat(call(0, "k", "flaky", `{"x": 1}`), done()))
		}
		p := newScripted(replies...)
		h := newHarness(t, p, engine.WithTools(toolSet(t, tool)))
		r := h.send("c1", "go")
		if r.State != engine.Stopped {
			t.Fatalf("state %s", r.State)
		}
		es := h.wantKinds("user tool tool tool notice turn-receipt")
		n := es[4].Content.(transcript.Notice)
		if want := "stopped: flaky failed 3 times with the same input (disk quota exceeded)"; n.Text != want {
			t.Errorf("notice %q", n.Text)
		}
		if len(tool.calls()) != 3 {
			t.Errorf("tool ran %d times", len(tool.calls()))
		}
	})
}

// Approvals: a pending approval is visible; denial records a denied
// receipt; allowing for the session stops the asking.
func TestApprovals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tool := &fakeTool{name: "danger", approval: true}
		p := newScripted(
			cat(call(0, "k1", "danger", `{"n":1}`), done()),
			cat(call(0, "k2", "danger", `{"n":2}`), done()),
			cat(call(0, "k3", "danger", `{"n":3}`), done()),
			cat(text("end"), done()))
		h := newHarness(t, p, engine.WithTools(toolSet(t, tool)))
		h.eng.Send(context.Background(), "c1", "go", nil)
		synctest.Wait()
		snap := h.store.Snapshot()
		aps := snap.Live.Approvals
		if _, running := snap.Live.Turn(); !running {
			t.Error("no turn runs while its call waits for approval")
		}
		if aps.Len() != 1 || aps.At(0).Tool != "danger" || aps.At(0).Args != `{"n":1}` {
			t.Fatalf("approvals %+v", aps)
		}
		i, _ := snap.Document.Index(aps.At(0).ID)
		if !snap.Document.IsOpen(i) || snap.Document.At(i).Content.(transcript.Tool).Receipt.Reason != "awaiting_approval" ||
			snap.Live.Activity != transcript.ActivityWaiting {
			t.Errorf("pending approval not visible: %+v", snap.Document.At(i).Content)
		}
		h.eng.Approve(aps.At(0).ID, engine.Deny)
		synctest.Wait()
		aps = h.store.Snapshot().Live.Approvals
		if aps.Len() != 1 {
			t.Fatalf("second approval %+v", aps)
		}
		h.eng.Approve(aps.At(0).ID, engine.AllowSession)
		h.eng.Wait(context.Background(), "c1")
		if got := tool.calls(); len(got) != 2 || got[0] != `{"n":2}` {
			t.Errorf("tool calls %q", got)
		}
		es := h.wantKinds("user tool tool tool agent turn-receipt")
		if r := es[1].Content.(transcript.Tool).Receipt; r.Status != transcript.ToolDenied {
			t.Errorf("denied receipt %+v", r)
		}
		if msgs := h.eng.Messages(); !msgs[2].IsError {
			t.Error("the model was not told of the denial")
		}
	})
}

// Stop while a call waits for approval: the wait ends, the call is
// recorded as not approved, and the approval is no longer pending.
func TestStopDuringApproval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tool := &fakeTool{name: "danger", approval: true}
		p := newScripted(cat(text("Asking."), call(0, "k1", "danger", `{}`), done()))
		h := newHarness(t, p, engine.WithTools(toolSet(t, tool)))
		h.eng.Send(context.Background(), "c1", "go", nil)
		synctest.Wait()
		if h.store.Snapshot().Live.Approvals.Len() != 1 {
			t.Fatal("no pending approval")
		}
		h.eng.Stop()
		h.eng.Wait(context.Background(), "c1")
		if n := h.store.Snapshot().Live.Approvals.Len(); n != 0 {
			t.Errorf("%d approvals still pending", n)
		}
		if len(tool.calls()) != 0 {
			t.Error("the tool ran")
		}
		es := h.wantKinds("user agent tool stopped")
		if r := es[2].Content.(transcript.Tool).Receipt; r.Status != transcript.ToolDenied || r.Detail != "stopped while waiting for approval" {
			t.Errorf("receipt %+v", r)
		}
		if st := es[3].Content.(transcript.Stopped); len(st.Summary.NotDone) != 1 {
			t.Errorf("stopped %+v", st.Summary)
		}
	})
}

type failingSaver struct{ n int }

func (f *failingSaver) Save(transcript.Document, []message.Message) error {
	f.n++
	return errors.New("disk full")
}

// A failing save is shown once, not once per step, and the turn goes on.
func TestSaveFailureNoticeOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tool := &fakeTool{name: "probe"}
		p := newScripted(cat(call(0, "k", "probe", `{}`), done()), cat(text("ok"), done()))
		fs := &failingSaver{}
		h := newHarness(t, p, engine.WithTools(toolSet(t, tool)), engine.WithSaver(fs))
		if r := h.send("c1", "go"); r.State != engine.Done {
			t.Fatal(r.State)
		}
		es := h.entries()
		var notices int
		for _, e := range es {
			if n, ok := e.Content.(transcript.Notice); ok && strings.Contains(n.Text, "disk full") {
				notices++
			}
		}
		if notices != 1 || fs.n < 3 {
			t.Errorf("%d notices for %d failed saves: %s", notices, fs.n, kinds(es))
		}
	})
}
