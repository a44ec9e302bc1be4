package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/tools/toolschema"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

func taskView(t *testing.T, c transcript.Content) toolschema.TaskView {
	t.Helper()
	tc, ok := c.(transcript.Tool)
	if !ok || tc.Presentation == nil || tc.Presentation.Schema != toolschema.Task {
		t.Fatalf("not a task entry with a folio.task presentation: %#v", c)
	}
	var v toolschema.TaskView
	if err := json.Unmarshal(tc.Presentation.Payload, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func stepLine(s toolschema.TaskStep) string {
	if s.Name != "" {
		return s.Kind + ":" + s.Name + ":" + s.Status
	}
	return s.Kind + ":" + s.Status
}

func stepLines(ss []toolschema.TaskStep) string {
	var out []string
	for _, s := range ss {
		out = append(out, stepLine(s))
	}
	return strings.Join(out, " ")
}

// A child's tool calls show in the task entry's presentation as nested
// steps: live while the child works, and the same settled list in the
// document and in the log read back, while the main document holds only
// the task entry.
func TestTaskPresentationListsChildSteps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		probe := &fakeTool{name: "probe"}
		slow := &fakeTool{name: "slow", run: func(ctx context.Context, inv *toolview.Invocation, _ []byte) (toolview.Result, error) {
			<-gate
			return toolview.Result{}, errors.New("disk on fire")
		}}
		sp := &lazySpawner{}
		set := toolSet(t, tools.Task{Spawner: sp}, probe, slow)
		p := newScripted(
			cat(call(0, "t1", "task", `{"prompt":"look around","label":"scout"}`), done()),
			cat(think("where to start"), thinkDone(), call(0, "c1", "probe", `{"n":1}`), done()), // child
			cat(call(0, "c2", "slow", `{}`), done()),                                             // child
			cat(text("Found it.\nDetails follow."), done()),                                      // child
			cat(text("The scout found it."), done()))
		h := newHarness(t, p, engine.WithTools(set))
		sp.e = h.eng
		h.eng.Send(context.Background(), "c1", "go", nil)
		defer func() {
			select {
			case <-gate:
			default:
				close(gate)
			}
		}()
		time.Sleep(toolview.DefaultCadence) // virtual: the host's cadence window opens
		synctest.Wait()
		snap := h.store.Snapshot()
		if got := kinds(snap.Document.Entries()); got != "user tool" || !snap.Document.IsOpen(1) {
			t.Fatalf("main document while the child works: %s", got)
		}
		live := taskView(t, snap.Document.At(1).Content)
		if got := stepLines(live.Steps); live.Status != "running" || got != "reasoning:ok tool:probe:ok tool:slow:running" {
			t.Fatalf("live steps %q, status %q", got, live.Status)
		}
		close(gate)
		h.eng.Wait(context.Background(), "c1")

		es := h.wantKinds("user tool agent turn-receipt")
		v := taskView(t, es[1].Content)
		want := "reasoning:ok tool:probe:ok tool:slow:failed answer:ok"
		if got := stepLines(v.Steps); got != want || v.Omitted != 0 {
			t.Errorf("settled steps %q (omitted %d), want %q", got, v.Omitted, want)
		}
		if v.Status != "done" || v.Label != "scout" || v.Child == "" || v.Answer != "Found it.\nDetails follow." {
			t.Errorf("settled view %+v", v)
		}
		if s := v.Steps[0]; s.Summary != "where to start" {
			t.Errorf("reasoning summary %q", s.Summary)
		}
		if s := v.Steps[3]; s.Summary != "Found it. Details follow." {
			t.Errorf("answer summary %q is not one line", s.Summary)
		}
		if es[1].Content.(transcript.Tool).Receipt.App != "task" {
			t.Errorf("main tool entry %+v", es[1].Content)
		}

		// The log holds the same steps, so a reload shows the same rows.
		conv := h.reload()
		var found bool
		for _, e := range conv.Document.Entries() {
			if e.ID == es[1].ID {
				found = true
				if r := taskView(t, e.Content); stepLines(r.Steps) != want || r.Answer != v.Answer {
					t.Errorf("reloaded steps %q", stepLines(r.Steps))
				}
			} else if tc, ok := e.Content.(transcript.Tool); ok {
				t.Errorf("a child's call leaked into the main log: %+v", tc.Receipt)
			}
		}
		if !found {
			t.Error("the task entry is not in the log")
		}
	})
}

// A child with more calls than the bound keeps the newest steps and counts
// the rest; the payload stays far under the host's bound.
func TestTaskPresentationIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 70
		probe := &fakeTool{name: "probe"}
		sp := &lazySpawner{}
		set := toolSet(t, tools.Task{Spawner: sp}, probe)
		long := strings.Repeat("word ", 100)
		var child []any
		for i := range n {
			child = append(child, call(i, fmt.Sprintf("c%d", i), "probe", fmt.Sprintf(`{"i":%d,"pad":%q}`, i, long)))
		}
		child = append(child, done())
		p := newScripted(
			cat(call(0, "t1", "task", `{"prompt":"`+long+`"}`), done()),
			cat(child...),
			cat(text(strings.Repeat("answer ", 400)), done()),
			cat(text("ok"), done()))
		h := newHarness(t, p, engine.WithTools(set))
		sp.e = h.eng
		h.send("c1", "go")
		es := h.wantKinds("user tool agent turn-receipt")
		tc := es[1].Content.(transcript.Tool)
		v := taskView(t, tc)
		if len(v.Steps) != toolschema.TaskMaxSteps || v.Omitted != n+1-toolschema.TaskMaxSteps {
			t.Fatalf("%d steps, omitted %d; want %d, %d", len(v.Steps), v.Omitted, toolschema.TaskMaxSteps, n+1-toolschema.TaskMaxSteps)
		}
		// The newest are kept: the last call, then the answer.
		if last := v.Steps[len(v.Steps)-1]; last.Kind != "answer" || len(last.Summary) > toolschema.TaskSummaryBytes {
			t.Errorf("last step %+v", last)
		}
		if s := v.Steps[len(v.Steps)-2]; s.Kind != "tool" || s.Status != "ok" {
			t.Errorf("last call %+v", s)
		}
		if len(v.Answer) > toolschema.TaskAnswerPreview || !strings.HasSuffix(v.Answer, "…") {
			t.Errorf("answer preview of %d bytes", len(v.Answer))
		}
		if len(v.Label) > 60 {
			t.Errorf("label of %d bytes", len(v.Label))
		}
		if size := len(tc.Presentation.Payload); size > 32<<10 || size > toolview.DefaultPayloadLimit {
			t.Errorf("payload of %d bytes", size)
		}
		if got := len(probe.calls()); got != n {
			t.Errorf("%d calls ran", got)
		}
	})
}
