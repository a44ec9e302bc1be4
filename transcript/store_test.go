package transcript

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// instant is a store without pacing, for tests about the document rather
// than the reveal.
func instant(opts ...Option) *Store {
	return NewStore(append([]Option{WithPacing(Pacing{})}, opts...)...)
}

func hydrated(t testing.TB, n int) Document {
	t.Helper()
	es := make([]Entry, n)
	for i := range es {
		es[i] = user(fmt.Sprintf("saved-%d", i), "old")
	}
	return mustDoc(t, es...)
}

func TestGeneration(t *testing.T) {
	t.Parallel()
	saved := hydrated(t, 3)
	s := instant(WithDocument(saved))
	gen := func() uint64 { return s.Snapshot().Generation }
	l := s.Lease()
	g := gen()

	// Writes within a lifetime keep the generation.
	steps := []struct {
		name string
		do   func() error
	}{
		{"append", func() error { _, err := l.Append(User{Text: "hi"}); return err }},
		{"stream and settle", func() error {
			w := l.Stream()
			if err := w.Text("a"); err != nil {
				return err
			}
			if err := w.Text("b"); err != nil {
				return err
			}
			return w.Finish()
		}},
		{"open, update, settle", func() error {
			id, err := l.Open(Agent{})
			if err == nil {
				err = l.Update(id, Agent{Markdown: "x"})
			}
			if err == nil {
				err = l.Settle(id, nil)
			}
			return err
		}},
		{"replace an earlier fact", func() error {
			return l.Do(func(tx *Tx) error { return tx.ReplaceEntry(user("saved-0", "edited")) })
		}},
		{"live state", func() error {
			return errors.Join(l.SetActivity(ActivityTool), l.SetModel("m"), l.SetPromptContext(9),
				l.SetRetry(Retry{Attempt: 2}), l.SetExpanded("saved-1", true), l.AddUsage(Usage{InputTokens: 1}))
		}},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if gen() != g {
			t.Fatalf("%s advanced the generation %d -> %d", st.name, g, gen())
		}
	}

	// Every new lifetime advances it, even with the same document and IDs.
	lifetimes := []struct {
		name string
		do   func() Snapshot
	}{
		{"replace with a new document", func() Snapshot { return s.Replace(hydrated(t, 1)) }},
		{"replace with the same document", func() Snapshot { return s.Replace(s.Snapshot().Document) }},
		{"clear", func() Snapshot { return s.Clear(saved.ID()) }},
		{"clear again with the same id", func() Snapshot { return s.Clear(saved.ID()) }},
		{"hydrate", func() Snapshot { return s.Hydrate(saved) }},
		{"rehydrate the same history", func() Snapshot { return s.Hydrate(saved) }},
	}
	for _, lt := range lifetimes {
		prev := gen()
		snap := lt.do()
		if snap.Generation <= prev || gen() != snap.Generation {
			t.Fatalf("%s: generation %d -> %d (returned %d)", lt.name, prev, gen(), snap.Generation)
		}
	}
}

// TestNewLifetimeResetsLiveState pins what a replacement carries over.
func TestNewLifetimeResetsLiveState(t *testing.T) {
	t.Parallel()
	s := instant(WithDocument(hydrated(t, 2)))
	l := s.Lease()
	if err := errors.Join(l.SetActivity(ActivityTool), l.SetModel("m1"), l.SetPromptContext(500),
		l.SetRetry(Retry{Attempt: 2, Reason: "overloaded"}), l.SetExpanded("saved-0", true),
		l.AddUsage(Usage{InputTokens: 10, CostUSD: 0.5})); err != nil {
		t.Fatal(err)
	}
	if _, err := l.StartChild("helper"); err != nil {
		t.Fatal(err)
	}
	snap := s.Replace(s.Snapshot().Document)
	want := Live{Model: "m1", Totals: Usage{InputTokens: 10, CostUSD: 0.5}}
	if !reflect.DeepEqual(snap.Live, want) {
		t.Fatalf("after replace: %+v, want %+v", snap.Live, want)
	}
	snap = s.Hydrate(snap.Document)
	if snap.Live.Totals != (Usage{}) || snap.Live.Model != "m1" {
		t.Fatalf("after hydrate: %+v", snap.Live)
	}
}

