package engine_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/tools/toolschema"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

// A running tool's presentation reaches its open entry through the store,
// so every view sees it live; closure settles the entry with the retained
// checkpoint, in place and under the same ID.
func TestRunningToolPresentationIsLiveInTheStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		step := make(chan struct{}, 1)
		tool := &fakeTool{name: "work", run: func(ctx context.Context, inv *toolview.Invocation, _ []byte) (toolview.Result, error) {
			inv.Presentation().Replace(toolview.Payload{Schema: toolschema.Diff, Version: 1, Data: []byte(`{"path":"a","diff":"bytes:1"}`)})
			<-step
			inv.Presentation().Replace(toolview.Payload{Schema: toolschema.Diff, Version: 1, Data: []byte(`{"path":"a","diff":"bytes:2"}`)})
			return toolview.Result{Text: "done"}, nil
		}}
		p := newScripted(cat(call(0, "k", "work", `{}`), done()), cat(text("ok"), done()))
		h := newHarness(t, p, engine.WithTools(toolSet(t, tool)))
		h.eng.Send(context.Background(), "c1", "go", nil)
		defer func() {
			select {
			case <-step:
			default:
				close(step) // let the tool finish if the test failed early
			}
		}()
		// The host delivers at most one value per cadence window; the
		// argument draft used this one.
		time.Sleep(toolview.DefaultCadence)
		synctest.Wait()
		snap := h.store.Snapshot()
		if !snap.Document.IsOpen(1) || snap.Live.Activity != transcript.ActivityTool {
			t.Fatalf("tool entry not open: %s, activity %q", kinds(snap.Document.Entries()), snap.Live.Activity)
		}
		running := snap.Document.At(1)
		tc := running.Content.(transcript.Tool)
		if tc.Presentation == nil || !strings.Contains(string(tc.Presentation.Payload), "bytes:1") || tc.InvocationID != running.ID {
			t.Fatalf("live presentation %+v", tc.Presentation)
		}
		step <- struct{}{}
		h.eng.Wait(context.Background(), "c1")
		es := h.wantKinds("user tool agent turn-receipt")
		if es[1].ID != running.ID {
			t.Error("the tool entry changed identity at closure")
		}
		final := es[1].Content.(transcript.Tool)
		if final.Presentation == nil || !strings.Contains(string(final.Presentation.Payload), "bytes:2") || final.Receipt.Status != transcript.ToolOK {
			t.Errorf("retained checkpoint %+v", final.Presentation)
		}
	})
}

// Attachments reach the model inside the user message; the entry keeps
// what the person typed. The command list and change signal follow.
func TestAttachmentsCommandsAndChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newScripted(cat(text("read it"), done()))
		h := newHarness(t, p, engine.WithSystem("be brief"))
		ctx := context.Background()
		h.eng.Send(ctx, "c1", "summarize", []engine.Attachment{{Name: "notes.txt", Text: "alpha beta"}})
		<-h.eng.Changed()
		h.eng.Wait(ctx, "c1")
		req := p.reqs()[0]
		if req.System != "be brief" || !strings.Contains(req.Messages[0].Content, `<attachment name="notes.txt">`) ||
			!strings.Contains(req.Messages[0].Content, "alpha beta") {
			t.Errorf("request %+v", req)
		}
		if u := h.entries()[0].Content.(transcript.User); u.Text != "summarize" {
			t.Errorf("user entry %q", u.Text)
		}
		cs := h.eng.Commands()
		if len(cs) != 1 || cs[0].CommandID != "c1" || cs[0].State != engine.Done {
			t.Errorf("commands %+v", cs)
		}
	})
}

// The step bound ends a turn whose model never stops calling tools.
func TestMaxSteps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tool := &fakeTool{name: "again"}
		var rs [][]item
		for i := range 5 {
			rs = append(rs, cat(call(0, "k", "again", `{"i":`+string(rune('0'+i))+`}`), done()))
		}
		h := newHarness(t, newScripted(rs...), engine.WithTools(toolSet(t, tool)), engine.WithMaxSteps(3))
		if r := h.send("c1", "go"); r.State != engine.Stopped {
			t.Fatalf("state %s", r.State)
		}
		es := h.wantKinds("user tool tool tool notice turn-receipt")
		if !strings.Contains(es[4].Content.(transcript.Notice).Text, "3 model steps") {
			t.Errorf("notice %+v", es[4].Content)
		}
	})
}

// Supplemental items and ephemeral values are in the open tool entry while
// the invocation runs, so the terminal and the server (which read the
// store) show them; closure replaces the entry with the record, which keeps
// only the retained checkpoints.
func TestRunningToolSupplementalsAreLiveInTheStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		step := make(chan struct{})
		tool := &fakeTool{name: "work", run: func(ctx context.Context, inv *toolview.Invocation, _ []byte) (toolview.Result, error) {
			inv.Supplemental("stats").Replace(toolview.Payload{Schema: toolschema.Task, Version: 1, Data: []byte(`{"files":1}`)})
			inv.Supplemental("spinner", toolview.WithRetention(toolview.Ephemeral)).Replace(toolview.Payload{Schema: toolschema.Task, Version: 1, Data: []byte(`{"note":"spinning"}`)})
			<-step
			return toolview.Result{Text: "done"}, nil
		}}
		p := newScripted(cat(call(0, "k", "work", `{}`), done()), cat(text("ok"), done()))
		h := newHarness(t, p, engine.WithTools(toolSet(t, tool)))
		h.eng.Send(context.Background(), "c1", "go", nil)
		released := false
		defer func() {
			if !released {
				close(step)
			}
		}()
		synctest.Wait()
		snap := h.store.Snapshot()
		if !snap.Document.IsOpen(1) {
			t.Fatalf("tool entry not open: %s", kinds(snap.Document.Entries()))
		}
		open := snap.Document.At(1).Content.(transcript.Tool)
		var keys []string
		for _, kp := range open.Supplementals {
			keys = append(keys, kp.Key+"="+string(kp.Presentation.Payload))
		}
		if got := strings.Join(keys, " "); got != `stats={"files":1} spinner={"note":"spinning"}` {
			t.Fatalf("open entry's supplementals: %s", got)
		}
		close(step)
		released = true
		h.eng.Wait(context.Background(), "c1")
		es := h.wantKinds("user tool agent turn-receipt")
		final := es[1].Content.(transcript.Tool)
		if len(final.Supplementals) != 1 || final.Supplementals[0].Key != "stats" {
			t.Fatalf("settled supplementals %+v, want only the retained stats", final.Supplementals)
		}
	})
}
