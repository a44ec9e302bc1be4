package toolview

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/foliodev/folio/transcript"
)

// event is one thing a reconnecting client may receive: a live change or an
// attach answer.
type event struct {
	name   string
	change *Change
	state  *State
	live   int // position in the live stream, 0 for anomalies and snapshots
}

func (e event) apply(r *Replica) {
	if e.change != nil {
		r.Apply(*e.change)
	} else {
		r.Reset(*e.state)
	}
}

// TestTerminalWinsEveryReconnectOrdering plays every ordering of a race
// between the live stream (which stays in order), attach answers taken at
// different moments, a duplicate delivery and a forged higher-revision
// delivery, and checks the client always ends on the terminal record.
func TestTerminalWinsEveryReconnectOrdering(t *testing.T) {
	h := New(WithCadence(0))
	rec := record(h)
	inv := mustOpen(t, h, Spec{ID: "race", Tool: "echo", Producer: testManifest(t)})
	p, logs := inv.Presentation(), inv.Supplemental("logs")

	p.Replace(text("one"))
	snapOpen1, _ := h.Attach("race")
	logs.Replace(text("log"))
	p.Replace(text("two"))
	snapOpen2, _ := h.Attach("race")
	final, _ := inv.Close(Outcome{Status: transcript.ToolOK}, Result{Text: "done"})
	snapClosed, _ := h.Attach("race")
	want := final.Terminal()

	all := rec.all()
	first := all[0] // "one": the client saw it before it disconnected
	var events []event
	for i, c := range all[1:] {
		c := c
		events = append(events, event{name: fmt.Sprintf("live%d", i+1), change: &c, live: i + 1})
	}
	dup := all[len(all)-3] // the "two" delivery again, late
	forged := Change{Invocation: "race", Item: "", Generation: first.Generation, Revision: 99, Open: true,
		Value: &Value{Schema: schemaText, Version: 1, Payload: []byte(`{"text":"forged"}`)}}
	events = append(events,
		event{name: "attach-open1", state: &snapOpen1},
		event{name: "attach-open2", state: &snapOpen2},
		event{name: "attach-closed", state: &snapClosed},
		event{name: "duplicate", change: &dup},
		event{name: "higher-revision", change: &forged},
	)
	if len(events) != 9 {
		t.Fatalf("expected 9 events, got %d", len(events))
	}

	orderings := 0
	permute(len(events), func(order []int) {
		// The live stream is ordered per invocation; only attach answers
		// and anomalies interleave freely.
		lastLive := 0
		for _, i := range order {
			if l := events[i].live; l != 0 {
				if l < lastLive {
					return
				}
				lastLive = l
			}
		}
		orderings++
		var r Replica
		r.Apply(first)
		sawClose := false
		for step, i := range order {
			e := events[i]
			e.apply(&r)
			sawClose = sawClose || (e.change != nil && !e.change.Open) || (e.state != nil && !e.state.Open)
			if sawClose && r.State().Open {
				t.Fatalf("step %d (%s) reopened a closed invocation", step, e.name)
			}
		}
		got, ok := TerminalOfState(r.State())
		if !ok || !reflect.DeepEqual(got, want) {
			names := make([]string, len(order))
			for k, i := range order {
				names[k] = events[i].name
			}
			t.Fatalf("ordering %v ended on %+v (closed %v), want %+v", names, got, ok, want)
		}
	})
	if orderings == 0 {
		t.Fatal("no ordering was played")
	}
	t.Logf("%d orderings", orderings)
}

func permute(n int, f func([]int)) {
	a := make([]int, n)
	for i := range a {
		a[i] = i
	}
	var rec func(k int)
	rec = func(k int) {
		if k == n {
			f(a)
			return
		}
		for i := k; i < n; i++ {
			a[k], a[i] = a[i], a[k]
			rec(k + 1)
			a[k], a[i] = a[i], a[k]
		}
	}
	rec(0)
}

