package engine_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/transcript"
)

// eventsFrom turns fuzz bytes into a provider event sequence that may
// break every ordering rule: deltas for calls never started, ends without
// starts, invalid arguments, text after tool calls, invalid UTF-8, usage
// anywhere, and pauses.
func eventsFrom(data []byte) []item {
	var out []item
	for i := 0; i+1 < len(data); i += 2 {
		b, arg := data[i], data[i+1]
		idx := int(arg % 3)
		frag := string([]byte{'a' + arg%26, arg})
		switch b % 9 {
		case 0:
			out = append(out, text(frag))
		case 1:
			out = append(out, think(frag))
		case 2:
			out = append(out, thinkDone())
		case 3:
			out = append(out, callStart(idx, "id"+strconv.Itoa(idx), "probe"))
		case 4:
			out = append(out, callDelta(idx, "DRAFT"+frag))
		case 5:
			args := `{"n":` + strconv.Itoa(int(arg)) + `}`
			if arg%7 == 0 {
				args = `{"n":` // invalid
			}
			out = append(out, item{ev: provider.Event{Kind: provider.ToolCallEnd, Index: idx, ID: "id" + strconv.Itoa(idx), Name: "probe", Arguments: jsontext.Value(args)}})
		case 6:
			out = append(out, usage(int64(arg), int64(arg/2)))
		case 7:
			out = append(out, pause(time.Duration(arg)*time.Millisecond))
		case 8:
			if arg%5 == 0 {
				out = append(out, fail(&provider.Error{Class: provider.ClassTransport, Msg: "reset"}))
			}
		}
	}
	return append(out, done())
}

// Whatever a provider streams, a turn ends, every entry validates, the log
// accepts the document and messages, and no draft byte reaches a tool.
func FuzzProviderStream(f *testing.F) {
	f.Add([]byte{0, 'h', 1, 't', 3, 0, 4, 1, 5, 2, 0, 'x'})
	f.Add([]byte{4, 1, 5, 1, 3, 2, 5, 7, 6, 9})
	f.Add([]byte{7, 200, 0, 0xff, 8, 5, 2, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 400 {
			return
		}
		synctest.Test(t, func(t *testing.T) {
			tool := &fakeTool{name: "probe"}
			p := newScripted(eventsFrom(data), cat(text("end"), done()), cat(text("end"), done()))
			h := newHarness(t, p, engine.WithTools(toolSet(t, tool)), engine.WithMaxSteps(3),
				engine.WithBackoff(provider.Backoff{}))
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			h.eng.Send(ctx, "c1", "go", nil)
			r, err := h.eng.Wait(ctx, "c1")
			if err != nil {
				t.Fatalf("the turn never ended: %v", err)
			}
			switch r.State {
			case engine.Done, engine.Failed, engine.Stopped:
			default:
				t.Fatalf("state %s", r.State)
			}
			snap := h.store.Snapshot()
			for i, e := range snap.Document.All() {
				if err := e.Validate(); err != nil {
					t.Fatalf("entry %d: %v", i, err)
				}
				if snap.Document.IsOpen(i) {
					t.Fatalf("entry %d (%s) still open after the turn", i, e.Content.Kind())
				}
			}
			for _, a := range tool.calls() {
				if strings.Contains(a, "DRAFT") {
					t.Fatalf("draft bytes reached the tool: %q", a)
				}
			}
			if strings.Contains(readFile(t, h.path), "DRAFT") {
				t.Fatal("draft bytes reached the log")
			}
			for _, m := range h.eng.Messages() {
				if err := m.Validate(); err != nil {
					t.Fatalf("message: %v", err)
				}
			}
			if got := kinds(h.reload().Document.Entries()); got != kinds(snap.Document.Entries()) {
				t.Fatalf("saved %s, live %s", got, kinds(snap.Document.Entries()))
			}
			_ = transcript.KindUser
		})
	})
}
