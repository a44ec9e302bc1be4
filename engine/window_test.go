package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/transcript"
)

// A long session's document stays within the engine's window: after every
// turn the store holds at most twice the window (plus the turn being
// written), the entries it dropped are counted by Elided, and the log
// holds every entry in order. The engine keeping every entry (a window
// of -1) is the control: the same session holds them all.
func TestDocumentWindowBoundsTheStore(t *testing.T) {
	t.Parallel()
	const keep, turns = 8, 60
	for _, tc := range []struct {
		name   string
		window int
	}{{"bounded", keep}, {"unbounded", -1}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var rs [][]item
			for i := range turns {
				rs = append(rs, reply(think(fmt.Sprintf("thinking %d", i)), thinkDone(), text(fmt.Sprintf("answer %d", i)), done()))
			}
			h := newHarness(t, newScripted(rs...), engine.WithDocumentWindow(tc.window))
			most := 0
			for i := range turns {
				h.send(fmt.Sprintf("c%d", i), fmt.Sprintf("question %d", i))
				d := h.store.Snapshot().Document
				most = max(most, d.Len())
				if got, want := d.Elided()+d.Len(), 4*(i+1); got != want {
					t.Fatalf("turn %d: the document counts %d entries (%d elided), want %d", i, got, d.Elided(), want)
				}
				if d.Elided() > 0 && d.At(0).Content.Kind() != transcript.KindUser {
					t.Fatalf("turn %d: the kept window starts with a %s entry, not a turn's start", i, d.At(0).Content.Kind())
				}
			}
			bound := 2*keep + 4 // the window's high water plus one turn
			if tc.window < 0 {
				bound = 4 * turns
			}
			if most > bound {
				t.Fatalf("the store held %d entries after some turn; bound %d", most, bound)
			}
			if tc.window > 0 && most > 4*turns/2 {
				t.Fatalf("the bounded store held %d of %d entries", most, 4*turns)
			}
			// The log has every entry, in order, as the engine wrote them.
			c := h.reload()
			if got := c.Document.Len(); got != 4*turns {
				t.Fatalf("the log holds %d entries, want %d", got, 4*turns)
			}
			d := h.store.Snapshot().Document
			for i := range d.Len() {
				if c.Document.At(d.Elided()+i).ID != d.At(i).ID {
					t.Fatalf("entry %d: the store holds %s, the log %s", d.Elided()+i, d.At(i).ID, c.Document.At(d.Elided()+i).ID)
				}
			}
			if d.FirstID() != c.Document.At(0).ID {
				t.Fatalf("FirstID = %q, the log's first entry is %q", d.FirstID(), c.Document.At(0).ID)
			}
		})
	}
}