// lateWork is something a producer started before a replacement and that
// finishes after it.
type lateWork struct {
	name  string
	start func(t *testing.T, l Lease) (finish func() error)
}

func lateWorks() []lateWork {
	return []lateWork{
		{"late text", func(t *testing.T, l Lease) func() error {
			w := l.Stream()
			if err := w.Text("before "); err != nil {
				t.Fatal(err)
			}
			return func() error { return w.Text("after") }
		}},
		{"late first text", func(t *testing.T, l Lease) func() error {
			w := l.Stream()
			return func() error { return w.Text("after") }
		}},
		{"late reasoning", func(t *testing.T, l Lease) func() error {
			w := l.Stream()
			return func() error { return w.Reasoning("after") }
		}},
		{"late settlement", func(t *testing.T, l Lease) func() error {
			w := l.Stream()
			if err := w.Text("partial"); err != nil {
				t.Fatal(err)
			}
			return w.Finish
		}},
		{"tool completion", func(t *testing.T, l Lease) func() error {
			id, err := l.Open(Tool{Receipt: ToolReceipt{App: "shell", Summary: "running", Status: ToolOK}})
			if err != nil {
				t.Fatal(err)
			}
			return func() error {
				return l.Settle(id, Tool{Receipt: ToolReceipt{App: "shell", Summary: "done", Status: ToolOK}})
			}
		}},
		{"tool completion as a new entry", func(t *testing.T, l Lease) func() error {
			return func() error {
				_, err := l.Append(Tool{Receipt: ToolReceipt{App: "shell", Summary: "done", Status: ToolOK}})
				return err
			}
		}},
		{"turn completion", func(t *testing.T, l Lease) func() error {
			return func() error {
				return l.Do(func(tx *Tx) error {
					if _, err := tx.Append(TurnReceipt{Steps: []Step{{DurationMs: 10}}}); err != nil {
						return err
					}
					tx.SetActivity(ActivityIdle)
					return tx.AddUsage(Usage{OutputTokens: 5})
				})
			}
		}},
		{"footer update", func(t *testing.T, l Lease) func() error {
			return func() error { return errors.Join(l.SetModel("late"), l.SetPromptContext(1)) }
		}},
		{"child", func(t *testing.T, l Lease) func() error {
			c, err := l.StartChild("helper")
			if err != nil {
				t.Fatal(err)
			}
			return func() error { return errors.Join(c.AddUsage(Usage{CostUSD: 1}), c.Complete()) }
		}},
	}
}

func TestLateWorkAfterNewLifetimeIsDropped(t *testing.T) {
	t.Parallel()
	lifetimes := map[string]func(s *Store, old Document) Snapshot{
		"replace":   func(s *Store, old Document) Snapshot { return s.Replace(hydrated(t, 2)) },
		"clear":     func(s *Store, old Document) Snapshot { return s.Clear(old.ID()) },
		"rehydrate": func(s *Store, old Document) Snapshot { return s.Hydrate(old) },
	}
	for lname, newLifetime := range lifetimes {
		for _, lw := range lateWorks() {
			t.Run(lname+"/"+lw.name, func(t *testing.T) {
				t.Parallel()
				s := instant(WithDocument(hydrated(t, 2)))
				l := s.Lease()
				finish := lw.start(t, l)
				before := newLifetime(s, s.Snapshot().Document)
				if l.Active() {
					t.Fatal("lease still active after a new lifetime")
				}
				if err := finish(); !errors.Is(err, ErrLeaseRetired) {
					t.Fatalf("late work returned %v, want ErrLeaseRetired", err)
				}
				after := s.Snapshot()
				if !reflect.DeepEqual(after, before) {
					t.Fatalf("late work changed the new document:\nbefore %+v\nafter  %+v", before, after)
				}
			})
		}
	}
}

