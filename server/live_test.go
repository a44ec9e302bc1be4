package server

import (
	"testing"

	"github.com/foliodev/folio/transcript"
)

// TestLiveEventsOnlyMoveForward publishes a producer's states out of order
// and checks what reaches a tab: text never shortens, a settled reply never
// reopens, a closed presentation never changes, stale presentation revisions
// are dropped, repeated calls of one function stay two entries, and
// settlement keeps the trace the final state omits.
func TestLiveEventsOnlyMoveForward(t *testing.T) {
	ts := newTestServer(t, Options{})
	ts.writeGen(t, "c", 10, 1)
	c := ts.dial(t)
	c.open("c")
	pub := func(ch Change) { t.Helper(); must(t, ts.Publish("c", ch)) }
	agent := func(text string) transcript.Entry {
		return transcript.Entry{ID: "r1", Content: transcript.Agent{Markdown: text}, Timestamp: tsAt(1)}
	}
	text := func(f frame) string {
		t.Helper()
		e, err := transcript.DecodeEntry(f.Entry)
		must(t, err)
		return e.Content.(transcript.Agent).Markdown
	}

	pub(Change{Op: OpUpsert, Entry: agent("Hello, wor")})
	if f := c.event("upsert"); text(f) != "Hello, wor" || !f.Open {
		t.Fatalf("first state: %s", f.raw)
	}
	pub(Change{Op: OpUpsert, Entry: agent("Hello")}) // stale: shorter prefix
	pub(Change{Op: OpUpsert, Entry: agent("Hello, world")})
	if f := c.event("upsert"); text(f) != "Hello, world" {
		t.Fatalf("after a stale shorter state, got %q", text(f))
	}
	pub(Change{Op: OpSettle, Entry: agent("Hello")}) // final state omits text
	f := c.event("settle")
	if text(f) != "Hello, world" || f.Open {
		t.Fatalf("settlement dropped received text: %s", f.raw)
	}
	settleRev := f.Revision
	pub(Change{Op: OpUpsert, Entry: agent("Hello, world, again")}) // reopen attempt

	// Two calls of one function: two entries; presentations only advance.
	call := func(id string) transcript.Entry {
		return transcript.Entry{ID: id, Content: transcript.Tool{InvocationID: "inv-" + id,
			Receipt: transcript.ToolReceipt{App: "shell", Summary: "ls", Status: transcript.ToolOK}}, Timestamp: tsAt(2)}
	}
	pres := func(rev int64) *transcript.Presentation {
		return &transcript.Presentation{Schema: "folio.shell/terminal", Version: 1, Revision: rev, Payload: []byte(`{}`)}
	}
	pub(Change{Op: OpUpsert, Entry: call("t1"), After: "r1"})
	pub(Change{Op: OpUpsert, Entry: call("t2"), After: "t1"})
	a, b := c.event("upsert"), c.event("upsert")
	if a.Revision <= settleRev {
		t.Fatalf("the reopen attempt produced an event before the tool: %s", a.raw)
	}
	ea, _ := transcript.DecodeEntry(a.Entry)
	eb, _ := transcript.DecodeEntry(b.Entry)
	if ea.ID != "t1" || eb.ID != "t2" || b.After != "t1" {
		t.Fatalf("repeated calls: %s / %s", a.raw, b.raw)
	}
	pub(Change{Op: OpPresentation, EntryID: "t1", InvocationID: "inv-t1", Presentation: pres(2)})
	pub(Change{Op: OpPresentation, EntryID: "t1", InvocationID: "inv-t1", Presentation: pres(1)}) // stale
	pub(Change{Op: OpPresentation, EntryID: "t1", InvocationID: "inv-t1", Presentation: pres(3)})
	if p := c.event("presentation"); p.raw == nil || !contains(p.raw, `"revision":2`) {
		t.Fatalf("first presentation: %s", p.raw)
	}
	if p := c.event("presentation"); !contains(p.raw, `"presentation":{"schema":"folio.shell/terminal","version":1,"revision":3`) {
		t.Fatalf("stale presentation went out: %s", p.raw)
	}
	// Settling without a presentation keeps the received one; after that
	// the invocation is closed and nothing changes it.
	pub(Change{Op: OpSettle, Entry: call("t1")})
	s := c.event("settle")
	e, _ := transcript.DecodeEntry(s.Entry)
	if tool := e.Content.(transcript.Tool); tool.Presentation == nil || tool.Presentation.Revision != 3 {
		t.Fatalf("settlement lost the presentation: %s", s.raw)
	}
	if err := ts.Publish("c", Change{Op: OpPresentation, EntryID: "t1", InvocationID: "inv-t1", Presentation: pres(9)}); err != nil {
		t.Fatal(err)
	}
	pub(Change{Op: OpTurn, Turn: &TurnState{State: "idle"}})
	c.event("turn")
	for _, f := range c.held {
		if f.Type == "event" && (f.Op == "presentation" || f.Op == "upsert" || f.Op == "settle") {
			t.Fatalf("event that moves backwards went out: %s", f.raw)
		}
	}
}

func contains(b []byte, s string) bool { return len(s) == 0 || indexOf(string(b), s) >= 0 }

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}
