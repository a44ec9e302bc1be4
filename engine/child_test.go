package engine_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/transcript"
)

type lazySpawner struct{ e *engine.Engine }

func (l *lazySpawner) Spawn(ctx context.Context, inv, label, prompt string) (string, string, error) {
	return l.e.Spawn(ctx, inv, label, prompt)
}

// A child agent's stream is a region of its own: its usage adds to the
// session totals, and it cannot touch the main answer or footer.
func TestChildAgentTotalsAndIsolation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sp := &lazySpawner{}
		set := toolSet(t, tools.Task{Spawner: sp})
		p := newScripted(
			cat(text("Delegating."), call(0, "t1", "task", `{"prompt":"count files","label":"counter"}`), usage(100, 10), done()),
			cat(text("There are 3 files."), usage(5, 7), done()), // the child's step
			cat(text("The child says 3."), usage(130, 6), done()))
		h := newHarness(t, p, engine.WithTools(set))
		sp.e = h.eng
		if r := h.send("c1", "how many?"); r.State != engine.Done {
			t.Fatalf("%+v", r)
		}
		es := h.wantKinds("user agent tool agent turn-receipt")
		for _, e := range es {
			if a, ok := e.Content.(transcript.Agent); ok && strings.Contains(a.Markdown, "There are 3") {
				t.Error("child text reached the main document")
			}
		}
		live := h.store.Snapshot().Live
		if live.Totals.InputTokens != 235 || live.Totals.OutputTokens != 23 {
			t.Errorf("session totals %+v, want 235 in / 23 out", live.Totals)
		}
		if live.PromptContext != 130 || live.Model != "test-model" {
			t.Errorf("main footer changed by the child: %d %q", live.PromptContext, live.Model)
		}
		if live.Children.Len() != 1 {
			t.Fatalf("%d children", live.Children.Len())
		}
		c := live.Children.At(0)
		if !c.Done || c.Label != "counter" || c.Usage.InputTokens != 5 || c.Usage.OutputTokens != 7 || c.PromptContext != 5 {
			t.Errorf("child region %+v", c)
		}
		if got := kinds(c.Feed.Entries()); got != "agent" || c.Feed.At(0).Content.(transcript.Agent).Markdown != "There are 3 files." {
			t.Errorf("child feed %s", got)
		}
		// The main receipt counts only the main steps.
		if steps := es[4].Content.(transcript.TurnReceipt).Steps; len(steps) != 2 {
			t.Errorf("main receipt has %d steps", len(steps))
		}
		if m := h.eng.Messages()[2]; m.Role != message.Tool || m.Content != "There are 3 files." {
			t.Errorf("task result %+v", m)
		}
		// The child's request had only its own prompt and no task tool.
		child := p.reqs()[1]
		if len(child.Messages) != 1 || child.Messages[0].Content != "count files" {
			t.Errorf("child request %+v", child.Messages)
		}
		for _, s := range child.Tools {
			if s.Name == "task" {
				t.Error("a child may not spawn children")
			}
		}
	})
}

// A log saved while a reply streamed resumes with the partial text as
// settled history, and nothing restarts by itself.
func TestResumeLogSavedMidStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newScripted(cat(text("Accepted partial"), block()))
		h := newHarness(t, p)
		h.eng.Send(context.Background(), "c1", "go", nil)
		synctest.Wait()
		// Save what the store holds now, mid-stream, as a crash-time save
		// would, through a log of its own.
		path := h.path + ".mid.jsonl"
		l, err := history.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		snap := h.store.Snapshot()
		if !snap.Document.IsOpen(1) {
			t.Fatal("the answer is not open mid-stream")
		}
		if err := l.Save(snap.Document, h.eng.Messages()); err != nil {
			t.Fatal(err)
		}
		l.Close()
		f, _ := os.Open(path)
		conv, err := history.Read(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}

		p2 := newScripted(cat(text("Next answer."), done()))
		h2 := newHarness(t, p2)
		gen := h2.store.Snapshot().Generation
		if err := h2.eng.Resume(conv.Document, conv.Messages); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		snap2 := h2.store.Snapshot()
		if snap2.Generation == gen {
			t.Error("resume did not start a new view lifetime")
		}
		if got := kinds(snap2.Document.Entries()); got != "user agent" {
			t.Fatalf("resumed %s", got)
		}
		if snap2.Document.IsOpen(1) || snap2.Document.At(1).Content.(transcript.Agent).Markdown != "Accepted partial" {
			t.Error("partial text is not settled history")
		}
		if n := len(p2.reqs()); n != 0 {
			t.Fatalf("resume sent %d requests", n)
		}
		if h2.store.Snapshot().Live.Approvals.Len() != 0 {
			t.Error("resume restarted an approval")
		}
		h2.send("c2", "continue")
		h2.wantKinds("user agent user agent turn-receipt")
		if got := roles(p2.reqs()[0].Messages); got != "user user" {
			t.Errorf("next request %s", got)
		}
	})
}

// A conversation saved after a failure resumes with the explicit retry
// available, and nothing retried by itself.
func TestResumeAfterFailureOffersRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, newScripted(cat(text("part"), fail(rateLimited()))))
		h.send("c1", "go")
		conv := h.reload()
		p2 := newScripted(cat(text("whole answer"), done()))
		h2 := newHarness(t, p2)
		if err := h2.eng.Resume(conv.Document, conv.Messages); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		// What a view offers retry from: the failure is the last entry and
		// no turn runs.
		snap := h2.store.Snapshot()
		_, running := snap.Live.Turn()
		if len(p2.reqs()) != 0 || running || snap.Document.At(snap.Document.Len()-1).Content.Kind() != transcript.KindFailure {
			t.Fatalf("requests %d, running %v, entries %s", len(p2.reqs()), running, kinds(snap.Document.Entries()))
		}
		if _, err := h2.eng.Retry("r1"); err != nil {
			t.Fatal(err)
		}
		h2.eng.Wait(context.Background(), "r1")
		h2.wantKinds("user agent failure agent turn-receipt")
	})
}

// A log saved while a tool ran resumes with that call answered as not run,
// so the next request is valid; the tool does not run again.
func TestResumeAnswersDanglingToolCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		msgs := []message.Message{
			message.Text(message.User, "go"),
			{Role: message.Assistant, ToolCalls: []message.ToolCall{{ID: "k1", Name: "probe", Arguments: []byte(`{}`)}, {ID: "k2", Name: "probe", Arguments: []byte(`{}`)}}},
			{Role: message.Tool, ToolCallID: "k1", Content: "ok"},
		}
		doc, _ := transcript.NewDocument("d", nil)
		tool := &fakeTool{name: "probe"}
		p := newScripted(cat(text("fine"), done()))
		h := newHarness(t, p, engine.WithTools(toolSet(t, tool)))
		if err := h.eng.Resume(doc, msgs); err != nil {
			t.Fatal(err)
		}
		h.send("c1", "again")
		req := p.reqs()[0].Messages
		if roles(req) != "user assistant tool tool user" || req[3].ToolCallID != "k2" || !req[3].IsError {
			t.Errorf("request %s %+v", roles(req), req[3])
		}
		if len(tool.calls()) != 0 {
			t.Error("a tool ran again on resume")
		}
	})
}
