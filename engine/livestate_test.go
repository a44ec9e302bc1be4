package engine_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/tools/toolschema"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

// commandsOf renders a command list as "id:state" words, for comparisons.
func commandsOf(c transcript.Commands) string {
	var out []string
	for _, x := range c.All() {
		out = append(out, x.ID+":"+string(x.State))
	}
	return strings.Join(out, " ")
}

// The queue is state in the store: the running command first, then the
// queued ones in dispatch order, with removals reflected; a stop
// turns what waited into rejected drafts with a reason, which stay until
// the client dismisses them.
func TestQueueIsLiveStateInTheSnapshot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		p := newScripted(cat(text("first"), gate(release), done()))
		h := newHarness(t, p)
		ctx := context.Background()
		long := strings.Repeat("é", transcript.PreviewBytes) // twice the bound in bytes
		for _, c := range []struct{ id, text string }{{"a", "one"}, {"b", "two"}, {"c", long}} {
			if _, err := h.eng.Send(ctx, c.id, c.text, nil); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		q := h.store.Snapshot().Live.Queue
		if got := commandsOf(q); got != "a:running b:queued c:queued" {
			t.Fatalf("queue %q", got)
		}
		if b := q.At(1); b.Preview != "two" || b.Steer {
			t.Errorf("b %+v", b)
		}
		if c := q.At(2).Preview; len(c) > transcript.PreviewBytes+len("…") || !strings.HasSuffix(c, "é…") {
			t.Errorf("long preview not bounded on a rune: %d bytes, %q", len(c), c[len(c)-8:])
		}
		longPreview := q.At(2).Preview
		h.eng.Remove("b")
		q = h.store.Snapshot().Live.Queue
		if got := commandsOf(q); got != "a:running c:queued" || q.At(1).Preview != longPreview {
			t.Fatalf("after remove: %q %+v", got, q.At(1))
		}
		h.eng.Stop()
		h.eng.Wait(ctx, "a")
		synctest.Wait()
		q = h.store.Snapshot().Live.Queue
		if got := commandsOf(q); got != "c:rejected" || !strings.Contains(q.At(0).Reason, "stopped") {
			t.Fatalf("after stop: %q %+v", got, q)
		}
		if err := h.eng.Dismiss("c"); err != nil {
			t.Fatal(err)
		}
		if err := h.eng.Dismiss("c"); !errors.Is(err, engine.ErrUnknownCommand) {
			t.Errorf("second dismiss: %v", err)
		}
		if n := h.store.Snapshot().Live.Queue.Len(); n != 0 {
			t.Errorf("%d commands after dismiss", n)
		}
		if _, running := h.store.Snapshot().Live.Turn(); running {
			t.Error("a turn still runs after stop")
		}
	})
}

// A pending approval is in the snapshot while it waits, naming the call's
// entry and tool with bounded arguments, and leaves when it is decided.
func TestApprovalAppearsAndDisappearsInTheSnapshot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tool := &fakeTool{name: "rm", approval: true}
		args := `{"path":"` + strings.Repeat("x", 1000) + `"}`
		p := newScripted(cat(call(0, "k1", "rm", args), done()), cat(text("removed"), done()))
		h := newHarness(t, p, engine.WithTools(toolSet(t, tool)))
		h.eng.Send(context.Background(), "c1", "clean up", nil)
		synctest.Wait()
		snap := h.store.Snapshot()
		if snap.Live.Approvals.Len() != 1 {
			t.Fatalf("%d approvals", snap.Live.Approvals.Len())
		}
		ap := snap.Live.Approvals.At(0)
		entry := snap.Document.At(1)
		if ap.ID != entry.ID || ap.Tool != "rm" || ap.Child != "" {
			t.Errorf("approval %+v, tool entry %s", ap, entry.ID)
		}
		if !strings.HasPrefix(args, strings.TrimSuffix(ap.Args, "…")) || len(ap.Args) > transcript.PreviewBytes+len("…") {
			t.Errorf("args not a bounded prefix: %d bytes", len(ap.Args))
		}
		if got, ok := snap.Live.Approvals.Get(entry.ID); !ok || got != ap {
			t.Error("Get by invocation ID")
		}
		if err := h.eng.Approve(ap.ID, engine.AllowOnce); err != nil {
			t.Fatal(err)
		}
		if n := h.store.Snapshot().Live.Approvals.Len(); n != 0 {
			t.Errorf("%d approvals right after the decision", n)
		}
		h.eng.Wait(context.Background(), "c1")
		if len(tool.calls()) != 1 {
			t.Error("approved call did not run")
		}
	})
}

