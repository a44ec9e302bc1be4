package engine_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/receipt"
	"github.com/foliodev/folio/tools/toolschema"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

// A plain reply: reasoning and answer each get one entry, and the receipt
// carries time measured from the stream and the usage the provider
// reported.
func TestTextTurnEntriesAndMeasuredThroughput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newScripted(cat(
			pause(300*time.Millisecond), // time to first token
			think("Let me "), pause(100*time.Millisecond), think("think."), thinkDone(),
			pause(100*time.Millisecond), text("Hello"), pause(100*time.Millisecond), text(", world."),
			usage(12, 40), done()))
		h := newHarness(t, p)
		r := h.send("c1", "hi")
		if r.State != "done" {
			t.Fatalf("state %s (%s)", r.State, r.Reason)
		}
		es := h.wantKinds("user reasoning agent turn-receipt")
		if got := es[1].Content.(transcript.Reasoning).Text; got != "Let me think." {
			t.Errorf("reasoning %q", got)
		}
		if got := es[2].Content.(transcript.Agent).Markdown; got != "Hello, world." {
			t.Errorf("answer %q", got)
		}
		rc := es[3].Content.(transcript.TurnReceipt)
		if rc.FinishedAt == nil || len(rc.Steps) != 1 {
			t.Fatalf("receipt %+v", rc)
		}
		s := rc.Steps[0]
		// First output at 300ms, last at 600ms: 300ms of decoding. The
		// step took 600ms; time before the first token is not decode time.
		if s.GenerationDurationMs == nil || *s.GenerationDurationMs != 300 {
			t.Errorf("generation %v, want 300ms", s.GenerationDurationMs)
		}
		if s.DurationMs != 600 {
			t.Errorf("duration %v, want 600", s.DurationMs)
		}
		if *s.PromptTokens != 12 || *s.CompletionTokens != 40 {
			t.Errorf("usage %d/%d", *s.PromptTokens, *s.CompletionTokens)
		}
		rate, ok := receipt.Sum(rc.Steps).TokPerSec()
		if !ok || rate != 40/0.3 {
			t.Errorf("throughput %v %v, want %v", rate, ok, 40/0.3)
		}
		live := h.store.Snapshot().Live
		if live.Totals.InputTokens != 12 || live.Totals.OutputTokens != 40 || live.PromptContext != 12 || live.Model != "test-model" {
			t.Errorf("live %+v", live)
		}
		msgs := h.eng.Messages()
		if len(msgs) != 2 || msgs[1].Content != "Hello, world." || msgs[1].Reasoning[0].Signature != "sig" {
			t.Errorf("messages %+v", msgs)
		}
		// The log holds the same entries.
		c := h.reload()
		if got := kinds(c.Document.Entries()); got != "user reasoning agent turn-receipt" {
			t.Errorf("saved %s", got)
		}
	})
}

// Without usage the receipt omits tokens and throughput instead of
// guessing them.
func TestMissingUsageIsNotInvented(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, newScripted(cat(text("a"), pause(time.Second), text("b"), done())))
		h.send("c1", "hi")
		es := h.wantKinds("user agent turn-receipt")
		s := es[2].Content.(transcript.TurnReceipt).Steps[0]
		if s.CompletionTokens != nil || s.PromptTokens != nil || s.TokensPerSecond != nil {
			t.Errorf("invented usage: %+v", s)
		}
		if _, ok := receipt.Sum([]transcript.Step{s}).TokPerSec(); ok {
			t.Error("throughput without token counts")
		}
	})
}

// Tool-call arguments arrive in fragments; the tool gets exactly the
// complete arguments of the end event, and draft bytes never reach it.
func TestFragmentedToolArgumentsAndDraftIsolation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tool := &fakeTool{name: "probe"}
		// The fragments carry a marker the complete arguments do not: if
		// any draft byte leaked into the invocation, the tool would see it.
		p := newScripted(
			cat(text("Checking."),
				callStart(0, "call_1", "probe"),
				callDelta(0, `{"pa`), pause(60*time.Millisecond), callDelta(0, `th":"DRAFT-ONLY`),
				pause(60*time.Millisecond), callDelta(0, `"}`), pause(60*time.Millisecond),
				callEnd(0, "call_1", "probe", `{"path":"final"}`),
				usage(10, 5), done()),
			cat(text("Done."), usage(20, 2), done()))
		drafts := make(chan string, 10)
		h := newHarness(t, p, engine_WithTools(toolSet(t, tool)))
		cancel := h.eng.Host().Subscribe(func(c toolview.Change) {
			if c.Value != nil && c.Value.Draft {
				drafts <- string(c.Value.Payload)
			}
		})
		defer cancel()
		h.send("c1", "go")
		if got := tool.calls(); len(got) != 1 || got[0] != `{"path":"final"}` {
			t.Fatalf("tool got %q", got)
		}
		es := h.wantKinds("user agent tool agent turn-receipt")
		tc := es[2].Content.(transcript.Tool)
		if tc.Receipt.Status != transcript.ToolOK || tc.InvocationID != es[2].ID || tc.Receipt.Args != `{"path":"final"}` {
			t.Errorf("tool entry %+v", tc.Receipt)
		}
		if strings.Contains(tc.Receipt.Args+string(tc.Receipt.Detail), "DRAFT") {
			t.Error("draft bytes reached the tool entry")
		}
		// The draft was shown (the probe tool set declares a draft adapter).
		var sawDraft bool
		for len(drafts) > 0 {
			if strings.Contains(<-drafts, "DRAFT-ONLY") {
				sawDraft = true
			}
		}
		if !sawDraft {
			t.Error("the draft presentation never showed the fragments")
		}
		msgs := h.eng.Messages()
		if len(msgs) != 4 || msgs[1].ToolCalls[0].ID != "call_1" || string(msgs[1].ToolCalls[0].Arguments) != `{"path":"final"}` ||
			msgs[2].Role != message.Tool || msgs[2].ToolCallID != "call_1" {
			t.Fatalf("messages %+v", msgs)
		}
		// The second request carried the tool result.
		if reqs := p.reqs(); len(reqs) != 2 || len(reqs[1].Messages) != 3 {
			t.Errorf("requests %d", len(reqs))
		}
		// Nothing of the draft was saved.
		data := readFile(t, h.path)
		if strings.Contains(data, "DRAFT-ONLY") {
			t.Error("draft bytes reached the log")
		}
	})
}

