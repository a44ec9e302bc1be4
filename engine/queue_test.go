package engine_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

// Messages sent during a turn wait and run in order after it; a retried
// delivery of the same command ID is the same command, never a second turn.
func TestQueueOrderAndDuplicateCommandIDs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		p := newScripted(
			cat(text("first"), gate(release), done()),
			cat(text("second"), done()),
			cat(text("third"), done()))
		h := newHarness(t, p)
		ctx := context.Background()
		for _, c := range []struct{ id, text string }{{"a", "one"}, {"b", "two"}, {"c", "three"}} {
			if _, err := h.eng.Send(ctx, c.id, c.text, nil); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		r, err := h.eng.Send(ctx, "b", "two again", nil)
		if err != nil || !r.Duplicate || r.State != engine.Queued || r.Position != 1 || r.Text != "two" {
			t.Fatalf("duplicate send: %+v %v", r, err)
		}
		if q := h.store.Snapshot().Live.Queue; commandsOf(q) != "a:running b:queued c:queued" || q.At(1).Preview != "two" {
			t.Errorf("queue %q, b %+v", commandsOf(q), q.At(1))
		}
		if r, _ := h.eng.Status("c"); r.Position != 2 {
			t.Errorf("c position %d", r.Position)
		}
		close(release)
		h.idle()
		// A retry after the turn finished is still the same command.
		if r, _ := h.eng.Send(ctx, "a", "one", nil); !r.Duplicate || r.State != engine.Done {
			t.Errorf("late duplicate: %+v", r)
		}
		synctest.Wait()
		if n := len(p.reqs()); n != 3 {
			t.Fatalf("%d requests, want 3", n)
		}
		var users []string
		for _, e := range h.entries() {
			if u, ok := e.Content.(transcript.User); ok {
				users = append(users, u.Text)
			}
		}
		if len(users) != 3 || users[0] != "one" || users[1] != "two" || users[2] != "three" {
			t.Errorf("user entries %q", users)
		}
		h.wantKinds("user agent turn-receipt user agent turn-receipt user agent turn-receipt")
	})
}

func TestRemoveQueuedCommand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		p := newScripted(cat(text("first"), gate(release), done()), cat(text("third"), done()))
		h := newHarness(t, p)
		ctx := context.Background()
		h.eng.Send(ctx, "a", "one", nil)
		h.eng.Send(ctx, "b", "two", nil)
		h.eng.Send(ctx, "c", "three", nil)
		synctest.Wait()
		if r, err := h.eng.Remove("b"); err != nil || r.State != engine.Removed {
			t.Fatalf("remove: %+v %v", r, err)
		}
		if _, err := h.eng.Remove("a"); !errors.Is(err, engine.ErrNotEditable) {
			t.Errorf("remove running: %v", err)
		}
		close(release)
		h.idle()
		h.wantKinds("user agent turn-receipt user agent turn-receipt")
		if _, err := h.eng.Send(ctx, "", "x", nil); !errors.Is(err, engine.ErrEmpty) {
			t.Errorf("empty id: %v", err)
		}
	})
}

// Clearing mid-turn drops the turn's late work: nothing of it reaches the
// new document or the new model history, and the queue is rejected.
func TestClearDropsLateWorkOfTheOldConversation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		tool := &fakeTool{name: "slow", run: func(context.Context, *toolview.Invocation, []byte) (toolview.Result, error) {
			<-release // ignores cancellation, like a tool that is slow to stop
			return toolview.Result{Text: "late result"}, nil
		}}
		p := newScripted(cat(text("old"), call(0, "k", "slow", `{}`), done()), cat(text("new answer"), done()))
		h := newHarness(t, p, engine.WithTools(toolSet(t, tool)))
		ctx := context.Background()
		h.eng.Send(ctx, "a", "old question", nil)
		h.eng.Send(ctx, "b", "queued", nil)
		synctest.Wait()
		gen := h.store.Snapshot().Generation
		if err := h.eng.Clear("fresh"); err != nil {
			t.Fatal(err)
		}
		close(release)
		h.eng.Wait(ctx, "a")
		if r, _ := h.eng.Status("b"); r.State != engine.Rejected {
			t.Errorf("queued command %+v", r)
		}
		snap := h.store.Snapshot()
		if snap.Generation == gen || snap.Document.Len() != 0 || snap.Document.ID() != "fresh" {
			t.Fatalf("after clear: gen %d, %s", snap.Generation, kinds(snap.Document.Entries()))
		}
		if n := len(h.eng.Messages()); n != 0 {
			t.Fatalf("%d stale messages", n)
		}
		h.eng.SetSaver(nil)
		h.send("c", "new question")
		h.wantKinds("user agent turn-receipt")
		if got := roles(p.reqs()[1].Messages); got != "user" {
			t.Errorf("new conversation's request: %s", got)
		}
	})
}

// Stop rejects what was queued behind the turn: those messages are the
// caller's drafts again, and no new turn starts by itself.
func TestStopRejectsQueuedMessages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newScripted(cat(text("working"), block()), cat(text("never"), done()))
		h := newHarness(t, p)
		ctx := context.Background()
		ob := engine.NewOutbox(h.eng.Transport(), counter())
		ob.Send(ctx, ob.Add("first", false))
		synctest.Wait()
		queued := ob.Add("second", false)
		if it, _ := ob.Send(ctx, queued); it.Receipt.State != engine.Queued {
			t.Fatalf("queued %+v", it)
		}
		h.eng.Stop()
		h.idle()
		synctest.Wait()
		if n := len(p.reqs()); n != 1 {
			t.Errorf("%d requests: a queued message started a turn after stop", n)
		}
		ob.Confirm(ctx, h.eng.StatusFunc())
		if it := ob.Items()[1]; it.Delivery != engine.Draft || it.Text != "second" {
			t.Errorf("queued message after stop: %+v", it)
		}
		h.wantKinds("user agent stopped")
	})
}