// A steer accepted while a tool runs waits for the boundary, visible in
// Live.Steers; it leaves that list in the same snapshot its steering entry
// appears.
func TestPendingSteerIsVisibleUntilApplied(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		tool := &fakeTool{name: "slow", run: func(ctx context.Context, _ *toolview.Invocation, _ []byte) (toolview.Result, error) {
			<-release
			return toolview.Result{Text: "ok"}, nil
		}}
		p := newScripted(cat(call(0, "k", "slow", `{}`), done()), cat(text("as you said"), done()))
		h := newHarness(t, p, engine.WithTools(toolSet(t, tool)))
		sub := h.store.Subscribe()
		defer sub.Close()
		h.eng.Send(context.Background(), "c1", "go", nil)
		synctest.Wait()
		if _, err := h.eng.Steer("s1", "only the top folder"); err != nil {
			t.Fatal(err)
		}
		st := h.store.Snapshot().Live.Steers
		if got := commandsOf(st); got != "s1:running" || !st.At(0).Steer || st.At(0).Preview != "only the top folder" {
			t.Fatalf("steers %q %+v", got, st)
		}
		// Every snapshot shows the steer exactly once: pending, or as
		// its entry.
		seen := 0
		check := func(s transcript.Snapshot) {
			seen++
			_, pending := s.Live.Steers.Get("s1")
			applied := false
			for _, e := range s.Document.All() {
				if st, ok := e.Content.(transcript.Steering); ok && st.CommandID == "s1" {
					applied = true
				}
			}
			if pending == applied {
				t.Errorf("snapshot %d: pending %v, applied %v", seen, pending, applied)
			}
		}
		close(release)
		done := make(chan struct{})
		go func() { h.eng.Wait(context.Background(), "c1"); close(done) }()
		for waiting := true; waiting; {
			select {
			case s := <-sub.C():
				check(s)
			case <-done:
				waiting = false
			}
		}
		check(h.store.Snapshot())
		h.wantKinds("user tool steering agent turn-receipt")
	})
}

// A steer rejected by a stop stays visible as a rejected steer with the
// reason, and the client's outbox holds it as a draft to send explicitly;
// nothing sends it by itself.
func TestSteerRejectedByStopIsADraft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tool := &fakeTool{name: "slow", run: waitForCancel}
		p := newScripted(cat(call(0, "k", "slow", `{}`), done()))
		h := newHarness(t, p, engine.WithTools(toolSet(t, tool)))
		ob := engine.NewOutbox(h.eng.Transport(), func() string { return "s1" })
		h.eng.Send(context.Background(), "c1", "go", nil)
		synctest.Wait()
		id := ob.Add("never mind that", true)
		if it, err := ob.Send(context.Background(), id); err != nil || it.Delivery != engine.Accepted {
			t.Fatalf("steer %+v %v", it, err)
		}
		if got := commandsOf(h.store.Snapshot().Live.Steers); got != "s1:running" {
			t.Fatalf("steers %q", got)
		}
		h.eng.Stop()
		h.eng.Wait(context.Background(), "c1")
		synctest.Wait()
		st := h.store.Snapshot().Live.Steers
		if got := commandsOf(st); got != "s1:rejected" || st.At(0).Reason == "" {
			t.Fatalf("steers after stop %q %+v", got, st)
		}
		ob.Confirm(context.Background(), h.eng.StatusFunc())
		if it := ob.Items()[0]; it.Delivery != engine.Draft || it.Reason == "" {
			t.Errorf("outbox %+v", it)
		}
		if n := len(p.reqs()); n != 1 {
			t.Errorf("%d requests: the rejected steer was sent", n)
		}
		h.wantKinds("user tool stopped")
	})
}