func TestBufferedTimerAfterReplaceIsDropped(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := instant()
		l := s.Lease()
		fired := false
		if _, err := l.AfterFunc(time.Second, func() { fired = true }); err != nil {
			t.Fatal(err)
		}
		// A callback that already fired and is blocked when the document is
		// replaced: its write must still be refused.
		release := make(chan struct{})
		var lateErr error
		if _, err := l.AfterFunc(time.Millisecond, func() {
			<-release
			_, lateErr = l.Append(Notice{Text: "timer", Tone: ToneInfo})
		}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		before := s.Replace(hydrated(t, 1))
		close(release)
		time.Sleep(time.Hour)
		synctest.Wait()
		if fired {
			t.Fatal("a pending timer of a retired lease ran")
		}
		if !errors.Is(lateErr, ErrLeaseRetired) {
			t.Fatalf("buffered timer's write returned %v", lateErr)
		}
		if after := s.Snapshot(); !reflect.DeepEqual(after, before) {
			t.Fatal("buffered timer changed the new document")
		}
		if _, err := l.AfterFunc(time.Second, func() {}); !errors.Is(err, ErrLeaseRetired) {
			t.Fatalf("retired lease armed a timer: %v", err)
		}
	})
}

func TestTimerRunsOnLiveLeaseAndStops(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := instant()
		l := s.Lease()
		ran := 0
		if _, err := l.AfterFunc(time.Second, func() { ran++ }); err != nil {
			t.Fatal(err)
		}
		stopped, err := l.AfterFunc(time.Second, func() { ran += 10 })
		if err != nil {
			t.Fatal(err)
		}
		if !stopped.Stop() {
			t.Fatal("Stop did not stop a pending timer")
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if ran != 1 {
			t.Fatalf("ran = %d, want the live timer once", ran)
		}
	})
}

func TestLeaseAtOldGenerationIsRetired(t *testing.T) {
	t.Parallel()
	s := instant(WithDocument(hydrated(t, 1)))
	seen := s.Snapshot()
	s.Replace(seen.Document)
	if err := s.LeaseAt(seen.Generation).SetExpanded("saved-0", true); !errors.Is(err, ErrLeaseRetired) {
		t.Fatalf("stale view action: %v", err)
	}
	if s.Snapshot().Live.Expanded.Has("saved-0") {
		t.Fatal("stale view action landed")
	}
	cur := s.Snapshot().Generation
	if err := s.LeaseAt(cur).SetExpanded("saved-0", true); err != nil {
		t.Fatal(err)
	}
	if !s.Snapshot().Live.Expanded.Has("saved-0") {
		t.Fatal("current view action lost")
	}
}

func TestTransactionIsAllOrNothing(t *testing.T) {
	t.Parallel()
	s := instant()
	sub := s.Subscribe()
	defer sub.Close()
	before := <-sub.C()
	l := s.Lease()
	err := l.Do(func(tx *Tx) error {
		if _, err := tx.Append(User{Text: "a"}); err != nil {
			return err
		}
		tx.SetModel("m")
		_, err := tx.Append(Notice{Text: "x", Tone: "loud"})
		return err
	})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Pointer != "/content/tone" {
		t.Fatalf("err = %v", err)
	}
	if after := s.Snapshot(); !reflect.DeepEqual(after, before) {
		t.Fatal("a failed transaction changed the store")
	}
	select {
	case snap := <-sub.C():
		t.Fatalf("a failed transaction published %+v", snap)
	default:
	}
	// A transaction that changes nothing publishes nothing either.
	if err := l.Do(func(tx *Tx) error { tx.SetModel(""); return nil }); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sub.C():
		t.Fatal("an empty transaction published")
	default:
	}
}

func TestLiveValidation(t *testing.T) {
	t.Parallel()
	s := instant()
	l := s.Lease()
	if err := l.AddUsage(Usage{InputTokens: -1}); err == nil {
		t.Fatal("negative usage accepted")
	}
	if err := l.SetPromptContext(-1); err == nil {
		t.Fatal("negative prompt context accepted")
	}
	if err := l.SetExpanded("nope", true); !errors.Is(err, ErrNotFound) {
		t.Fatalf("expanding a missing entry: %v", err)
	}
	if s.Snapshot().Live.Totals != (Usage{}) {
		t.Fatal("refused usage was counted")
	}
}

