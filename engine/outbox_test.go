package engine_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"testing/synctest"

	"github.com/foliodev/folio/engine"
)

func counter() func() string {
	n := 0
	return func() string { n++; return "cmd-" + strconv.Itoa(n) }
}

// A transport failure leaves delivery uncertain: it is never resent, edited
// or removed, and polling with the same command ID confirms it without a
// second turn. A definitive rejection gives back an ordinary draft.
func TestOutboxDeliveryStates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, newScripted(cat(text("hi"), done()), cat(text("again"), done())))
		ctx := context.Background()
		real := h.eng.Transport()
		broken := true
		// The engine receives the command, but the answer is lost.
		lossy := func(ctx context.Context, id, text string, steer bool) (engine.Receipt, error) {
			r, err := real(ctx, id, text, steer)
			if broken {
				return engine.Receipt{}, errors.New("connection reset")
			}
			return r, err
		}
		ob := engine.NewOutbox(lossy, counter())
		id := ob.Add("hello", false)
		it, err := ob.Send(ctx, id)
		if err == nil || it.Delivery != engine.Uncertain {
			t.Fatalf("after transport failure: %+v %v", it, err)
		}
		if _, err := ob.Send(ctx, id); !errors.Is(err, engine.ErrInFlight) {
			t.Errorf("resend of uncertain: %v", err)
		}
		if err := ob.Edit(id, "x"); !errors.Is(err, engine.ErrInFlight) {
			t.Errorf("edit of uncertain: %v", err)
		}
		if err := ob.Remove(id); !errors.Is(err, engine.ErrInFlight) {
			t.Errorf("remove of uncertain: %v", err)
		}
		h.idle()
		ob.Confirm(ctx, h.eng.StatusFunc())
		if it := ob.Items()[0]; it.Delivery != engine.Accepted || it.Receipt.State != engine.Done {
			t.Errorf("after confirm: %+v", it)
		}
		h.wantKinds("user agent turn-receipt")

		// A steer with no turn running is refused definitively: a draft.
		broken = false
		sid := ob.Add("steer me", true)
		it, _ = ob.Send(ctx, sid)
		if it.Delivery != engine.Draft || it.Reason == "" {
			t.Errorf("rejected steer: %+v", it)
		}
		if err := ob.Edit(sid, "edited"); err != nil {
			t.Errorf("a rejected draft is an ordinary draft: %v", err)
		}
		if err := ob.Remove(sid); err != nil {
			t.Error(err)
		}
		if n := len(ob.Items()); n != 1 {
			t.Errorf("%d items", n)
		}
	})
}

// A steer the engine accepted and then rejected because the turn was
// stopped comes back as a draft on the next poll, and is not sent again.
func TestOutboxSteerRejectedByStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tool := &fakeTool{name: "wait", run: waitForCancel}
		p := newScripted(cat(call(0, "k", "wait", `{}`), done()))
		h := newHarness(t, p, engine.WithTools(toolSet(t, tool)))
		ctx := context.Background()
		ob := engine.NewOutbox(h.eng.Transport(), counter())
		ob.Send(ctx, ob.Add("go", false))
		synctest.Wait()
		sid := ob.Add("redirect", true)
		if it, _ := ob.Send(ctx, sid); it.Delivery != engine.Accepted {
			t.Fatalf("steer %+v", it)
		}
		h.eng.Stop()
		h.idle()
		ob.Confirm(ctx, h.eng.StatusFunc())
		it := ob.Items()[1]
		if it.Delivery != engine.Draft || it.Text != "redirect" {
			t.Errorf("steer after stop: %+v", it)
		}
		synctest.Wait()
		if n := len(p.reqs()); n != 1 {
			t.Errorf("%d requests", n)
		}
	})
}