// A new view lifetime starts with empty lists. Clear rejects the queue
// and the pending steer and stops the turn (its approval goes with it); the
// new generation shows none of them, not even as rejected drafts, because
// they belong to the conversation that was cleared. Resume likewise drops
// the drafts a stop left.
func TestClearAndResumeResetLiveCommands(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tool := &fakeTool{name: "rm", approval: true}
		p := newScripted(cat(call(0, "k", "rm", `{}`), done()))
		h := newHarness(t, p, engine.WithTools(toolSet(t, tool)))
		ctx := context.Background()
		h.eng.Send(ctx, "c1", "go", nil)
		h.eng.Send(ctx, "c2", "later", nil)
		synctest.Wait()
		h.eng.Steer("s1", "careful")
		live := h.store.Snapshot().Live
		if commandsOf(live.Queue) != "c1:running c2:queued" || commandsOf(live.Steers) != "s1:running" || live.Approvals.Len() != 1 {
			t.Fatalf("before clear: %q %q %d", commandsOf(live.Queue), commandsOf(live.Steers), live.Approvals.Len())
		}
		gen := h.store.Snapshot().Generation
		h.eng.Clear("fresh")
		snap := h.store.Snapshot()
		if snap.Generation == gen {
			t.Fatal("no new generation")
		}
		if snap.Live.Queue.Len()+snap.Live.Steers.Len()+snap.Live.Approvals.Len() != 0 {
			t.Errorf("new generation: %q %q %d", commandsOf(snap.Live.Queue), commandsOf(snap.Live.Steers), snap.Live.Approvals.Len())
		}
		h.eng.Wait(ctx, "c1")
		synctest.Wait()
		snap = h.store.Snapshot()
		if snap.Live.Queue.Len()+snap.Live.Steers.Len()+snap.Live.Approvals.Len() != 0 {
			t.Errorf("after the old turn ended: %q %q %d", commandsOf(snap.Live.Queue), commandsOf(snap.Live.Steers), snap.Live.Approvals.Len())
		}
		if r, _ := h.eng.Status("c2"); r.State != engine.Rejected {
			t.Errorf("c2 %+v", r)
		}

		// A stop's drafts stay until a resume starts another lifetime.
		h2 := newHarness(t, newScripted(cat(text("x"), block())))
		h2.eng.Send(ctx, "a", "one", nil)
		h2.eng.Send(ctx, "b", "two", nil)
		synctest.Wait()
		h2.eng.Stop()
		h2.eng.Wait(ctx, "a")
		synctest.Wait()
		if got := commandsOf(h2.store.Snapshot().Live.Queue); got != "b:rejected" {
			t.Fatalf("after stop %q", got)
		}
		if err := h2.eng.Resume(h2.store.Snapshot().Document, h2.eng.Messages()); err != nil {
			t.Fatal(err)
		}
		if got := commandsOf(h2.store.Snapshot().Live.Queue); got != "" {
			t.Errorf("after resume %q", got)
		}
	})
}