var _ = context.Background

// A stream that ends a call with invalid JSON arguments (breaking the
// provider contract) does not run the tool and does not poison the log.
func TestInvalidArgumentsNeverRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tool := &fakeTool{name: "probe"}
		p := newScripted(cat(callStart(0, "k", "probe"), callEnd(0, "k", "probe", `{"a":`), done()), cat(text("ok"), done()))
		h := newHarness(t, p, engine_WithTools(toolSet(t, tool)))
		h.send("c1", "go")
		if n := len(tool.calls()); n != 0 {
			t.Fatalf("tool ran %d times", n)
		}
		es := h.wantKinds("user tool turn-receipt")
		if r := es[1].Content.(transcript.Tool).Receipt; r.NotDone == "" || r.Reason != "not_run" {
			t.Errorf("receipt %+v", r)
		}
		if got := kinds(h.reload().Document.Entries()); got != "user tool turn-receipt" {
			t.Errorf("saved %s", got)
		}
	})
}

// A reply cut at the output limit says so.
func TestLengthFinishNotice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newScripted(cat(text("Long answ"), item{ev: provider.Event{Kind: provider.Done, FinishReason: provider.FinishLength}}))
		h := newHarness(t, p)
		if r := h.send("c1", "go"); r.State != "done" {
			t.Fatal(r.State)
		}
		es := h.wantKinds("user agent notice turn-receipt")
		if n := es[2].Content.(transcript.Notice); !strings.Contains(n.Text, "output limit") {
			t.Errorf("notice %q", n.Text)
		}
	})
}

// Arguments longer than the host's draft bound: the draft is cut and then
// continued with bounded checkpoints, while the tool still gets every byte
// of the complete arguments.
func TestLongArgumentsDraftCheckpoints(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tool := &fakeTool{name: "probe"}
		long := strings.Repeat("x", 20000)
		var frags []string
		args := `{"text":"` + long + `"}`
		for i := 0; i < len(args); i += 100 {
			frags = append(frags, args[i:min(i+100, len(args))])
		}
		items := []item{callStart(0, "k", "probe")}
		for _, f := range frags {
			items = append(items, callDelta(0, f), pause(time.Millisecond))
		}
		items = append(items, callEnd(0, "k", "probe", args), done())
		p := newScripted(items, cat(text("ok"), done()))
		host := toolview.New(toolview.WithPayloadLimit(1024), toolview.WithCadence(0))
		var last string
		host.Subscribe(func(c toolview.Change) {
			if c.Value != nil && c.Value.Draft {
				last = string(c.Value.Payload)
			}
		})
		h := newHarness(t, p, engine_WithTools(toolSet(t, tool)), engine.WithHost(host))
		h.send("c1", "go")
		if got := tool.calls(); len(got) != 1 || got[0] != args {
			t.Fatalf("tool got %d bytes", len(got[0]))
		}
		if !strings.Contains(last, `"truncated":true`) || !strings.Contains(last, `"bytes":20011`) {
			t.Errorf("last draft %s", last[:min(len(last), 200)])
		}
		if diags := host.Metrics(); diags.DraftCheckpoints == 0 {
			t.Error("no draft checkpoint was sent after the cut")
		}
	})
}

// While the model writes a call's arguments, its open entry shows the
// draft (the invocation's primary presentation); the draft leaves the
// entry when the arguments are complete, before anything is saved.
func TestDraftShownLiveNeverSaved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := make(chan struct{})
		tool := &fakeTool{name: "probe"}
		p := newScripted(
			cat(callStart(0, "k", "probe"), callDelta(0, `{"path":`), pause(60*time.Millisecond),
				callDelta(0, `"SECRET-DRAFT"}`), gate(g), callEnd(0, "k", "probe", `{"path":"SECRET-DRAFT"}`), done()),
			cat(text("ok"), done()))
		h := newHarness(t, p, engine_WithTools(toolSet(t, tool)))
		h.eng.Send(context.Background(), "c1", "go", nil)
		time.Sleep(time.Second) // virtual: the stream reaches the gate
		synctest.Wait()
		snap := h.store.Snapshot()
		tc := snap.Document.At(1).Content.(transcript.Tool)
		if !snap.Document.IsOpen(1) || tc.Presentation == nil || tc.Presentation.Schema != toolschema.Args ||
			!strings.Contains(string(tc.Presentation.Payload), "SECRET-DRAFT") {
			t.Fatalf("draft not shown live: %+v", tc.Presentation)
		}
		close(g)
		h.eng.Wait(context.Background(), "c1")
		es := h.wantKinds("user tool agent turn-receipt")
		if pr := es[1].Content.(transcript.Tool).Presentation; pr != nil && pr.Schema == toolschema.Args {
			t.Error("the draft stayed in the settled entry")
		}
		// The complete arguments are saved with the receipt, as any call's
		// are; the draft payload never is.
		if strings.Contains(readFile(t, h.path), toolschema.Args) {
			t.Error("a draft presentation reached the log")
		}
	})
}