// New IDs must not collide with hydrated ones, even when the saved history
// was written by an ID source with the very same namespace.
func TestNewIDsNeverCollideWithHydrated(t *testing.T) {
	t.Parallel()
	ids := NewIDSource()
	s := instant(withIDSource(ids))
	var saved []Entry
	for i := 1; i <= 40; i++ {
		saved = append(saved, user(ids.Prefix()+"-"+strconv.FormatInt(int64(i), 36), "old"))
	}
	s.Hydrate(mustDoc(t, saved...))
	l := s.Lease()
	seen := map[string]bool{}
	for _, e := range saved {
		seen[e.ID] = true
	}
	for range 100 {
		id, err := l.Append(User{Text: "new"})
		if err != nil {
			t.Fatalf("minted a colliding id: %v", err)
		}
		if seen[id] {
			t.Fatalf("id %s minted twice", id)
		}
		seen[id] = true
	}
	// A stream and a child mint from the same namespace.
	w := l.Stream()
	if err := w.Text("x"); err != nil {
		t.Fatal(err)
	}
	c, err := l.StartChild("c")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{w.AnswerID(), c.ID()} {
		if seen[id] {
			t.Fatalf("id %s collides", id)
		}
		seen[id] = true
	}
	// Hydrated entries keep their IDs.
	for i, e := range saved {
		if got := s.Snapshot().Document.At(i).ID; got != e.ID {
			t.Fatalf("hydrated entry %d has id %s, want %s", i, got, e.ID)
		}
	}
}

// A burst of writes while the reader is away leaves one snapshot waiting,
// and it is the last state.
func TestSubscriptionCoalesces(t *testing.T) {
	t.Parallel()
	s := instant()
	sub := s.Subscribe()
	defer sub.Close()
	first := <-sub.C()
	if first.Document.Len() != 0 {
		t.Fatal("first delivery is not the current snapshot")
	}
	l := s.Lease()
	for i := range 500 {
		if _, err := l.Append(User{Text: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	got := <-sub.C()
	if got.Document.Len() != 500 || got.Document.At(499).Content != (User{Text: "499"}) {
		t.Fatalf("waiting snapshot has %d entries, want the last state", got.Document.Len())
	}
	select {
	case extra := <-sub.C():
		t.Fatalf("a second snapshot was waiting (%d entries)", extra.Document.Len())
	default:
	}
	sub.Close()
	sub.Close()
	if _, ok := <-sub.C(); ok {
		t.Fatal("channel not closed")
	}
	if _, err := l.Append(User{Text: "after close"}); err != nil {
		t.Fatal(err)
	}
}

// With a reader running concurrently, whatever it misses, it always ends on
// the final state. Under synctest a lost final publication would leave the
// reader blocked forever, which synctest reports as a deadlock.
func TestSubscriberAlwaysSeesLastState(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := instant()
		sub := s.Subscribe()
		const n = 2000
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				l := s.Lease()
				for i := range n / 4 {
					if _, err := l.Append(User{Text: fmt.Sprint(w, i)}); err != nil {
						t.Error(err)
					}
				}
			})
		}
		last := 0
		for snap := range sub.C() {
			if snap.Document.Len() < last {
				t.Fatalf("went back from %d to %d entries", last, snap.Document.Len())
			}
			last = snap.Document.Len()
			if last == n {
				break
			}
		}
		wg.Wait()
		sub.Close()
	})
}

// Live state is copy-on-write: a published snapshot keeps its sets and
// lists when later writes change them.
func TestPublishedLiveStateDoesNotChange(t *testing.T) {
	t.Parallel()
	s := instant(WithDocument(hydrated(t, 2)))
	l := s.Lease()
	if err := l.SetExpanded("saved-0", true); err != nil {
		t.Fatal(err)
	}
	c, err := l.StartChild("one")
	if err != nil {
		t.Fatal(err)
	}
	old := s.Snapshot()
	if err := errors.Join(l.SetExpanded("saved-1", true), l.SetExpanded("saved-0", false),
		c.SetModel("m"), c.Complete()); err != nil {
		t.Fatal(err)
	}
	if _, err := l.StartChild("two"); err != nil {
		t.Fatal(err)
	}
	if !old.Live.Expanded.Has("saved-0") || old.Live.Expanded.Has("saved-1") || old.Live.Expanded.Len() != 1 {
		t.Fatal("an earlier snapshot's expanded set changed")
	}
	if old.Live.Children.Len() != 1 || old.Live.Children.At(0).Model != "" || old.Live.Children.At(0).Done {
		t.Fatal("an earlier snapshot's child regions changed")
	}
	now := s.Snapshot().Live
	var got []string
	for id := range now.Expanded.All() {
		got = append(got, id)
	}
	if fmt.Sprint(got) != "[saved-1]" || now.Children.Len() != 2 {
		t.Fatalf("current: expanded %v, %d children", got, now.Children.Len())
	}
}
