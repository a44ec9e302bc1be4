package server

import (
	"testing"

	"github.com/foliodev/folio/transcript"
)

// TestLiveEventsFollowTheProducer publishes one producer's states and
// checks what reaches a tab: each state as it comes (nothing merged from
// what was sent before), stale presentation revisions are dropped, repeated calls of one function stay
// two entries, and closure replaces the live presentation with what the
// settled entry retains (here: nothing), after which nothing changes it.
func TestLiveEventsFollowTheProducer(t *testing.T) {
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
	pub(Change{Op: OpSettle, Entry: agent("Hello, world")})
	f := c.event("settle")
	if text(f) != "Hello, world" || f.Open {
		t.Fatalf("settlement: %s", f.raw)
	}
	settleRev := f.Revision

	call := func(id string, p *transcript.Presentation) transcript.Entry {
		return transcript.Entry{ID: id, Content: transcript.Tool{InvocationID: "inv-" + id,
			Receipt: transcript.ToolReceipt{App: "shell", Summary: "ls", Status: transcript.ToolOK}, Presentation: p}, Timestamp: tsAt(2)}
	}
	pres := func(rev int64) *transcript.Presentation {
		return &transcript.Presentation{Schema: "folio.args", Version: 1, Revision: rev, Payload: []byte(`{}`)}
	}
	pub(Change{Op: OpUpsert, Entry: call("t1", pres(1)), After: "r1"})
	pub(Change{Op: OpUpsert, Entry: call("t2", nil), After: "t1"})
	a, b := c.event("upsert"), c.event("upsert")
	if a.Revision != settleRev+1 {
		t.Fatalf("an event went out between the settle and the tool: %s", a.raw)
	}
	ea, _ := transcript.DecodeEntry(a.Entry)
	eb, _ := transcript.DecodeEntry(b.Entry)
	if ea.ID != "t1" || eb.ID != "t2" || b.After != "t1" {
		t.Fatalf("repeated calls: %s / %s", a.raw, b.raw)
	}
	pub(Change{Op: OpPresentation, EntryID: "t1", InvocationID: "inv-t1", Presentation: pres(2), Ephemeral: true})
	pub(Change{Op: OpPresentation, EntryID: "t1", InvocationID: "inv-t1", Presentation: pres(1), Ephemeral: true}) // stale
	pub(Change{Op: OpPresentation, EntryID: "t1", InvocationID: "inv-t1", Presentation: pres(3), Ephemeral: true})
	if p := c.event("presentation"); p.raw == nil || !contains(p.raw, `"revision":2`) {
		t.Fatalf("first presentation: %s", p.raw)
	}
	if p := c.event("presentation"); !contains(p.raw, `"presentation":{"schema":"folio.args","version":1,"revision":3`) {
		t.Fatalf("stale presentation went out: %s", p.raw)
	}
	// The final state has no presentation: the draft ends with the call.
	pub(Change{Op: OpSettle, Entry: call("t1", nil)})
	s := c.event("settle")
	e, _ := transcript.DecodeEntry(s.Entry)
	if tool := e.Content.(transcript.Tool); tool.Presentation != nil {
		t.Fatalf("settlement kept a presentation the final state does not have: %s", s.raw)
	}
	if err := ts.Publish("c", Change{Op: OpPresentation, EntryID: "t1", InvocationID: "inv-t1", Presentation: pres(9)}); err != nil {
		t.Fatal(err)
	}
	// A new checkpoint (a reconnect) has no presentation for it either.
	cp := c.open("c")
	for _, p := range cp.Checkpoint.Presentations {
		if p.EntryID == "t1" {
			t.Fatalf("a closed call's presentation is in the checkpoint: %+v", p)
		}
	}
	pub(Change{Op: OpTurn, Turn: &TurnState{State: "idle"}})
	c.event("turn")
	for _, f := range c.held {
		if f.Type == "event" && (f.Op == "presentation" || f.Op == "upsert") {
			t.Fatalf("unexpected event: %s", f.raw)
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
