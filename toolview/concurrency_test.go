package toolview

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/transcript"
)

// TestClosureBoundaryUnderConcurrentUpdates races producers against closure:
// every update is either accepted before the boundary (and so at or below
// the checkpoint's revision) or rejected as closed, and the checkpoint holds
// the value of the highest accepted revision.
func TestClosureBoundaryUnderConcurrentUpdates(t *testing.T) {
	for round := range 20 {
		h := New(WithCadence(time.Millisecond))
		inv := mustOpen(t, h, Spec{Tool: "echo", Producer: testManifest(t)})
		p := inv.Presentation()
		var mu sync.Mutex
		accepted := map[Revision]string{}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for i := 0; ; i++ {
					s := fmt.Sprintf("g%d-%d", g, i)
					rev, err := p.Replace(text(s))
					if errors.Is(err, ErrClosed) {
						return
					}
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					if _, dup := accepted[rev]; dup {
						t.Errorf("revision %d assigned twice", rev)
					}
					accepted[rev] = s
					mu.Unlock()
				}
			}()
		}
		close(start)
		// Vary where closure lands: after 0, 25, 50, … accepted updates.
		for h.Metrics().Accepted < int64(round%5*25) {
			runtime.Gosched()
		}
		rec, err := inv.Close(Outcome{Status: transcript.ToolOK}, Result{})
		if err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		var max Revision
		for rev := range accepted {
			max = Revision(maxInt(int64(max), int64(rev)))
		}
		if max == 0 {
			if rec.Presentation != nil {
				t.Fatalf("round %d: checkpoint without accepted updates", round)
			}
			continue
		}
		if rec.Presentation == nil || Revision(rec.Presentation.Revision) != max ||
			string(rec.Presentation.Payload) != fmt.Sprintf(`{"text":%q}`, accepted[max]) {
			t.Fatalf("round %d: checkpoint %+v, highest accepted revision %d (%s)", round, rec.Presentation, max, accepted[max])
		}
		if int64(len(accepted)) != h.Metrics().Accepted {
			t.Fatalf("round %d: %d accepted by producers, %d by metrics", round, len(accepted), h.Metrics().Accepted)
		}
	}
}

func maxInt(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// fakeClock is a hand-driven clock, to show the host takes all its time from
// the injected source.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	tm := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, tm)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !tm.stopped
		tm.stopped = true
		return was
	}
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*fakeTimer
	rest := c.timers[:0]
	for _, tm := range c.timers {
		if !tm.stopped && !tm.at.After(c.now) {
			tm.stopped = true
			due = append(due, tm)
		} else if !tm.stopped {
			rest = append(rest, tm)
		}
	}
	c.timers = rest
	c.mu.Unlock()
	for _, tm := range due {
		tm.f()
	}
}

func TestInjectedClock(t *testing.T) {
	clk := &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	h := New(withClock(clk))
	rec := record(h)
	inv := mustOpen(t, h, Spec{Tool: "echo", Producer: testManifest(t)})
	p := inv.Presentation()
	p.Replace(text("a"))
	clk.Advance(10 * time.Millisecond)
	p.Replace(text("b"))
	p.Replace(text("c"))
	if got := payloads(rec.all()); fmt.Sprint(got) != "[a]" {
		t.Fatalf("before the window: %v", got)
	}
	clk.Advance(40 * time.Millisecond)
	if got := payloads(rec.all()); fmt.Sprint(got) != "[a c]" {
		t.Fatalf("after the window: %v", got)
	}
	clk.Advance(2 * time.Second)
	r, _ := inv.Close(Outcome{}, Result{})
	if r.Duration != 2050*time.Millisecond || !r.End.Equal(clk.Now()) {
		t.Fatalf("timing from the injected clock: %v ending %v", r.Duration, r.End)
	}
	if err := p.Flush(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatal(err)
	}
}

func TestEphemeralPrimaryLeavesNoCheckpoint(t *testing.T) {
	h := New(WithCadence(0))
	inv := mustOpen(t, h, Spec{Tool: "echo", Producer: testManifest(t), Retention: Ephemeral})
	if _, err := inv.Presentation().Replace(text("spinning")); err != nil {
		t.Fatal(err)
	}
	r, _ := inv.Close(Outcome{}, Result{Text: "ok"})
	if r.Presentation != nil {
		t.Fatalf("ephemeral primary retained: %+v", r.Presentation)
	}
	if tool := r.ToolContent(); tool.Presentation != nil {
		t.Fatal("tool entry carries an ephemeral value")
	}
}

func TestDraftInvalidateRequiresCheckpoint(t *testing.T) {
	h := New(WithCadence(0))
	inv := mustOpen(t, h, Spec{Tool: "echo", Producer: testManifest(t)})
	d := inv.Draft()
	if err := d.Append(0, []byte(`{"a"`)); err != nil {
		t.Fatal(err)
	}
	d.Invalidate() // e.g. the provider stream reconnected
	if err := d.Append(4, []byte(`:1`)); rejectReason(t, err) != ReasonDraftGap {
		t.Fatalf("append after invalidate: %v", err)
	}
	if err := d.Checkpoint([]byte(`{"a":1`), 6, false); err != nil {
		t.Fatal(err)
	}
	if err := d.Append(6, []byte(`}`)); err != nil {
		t.Fatalf("append after checkpoint: %v", err)
	}
}