// A child agent's tool calls and its loop-guard notice go into the child's
// own feed; the main document and main footer are untouched, and the
// child's usage still counts in the session totals. Its approvals name
// the child region.
func TestChildToolEntriesGoToTheChildFeed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sp := &lazySpawner{}
		probe := &fakeTool{name: "probe", approval: true, run: func(context.Context, *toolview.Invocation, []byte) (toolview.Result, error) {
			return toolview.Result{}, errors.New("exit status 1")
		}}
		set := toolSet(t, tools.Task{Spawner: sp}, probe)
		p := newScripted(
			cat(call(0, "t1", "task", `{"prompt":"probe it","label":"prober"}`), usage(100, 10), done()),
			cat(call(0, "p1", "probe", `{"x":1}`), usage(5, 1), done()), // the child, three times
			cat(call(0, "p2", "probe", `{"x":1}`), usage(6, 1), done()),
			cat(call(0, "p3", "probe", `{"x":1}`), usage(7, 1), done()),
			cat(text("The sub-agent could not."), usage(130, 6), done()))
		h := newHarness(t, p, engine.WithTools(set))
		sp.e = h.eng
		h.eng.Send(context.Background(), "c1", "go", nil)
		synctest.Wait()
		snap := h.store.Snapshot()
		if snap.Live.Approvals.Len() != 1 {
			t.Fatalf("%d approvals", snap.Live.Approvals.Len())
		}
		ap := snap.Live.Approvals.At(0)
		child := snap.Live.Children.At(0)
		if ap.Child != child.ID || ap.Tool != "probe" || child.Feed.Len() != 1 || child.Feed.At(0).ID != ap.ID {
			t.Fatalf("child approval %+v, feed %s", ap, kinds(child.Feed.Entries()))
		}
		if err := h.eng.Approve(ap.ID, engine.AllowSession); err != nil {
			t.Fatal(err)
		}
		h.eng.Wait(context.Background(), "c1")
		es := h.wantKinds("user tool agent turn-receipt")
		if task := es[1].Content.(transcript.Tool); task.Receipt.Status != transcript.ToolFailed {
			t.Errorf("task receipt %+v", task.Receipt)
		}
		live := h.store.Snapshot().Live
		child = live.Children.At(0)
		if got := kinds(child.Feed.Entries()); got != "tool tool tool notice" {
			t.Fatalf("child feed %s", got)
		}
		for i := range 3 {
			tc := child.Feed.At(i).Content.(transcript.Tool)
			if child.Feed.IsOpen(i) || tc.InvocationID != child.Feed.At(i).ID || tc.Receipt.Status != transcript.ToolFailed || tc.Receipt.Args != `{"x":1}` {
				t.Errorf("child tool %d: %+v", i, tc)
			}
		}
		if n := child.Feed.At(3).Content.(transcript.Notice); !strings.Contains(n.Text, "probe failed 3 times") {
			t.Errorf("child notice %+v", n)
		}
		if live.PromptContext != 130 || live.Model != "test-model" {
			t.Errorf("main footer changed by the child: %d %q", live.PromptContext, live.Model)
		}
		if live.Totals.InputTokens != 100+5+6+7+130 || child.Usage.InputTokens != 18 {
			t.Errorf("totals %+v, child %+v", live.Totals, child.Usage)
		}
		// The saved log has the main document only.
		if got := kinds(h.reload().Document.Entries()); got != "user tool agent turn-receipt" {
			t.Errorf("saved %s", got)
		}
	})
}

// "retrying in Ns" can count down: the retry state carries the instant the
// next attempt starts, and In measures what is left of it.
func TestRetryStateCarriesItsDueTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newScripted(
			reply(fail(&provider.Error{Class: provider.ClassProvider, Status: 503, Msg: "overloaded"})),
			cat(text("fine"), done()))
		h := newHarness(t, p, engine.WithBackoff(provider.Backoff{Base: 4 * time.Second, Max: time.Minute, Retries: 2}))
		start := time.Now()
		h.eng.Send(context.Background(), "c1", "go", nil)
		synctest.Wait()
		rt := h.store.Snapshot().Live.Retry
		if !rt.At.Equal(start.Add(2*time.Second)) || rt.In(time.Now()) != 2*time.Second {
			t.Fatalf("retry %+v, in %v", rt, rt.In(time.Now()))
		}
		time.Sleep(1500 * time.Millisecond) // virtual time: the view's countdown
		if left := h.store.Snapshot().Live.Retry.In(time.Now()); left != 500*time.Millisecond {
			t.Errorf("%v left", left)
		}
		if (transcript.Retry{At: start}).In(start.Add(time.Second)) != 0 {
			t.Error("a due retry has negative time left")
		}
		h.eng.Wait(context.Background(), "c1")
	})
}

