package toolview

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"
)

func TestCadenceCoalescesAndKeepsLatest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := New() // default cadence: 50 ms per item
		rec := record(h)
		inv := mustOpen(t, h, Spec{Tool: "echo", Producer: testManifest(t)})
		p := inv.Presentation()

		for i := 1; i <= 4; i++ {
			if _, err := p.Replace(text(fmt.Sprint("v", i))); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		if got := payloads(rec.all()); fmt.Sprint(got) != "[v1]" {
			t.Fatalf("inside the first window: delivered %v, want [v1]", got)
		}
		// The latest accepted value is available to attach at once.
		st, _ := attach(h, inv.ID())
		if it, _ := st.Item(""); it.Revision != 4 {
			t.Fatalf("attach revision %d, want 4", it.Revision)
		}
		time.Sleep(DefaultCadence)
		synctest.Wait()
		if got := payloads(rec.all()); fmt.Sprint(got) != "[v1 v4]" {
			t.Fatalf("after the window opened: delivered %v, want [v1 v4]", got)
		}
		if m := h.Metrics(); m.Coalesced != 2 || m.Accepted != 4 || m.Published != 2 {
			t.Fatalf("metrics: accepted %d published %d coalesced %d", m.Accepted, m.Published, m.Coalesced)
		}

		// A value accepted inside a window and then closed over is the
		// terminal value: closure never loses the latest.
		if _, err := p.Replace(text("v5")); err != nil {
			t.Fatal(err)
		}
		r, _ := inv.Close(Outcome{}, Result{})
		if string(r.Presentation.Payload) != `{"text":"v5"}` {
			t.Fatalf("terminal value %s, want v5", r.Presentation.Payload)
		}
		time.Sleep(time.Second) // the cancelled timer must not fire a live change
		synctest.Wait()
		all := rec.all()
		if last := all[len(all)-1]; last.Open || last.Record == nil {
			t.Fatalf("a change followed closure: %+v", last)
		}
	})
}

// TestCadenceNeverLosesTheLast drives random bursts and checks, for every
// quiet point, that the last delivered value is the last accepted one, and
// that live deliveries of one item are never closer than the cadence.
func TestCadenceNeverLosesTheLast(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 0))
				h := New()
				var times []time.Time
				var last *Value
				h.Subscribe(func(c Change) {
					if c.Open {
						times = append(times, time.Now())
					}
					last = c.Value
				})
				inv := mustOpen(t, h, Spec{Tool: "echo", Producer: testManifest(t)})
				p := inv.Presentation()
				n := 0
				for burst := 0; burst < 10; burst++ {
					for k := rng.IntN(20); k >= 0; k-- {
						n++
						if _, err := p.Replace(text(fmt.Sprint(n))); err != nil {
							t.Fatal(err)
						}
						time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond)
					}
					time.Sleep(DefaultCadence)
					synctest.Wait()
					if want := fmt.Sprintf(`{"text":"%d"}`, n); last == nil || string(last.Payload) != want {
						t.Fatalf("after burst %d: last delivered %v, want %s", burst, last, want)
					}
				}
				for i := 1; i < len(times); i++ {
					if gap := times[i].Sub(times[i-1]); gap < DefaultCadence {
						t.Fatalf("deliveries %d and %d only %v apart", i-1, i, gap)
					}
				}
				inv.Close(Outcome{}, Result{})
			})
		})
	}
}

func TestFlushDeliversPendingNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := New()
		rec := record(h)
		inv := mustOpen(t, h, Spec{Tool: "echo", Producer: testManifest(t)})
		p := inv.Presentation()
		p.Replace(text("a"))
		p.Replace(text("b"))
		if err := p.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := payloads(rec.all()); fmt.Sprint(got) != "[a b]" {
			t.Fatalf("after flush: %v", got)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if got := payloads(rec.all()); fmt.Sprint(got) != "[a b]" {
			t.Fatalf("the flushed value was delivered twice: %v", got)
		}
		inv.Close(Outcome{}, Result{})
	})
}

// payloads lists the texts of the open changes of the primary item.
func payloads(cs []Change) []string {
	var out []string
	for _, c := range cs {
		if c.Open && c.Item == "" && c.Value != nil {
			s := string(c.Value.Payload)
			out = append(out, s[len(`{"text":"`):len(s)-2])
		}
	}
	return out
}