// TestLiveReconnectReplayConverge checks the three ways a client can learn a
// closed invocation agree on one semantic item: the live stream, an attach
// right after closure, and a replay of the tool entry written from the record
// (encoded and decoded by the transcript codec).
func TestLiveReconnectReplayConverge(t *testing.T) {
	dir := t.TempDir()
	h := New(WithCadence(0), WithArtifactDir(dir))
	var live Replica
	h.Subscribe(func(c Change) { live.Apply(c) })
	inv := mustOpen(t, h, Spec{ID: "conv", Tool: "echo", Producer: testManifest(t)})
	p := inv.Presentation()
	p.Replace(text("first"))

	var midway Replica // a client that attaches while the tool runs
	st, _ := h.Attach("conv")
	midway.Reset(st)
	h.Subscribe(func(c Change) { midway.Apply(c) })

	w, err := p.NewArtifact("text/plain")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(w, "line one\nline two\n")
	if _, err := p.ReplaceArtifact(w.Checkpoint(schemaText, 1, true)); err != nil {
		t.Fatal(err)
	}
	inv.Supplemental("summary").Replace(text("2 lines"))
	inv.Supplemental("spinner", WithRetention(Ephemeral)).Replace(text("⠋"))
	rec, _ := inv.Close(Outcome{Status: transcript.ToolOK}, Result{Text: "done"})

	var reconnect Replica
	st, err = h.Attach("conv")
	if err != nil {
		t.Fatal(err)
	}
	reconnect.Reset(st)

	b, err := transcript.EncodeEntry(rec.Entry("e1"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := transcript.DecodeEntry(b)
	if err != nil {
		t.Fatal(err)
	}
	replayed := TerminalOfTool(e.Content.(transcript.Tool))

	want := rec.Terminal()
	if want.Primary == nil || want.Primary.Artifact == nil || len(want.Supplementals) != 1 {
		t.Fatalf("record lacks what the test set up: %+v", want)
	}
	for name, r := range map[string]*Replica{"live": &live, "midway": &midway, "reconnect": &reconnect} {
		got, ok := TerminalOfState(r.State())
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v (closed %v), want %+v", name, got, ok, want)
		}
	}
	if !reflect.DeepEqual(replayed, want) {
		t.Errorf("replay: %+v, want %+v", replayed, want)
	}
	// The replayed checkpoint still reads its artifact.
	got, err := h.ReadArtifact(*replayed.Primary.Artifact, 0, 9)
	if err != nil || string(got) != "line one\n" {
		t.Fatalf("artifact read after replay: %q, %v", got, err)
	}
}

func TestReplicaNeedsResyncOnGenerationChange(t *testing.T) {
	var r Replica
	r.Reset(State{Invocation: "x", Generation: 1, Open: true,
		Items: []ItemState{{Key: "", Revision: 4, Value: &Value{Payload: []byte(`1`)}}}})
	if got := r.Apply(Change{Invocation: "x", Generation: 2, Revision: 5, Open: true}); got != NeedResync {
		t.Fatalf("change of another generation: %v", got)
	}
	if got := r.Apply(Change{Invocation: "x", Generation: 1, Revision: 4, Open: true}); got != Ignored {
		t.Fatalf("duplicate revision: %v", got)
	}
	// An older snapshot of the same generation does not roll an item back.
	r.Apply(Change{Invocation: "x", Generation: 1, Revision: 6, Open: true, Value: &Value{Payload: []byte(`6`)}})
	r.Reset(State{Invocation: "x", Generation: 1, Open: true,
		Items: []ItemState{{Key: "", Revision: 5, Value: &Value{Payload: []byte(`5`)}}}})
	if it, _ := r.State().Item(""); it.Revision != 6 {
		t.Fatalf("snapshot rolled revision back to %d", it.Revision)
	}
	// A snapshot of a new generation replaces everything.
	r.Reset(State{Invocation: "x", Generation: 2, Open: true,
		Items: []ItemState{{Key: "", Revision: 1, Value: &Value{Payload: []byte(`n`)}}}})
	if it, _ := r.State().Item(""); it.Revision != 1 {
		t.Fatalf("new generation not taken: revision %d", it.Revision)
	}
}