// An outbox mirrored into the store shows what only the client knows:
// a send in flight is pending, a lost answer uncertain, a command the
// engine never got a rejected draft. A command the engine has is shown once,
// as the engine has it.
func TestOutboxMirrorShowsDeliveries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		h := newHarness(t, newScripted(cat(text("busy"), gate(release), done())))
		ctx := context.Background()
		h.eng.Send(ctx, "first", "one", nil)
		synctest.Wait()

		answer := make(chan error)
		deliver := false
		send := func(ctx context.Context, id, text string, steer bool) (engine.Receipt, error) {
			if deliver {
				h.eng.Send(ctx, id, text, nil)
			}
			return engine.Receipt{}, <-answer
		}
		ob := engine.NewOutbox(send, counter())
		ob.Mirror(h.store)
		lost := ob.Add("lost in transit", false)
		go ob.Send(ctx, lost)
		synctest.Wait()
		if got := commandsOf(h.store.Snapshot().Live.Queue); got != "first:running cmd-1:pending" {
			t.Fatalf("while sending %q", got)
		}
		answer <- errors.New("connection reset")
		synctest.Wait()
		q := h.store.Snapshot().Live.Queue
		if got := commandsOf(q); got != "first:running cmd-1:uncertain" || q.At(1).Reason != "connection reset" {
			t.Fatalf("after the failure %q %+v", got, q)
		}
		ob.Confirm(ctx, h.eng.StatusFunc())
		if got := commandsOf(h.store.Snapshot().Live.Queue); got != "first:running cmd-1:rejected" {
			t.Fatalf("never received %q", got)
		}

		// Delivered, but the answer was lost: the engine's queued entry
		// is the one shown.
		deliver = true
		kept := ob.Add("kept", false)
		go ob.Send(ctx, kept)
		synctest.Wait()
		answer <- errors.New("connection reset")
		synctest.Wait()
		if got := commandsOf(h.store.Snapshot().Live.Queue); got != "first:running cmd-2:queued cmd-1:rejected" {
			t.Fatalf("delivered %q", got)
		}
		if err := ob.Remove(lost); err != nil {
			t.Fatal(err)
		}
		if got := commandsOf(h.store.Snapshot().Live.Queue); got != "first:running cmd-2:queued" {
			t.Errorf("after remove %q", got)
		}
	})
}

// A call waiting for approval shows its tool's preview (tools.Previewer)
// as its entry's presentation: the command a shell call would run. The
// preview is never saved, and a denied call settles without it.
func TestWaitingCallShowsItsPreviewUnsaved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		set, err := tools.NewSet(tools.Shell{Dir: t.TempDir()})
		must(t, err)
		p := newScripted(cat(call(0, "k1", "shell", `{"command":"rm -rf build"}`), done()), cat(text("ok, left alone"), done()))
		h := newHarness(t, p, engine.WithTools(set))
		h.eng.Send(context.Background(), "c1", "clean up", nil)
		synctest.Wait()
		snap := h.store.Snapshot()
		if snap.Live.Approvals.Len() != 1 {
			t.Fatalf("%d approvals", snap.Live.Approvals.Len())
		}
		tl, _ := snap.Document.At(1).Content.(transcript.Tool)
		if pr := tl.Presentation; pr == nil || pr.Schema != toolschema.Shell || !strings.Contains(string(pr.Payload), "rm -rf build") || !pr.Ephemeral {
			t.Fatalf("the waiting call's presentation is %+v, want the shell preview, ephemeral", pr)
		}
		must(t, h.eng.Approve(snap.Live.Approvals.At(0).ID, engine.Deny))
		h.eng.Wait(context.Background(), "c1")
		tl, _ = h.store.Snapshot().Document.At(1).Content.(transcript.Tool)
		if tl.Receipt.Status != transcript.ToolDenied || tl.Presentation != nil {
			t.Fatalf("the denied call settled as %+v with presentation %+v", tl.Receipt, tl.Presentation)
		}
		b, err := os.ReadFile(h.path)
		must(t, err)
		if strings.Contains(string(b), toolschema.Shell) {
			t.Fatalf("the preview reached the log:\n%s", b)
		}
	})
}