// Without a saver nothing is dropped: the store is the only place the
// entries are.
func TestDocumentWindowNeedsASaver(t *testing.T) {
	t.Parallel()
	var rs [][]item
	for i := range 12 {
		rs = append(rs, reply(text(fmt.Sprintf("answer %d", i)), done()))
	}
	store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	eng := engine.New(store, newScripted(rs...), engine.WithDocumentWindow(2))
	defer eng.Close()
	for i := range 12 {
		id := fmt.Sprintf("c%d", i)
		if _, err := eng.Send(context.Background(), id, "q", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := eng.Wait(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	if d := store.Snapshot().Document; d.Elided() != 0 || d.Len() != 36 {
		t.Fatalf("without a saver the store holds %d entries and left out %d, want all 36", d.Len(), d.Elided())
	}
}

// A turn longer than the window is cut inside it, and its retry still
// names its user entry, which the store no longer holds; an edit of a
// prompt the store dropped forks through the log.
func TestDocumentWindowLongTurnRetryAndEdit(t *testing.T) {
	t.Parallel()
	tool := &fakeTool{name: "probe"}
	var steps [][]item
	for i := range 10 {
		steps = append(steps, cat(call(0, fmt.Sprintf("t%d", i), "probe", `{}`), done()))
	}
	rs := append([][]item{reply(text("first answer"), done())}, steps...)
	rs = append(rs, reply(text("partial"), fail(&provider.Error{Class: provider.ClassTransport, Msg: "reset"})))
	rs = append(rs, reply(text("retried answer"), done()), reply(text("edited answer"), done()))
	h := newHarness(t, newScripted(rs...), engine.WithDocumentWindow(3), engine.WithTools(toolSet(t, tool)))
	first := h.send("c0", "the first question")
	if r := h.send("c1", "run the probe ten times"); r.State != engine.Failed {
		t.Fatalf("the long turn ended %s, want failed", r.State)
	}
	d := h.store.Snapshot().Document
	if d.Elided() == 0 {
		t.Fatal("the store kept every entry of a turn longer than twice the window")
	}
	h.idle()
	if _, err := h.eng.Retry("r1"); err != nil {
		t.Fatal(err)
	}
	r, err := h.eng.Wait(context.Background(), "r1")
	if err != nil || r.State != engine.Done {
		t.Fatalf("retry: %v %s", err, r.State)
	}
	c1, _ := h.eng.Status("c1")
	if r.EntryID == "" || r.EntryID != c1.EntryID {
		t.Fatalf("the retry names user entry %q, the failed turn's is %q", r.EntryID, c1.EntryID)
	}
	if _, ok := h.store.Snapshot().Document.Index(first.EntryID); ok {
		t.Fatal("the first prompt is still in the store; the edit would not need the log")
	}
	if _, err := h.eng.EditAndResend(context.Background(), "e1", first.EntryID, "the first question, edited"); err != nil {
		t.Fatalf("edit a prompt the store dropped: %v", err)
	}
	if r, err := h.eng.Wait(context.Background(), "e1"); err != nil || r.State != engine.Done {
		t.Fatalf("edit: %v %s", err, r.State)
	}
	got := kinds(h.entries())
	if want := "user agent turn-receipt"; got != want {
		t.Fatalf("the edited branch holds %s, want %s", got, want)
	}
}

// The engine remembers a bounded number of finished commands: a long
// session's oldest receipts are forgotten, the newest still answer a
// repeated delivery, and a command that has not finished is never
// forgotten.
func TestFinishedCommandsAreBounded(t *testing.T) {
	t.Parallel()
	open := make(chan struct{})
	prov := newScripted(reply(gate(open), text("slow"), done()))
	go func() {
		for range prov.started { // the script's record of requests is bounded
		}
	}()
	store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	eng := engine.New(store, prov)
	defer eng.Close()
	if _, err := eng.Send(context.Background(), "slow", "q", nil); err != nil {
		t.Fatal(err)
	}
	for i := range 600 {
		if _, err := eng.Once(fmt.Sprintf("once-%d", i), func() error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := eng.Status("once-0"); !errors.Is(err, engine.ErrUnknownCommand) {
		t.Fatalf("the oldest of 600 finished commands: %v, want it forgotten", err)
	}
	r, err := eng.Once("once-599", func() error { t.Fatal("a repeated delivery ran again"); return nil })
	if err != nil || !r.Duplicate {
		t.Fatalf("the newest command again: %+v %v, want its receipt as a duplicate", r, err)
	}
	if r, err := eng.Status("slow"); err != nil || r.State.Final() {
		t.Fatalf("the running turn's command: %+v %v", r, err)
	}
	close(open)
	if _, err := eng.Wait(context.Background(), "slow"); err != nil {
		t.Fatal(err)
	}
	for i := range 600 {
		id := fmt.Sprintf("send-%d", i)
		if _, err := eng.Send(context.Background(), id, "q", nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := eng.Wait(context.Background(), "send-599"); err != nil {
		t.Fatal(err)
	}
	if n := len(eng.Commands()); n > 512 {
		t.Fatalf("the engine lists %d commands after 601 turns; it keeps at most 512", n)
	}
}
