package transcript

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"
)

func agentText(t *testing.T, d Document, id string) string {
	t.Helper()
	i, ok := d.Index(id)
	if !ok {
		t.Fatalf("entry %s not in document", id)
	}
	a, ok := d.At(i).Content.(Agent)
	if !ok {
		t.Fatalf("entry %s is %T", id, d.At(i).Content)
	}
	return a.Markdown
}

func TestSettlementKeepsSourceIDAndDoesNotDuplicate(t *testing.T) {
	t.Parallel()
	s := instant()
	l := s.Lease()
	if _, err := l.Append(User{Text: "q"}); err != nil {
		t.Fatal(err)
	}
	w := l.Stream()
	if w.AnswerID() != "" {
		t.Fatal("answer has an ID before any text")
	}
	if err := w.Text(""); err != nil || w.AnswerID() != "" {
		t.Fatal("empty text opened an entry")
	}
	for _, d := range []string{"Hel", "lo, ", "world"} {
		if err := w.Text(d); err != nil {
			t.Fatal(err)
		}
	}
	id := w.AnswerID()
	mid := s.Snapshot().Document
	if mid.Len() != 2 || !mid.IsOpen(1) || mid.At(1).ID != id || agentText(t, mid, id) != "Hello, world" {
		t.Fatalf("mid-stream document: len %d open %v", mid.Len(), mid.IsOpen(1))
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	d := s.Snapshot().Document
	if d.Len() != 2 {
		t.Fatalf("settlement left %d entries, want 2 (source duplicated?)", d.Len())
	}
	if d.At(1).ID != id || d.IsOpen(1) || agentText(t, d, id) != "Hello, world" {
		t.Fatalf("settled entry: id %s (want %s) open %v", d.At(1).ID, id, d.IsOpen(1))
	}
	if !d.At(1).Timestamp.Equal(mid.At(1).Timestamp) {
		t.Fatal("settlement changed the timestamp")
	}
	if err := w.Text("more"); !errors.Is(err, ErrStreamClosed) {
		t.Fatalf("text after Finish: %v", err)
	}
}

// The durable document holds everything accepted; the pacer only chooses
// the visible prefix, and settlement shows the rest under the same ID.
func TestPacedTextIsDurableAndSettlementRevealsRest(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(WithPacing(DefaultPacing))
		w := s.Lease().Stream()
		const text = "accepted partial text that the reader has not seen yet"
		if err := w.Text(text); err != nil {
			t.Fatal(err)
		}
		id := w.AnswerID()
		snap := s.Snapshot()
		if got := agentText(t, snap.Document, id); got != text {
			t.Fatalf("durable text = %q", got)
		}
		if n, paced := snap.Live.Revealed(id); !paced || n != 0 {
			t.Fatalf("revealed %d (paced %v) before any tick", n, paced)
		}
		if v := snap.Visible(0).(Agent).Markdown; v != "" {
			t.Fatalf("visible before any tick: %q", v)
		}
		time.Sleep(DefaultPacing.Tick)
		synctest.Wait()
		snap = s.Snapshot()
		n, _ := snap.Live.Revealed(id)
		if n == 0 || n >= len(text) {
			t.Fatalf("after one tick %d of %d bytes visible", n, len(text))
		}
		if v := snap.Visible(0).(Agent).Markdown; v != text[:n] {
			t.Fatalf("visible %q", v)
		}
		if err := w.Finish(); err != nil {
			t.Fatal(err)
		}
		snap = s.Snapshot()
		if _, paced := snap.Live.Revealed(id); paced {
			t.Fatal("settled entry is still paced")
		}
		if snap.Document.Len() != 1 || snap.Document.At(0).ID != id || snap.Visible(0).(Agent).Markdown != text {
			t.Fatal("settlement did not reveal the rest under the same ID")
		}
		// No pacer timer outlives the settlement.
		time.Sleep(time.Minute)
		synctest.Wait()
		if !reflect.DeepEqual(s.Snapshot(), snap) {
			t.Fatal("something changed after settlement")
		}
	})
}

func TestPacerRevealsProgressivelyAndGoesIdle(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := DefaultPacing
		s := NewStore(WithPacing(p))
		w := s.Lease().Stream()
		text := strings.Repeat("héllo wörld → ", 100) // multi-byte runes throughout
		if err := w.Text(text); err != nil {
			t.Fatal(err)
		}
		id := w.AnswerID()
		last, ticks := 0, 0
		for last < len(text) {
			time.Sleep(p.Tick)
			synctest.Wait()
			ticks++
			n, _ := s.Snapshot().Live.Revealed(id)
			if n < last || n > len(text) {
				t.Fatalf("tick %d: cursor %d after %d (len %d)", ticks, n, last, len(text))
			}
			if !utf8.ValidString(text[:n]) {
				t.Fatalf("tick %d: cursor %d splits a rune", ticks, n)
			}
			last = n
			if ticks > 200 {
				t.Fatalf("only %d of %d bytes visible after %d ticks", n, len(text), ticks)
			}
		}
		if ticks < 3 {
			t.Fatalf("%d bytes revealed in %d ticks: not paced", len(text), ticks)
		}
		// Caught up: the pacer goes idle rather than ticking forever.
		idle := s.Snapshot()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if !reflect.DeepEqual(s.Snapshot(), idle) {
			t.Fatal("an idle pacer kept publishing")
		}
		// Text after a long wait is paced from where it stopped, and the
		// wait is not paid out as a burst.
		if err := w.Text(strings.Repeat("x", 1000)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(p.Tick)
		synctest.Wait()
		n, _ := s.Snapshot().Live.Revealed(id)
		maxStep := int(max(p.MinRate, 1000/p.CatchUp.Seconds())*p.Tick.Seconds()) + 4
		if n <= last || n-last > maxStep {
			t.Fatalf("first tick after idle revealed %d bytes, want 1..%d", n-last, maxStep)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if n, _ := s.Snapshot().Live.Revealed(id); n != len(text)+1000 {
			t.Fatalf("flush revealed %d", n)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if n, _ := s.Snapshot().Live.Revealed(id); n != len(text)+1000 {
			t.Fatalf("a tick after flush moved the cursor back to %d", n)
		}
	})
}

func TestPacerUnit(t *testing.T) {
	t.Parallel()
	p := newPacer(Pacing{Tick: 10 * time.Millisecond, MinRate: 100, CatchUp: time.Second})
	start := time.Unix(0, 0)
	src := "ab€cd" // € is 3 bytes at offset 2
	p.Wake(start)
	if n := p.Advance(src, start); n != 0 {
		t.Fatalf("no time passed, cursor %d", n)
	}
	// 30ms at 100 B/s earns 3 bytes: "ab" plus the first byte of €, which
	// must round up to the end of the rune.
	if n := p.Advance(src, start.Add(30*time.Millisecond)); n != 5 {
		t.Fatalf("cursor %d, want 5 (rune boundary)", n)
	}
	if n := p.Advance(src, start.Add(time.Hour)); n != len(src) {
		t.Fatalf("cursor %d, want the end", n)
	}
	if n := p.Advance(src, start.Add(2*time.Hour)); n != len(src) {
		t.Fatalf("cursor passed the end: %d", n)
	}
	p.JumpTo(2)
	if p.Cursor() != len(src) {
		t.Fatal("JumpTo moved the cursor back")
	}
}

// A tick reads the source in place: no allocation, however long the text.
func TestPacerTickDoesNotCopy(t *testing.T) {
	src := strings.Repeat("y", 1<<20)
	p := newPacer(DefaultPacing)
	now := time.Unix(0, 0)
	p.Wake(now)
	allocs := testing.AllocsPerRun(100, func() {
		now = now.Add(time.Millisecond)
		p.Advance(src, now)
	})
	if allocs != 0 {
		t.Fatalf("Advance allocated %.1f times per tick", allocs)
	}
}

// A reveal queued by the old conversation's pacer must not touch the next
// conversation, even when the next one reuses the very same entry ID (the
// same history hydrated again).
func TestQueuedRevealDoesNotReachNextConversation(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"replace", "rehydrate", "clear"} {
		t.Run(how, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := NewStore(WithPacing(DefaultPacing))
				w := s.Lease().Stream()
				if err := w.Text(strings.Repeat("old conversation ", 40)); err != nil {
					t.Fatal(err)
				}
				time.Sleep(DefaultPacing.Tick) // one reveal done, the next queued
				synctest.Wait()
				id := w.AnswerID()
				var before Snapshot
				switch how {
				case "replace":
					next := mustDoc(t, user("u", "new question"))
					next = must(t)(next.Open(agent(id, "new")))
					before = s.Replace(next)
				case "rehydrate":
					before = s.Hydrate(s.Snapshot().Document)
				case "clear":
					before = s.Clear(s.Snapshot().Document.ID())
				}
				time.Sleep(time.Minute)
				synctest.Wait()
				if after := s.Snapshot(); !reflect.DeepEqual(after, before) {
					t.Fatalf("a queued reveal changed the next conversation:\nbefore %+v\nafter  %+v", before.Live, after.Live)
				}
				if err := w.Text(" more"); !errors.Is(err, ErrLeaseRetired) {
					t.Fatalf("old writer: %v", err)
				}
			})
		})
	}
}

func TestReasoningKeepsIdentityAcrossSteps(t *testing.T) {
	t.Parallel()
	s := instant()
	l := s.Lease()
	w := l.Stream()
	step := func(thought, answer string) (rid, aid string) {
		t.Helper()
		if err := w.Reasoning(thought); err != nil {
			t.Fatal(err)
		}
		if err := w.Text(answer); err != nil {
			t.Fatal(err)
		}
		rid, aid = w.ReasoningID(), w.AnswerID()
		if err := w.EndStep(); err != nil {
			t.Fatal(err)
		}
		return rid, aid
	}
	r1, a1 := step("first thought", "calling a tool")
	toolID, err := l.Append(Tool{Receipt: ToolReceipt{App: "shell", Summary: "ls", Status: ToolOK}})
	if err != nil {
		t.Fatal(err)
	}
	r2, a2 := step("second thought", "done")
	if r1 == r2 || a1 == a2 {
		t.Fatalf("steps share an identity: reasoning %s/%s answer %s/%s", r1, r2, a1, a2)
	}
	d := s.Snapshot().Document
	wantIDs(t, d, r1, a1, toolID, r2, a2)
	for i, want := range map[int]string{0: "first thought", 3: "second thought"} {
		r, ok := d.At(i).Content.(Reasoning)
		if !ok || r.Text != want || r.Label != reasoningLabel || r.DurationMs == nil {
			t.Fatalf("entry %d = %#v, want reasoning %q with a duration", i, d.At(i).Content, want)
		}
	}
	if d.Settled() != d.Len() {
		t.Fatal("steps left entries open")
	}
}

// Children own their region: nothing a child does may settle the main
// answer or change the main footer; only its usage reaches the totals.
func TestChildCannotTouchMain(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(WithPacing(DefaultPacing))
		l := s.Lease()
		uid, err := l.Append(User{Text: "q"})
		if err != nil {
			t.Fatal(err)
		}
		main := l.Stream()
		if err := errors.Join(main.Text("main partial"), main.SetModel("main-model"), main.SetPromptContext(1234),
			main.AddUsage(Usage{InputTokens: 100, CostUSD: 0.25}),
			l.SetRetry(Retry{Attempt: 2, Reason: "overloaded"}), l.SetExpanded(uid, true),
			main.Flush()); err != nil { // the main pacer is idle: its own ticks are not the child's doing
			t.Fatal(err)
		}
		answer := main.AnswerID()
		mainFacts := func() any {
			snap := s.Snapshot()
			i, _ := snap.Document.Index(answer)
			n, paced := snap.Live.Revealed(answer)
			lv := snap.Live
			return []any{snap.Document.Len(), snap.Document.IsOpen(i), snap.Document.At(i), n, paced,
				lv.Activity, lv.Model, lv.PromptContext, lv.Retry, lv.Expanded.Has(uid), lv.Expanded.Len()}
		}
		want := mainFacts()
		childUsage := Usage{}
		check := func(op string, err error) {
			t.Helper()
			if err != nil {
				t.Fatalf("%s: %v", op, err)
			}
			if got := mainFacts(); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s changed the main region:\n got %v\nwant %v", op, got, want)
			}
			if tot, wantTot := s.Snapshot().Live.Totals, (Usage{InputTokens: 100, CostUSD: 0.25}).Add(childUsage); tot != wantTot {
				t.Fatalf("%s: totals %+v, want %+v", op, tot, wantTot)
			}
		}
		c, err := l.StartChild("researcher")
		check("start", err)
		check("child model", c.SetModel("child-model"))
		check("child context", c.SetPromptContext(99))
		check("child activity", c.SetActivity(ActivityTool))
		cw, err := c.Stream()
		check("child stream", err)
		check("child reasoning", cw.Reasoning("child thinks"))
		check("child text", cw.Text("child answer"))
		check("child stream model", cw.SetModel("child-model-2"))
		check("child stream context", cw.SetPromptContext(77))
		time.Sleep(DefaultPacing.Tick)
		synctest.Wait()
		check("child tick", nil)
		check("child flush", c.Flush())
		childUsage = childUsage.Add(Usage{OutputTokens: 40, CostUSD: 0.5})
		check("child usage", c.AddUsage(Usage{OutputTokens: 40, CostUSD: 0.5}))
		childUsage = childUsage.Add(Usage{InputTokens: 7})
		check("child stream usage", cw.AddUsage(Usage{InputTokens: 7}))
		check("child step end", cw.EndStep())
		check("child reset", c.Reset())
		if err := cw.Text("stale"); !errors.Is(err, ErrChildClosed) {
			t.Fatalf("stream from before the reset: %v", err)
		}
		tid, err := c.Open(Tool{Receipt: ToolReceipt{App: "grep", Summary: "searching", Status: ToolOK}})
		check("child tool start", err)
		check("child tool done", c.Settle(tid, Tool{Receipt: ToolReceipt{App: "grep", Summary: "3 hits", Status: ToolOK}}))
		_, err = c.Append(Notice{Text: "child note", Tone: ToneInfo})
		check("child notice", err)
		check("child reset", c.Reset())
		cw2, err := c.Stream()
		check("child stream after reset", err)
		check("child text after reset", cw2.Text("again"))
		check("child complete", c.Complete())
		time.Sleep(time.Second)
		synctest.Wait()
		check("ticks after complete", nil)
		if err := c.SetModel("x"); !errors.Is(err, ErrChildClosed) {
			t.Fatalf("write after complete: %v", err)
		}

		region, ok := s.Snapshot().Live.Children.Get(c.ID())
		if !ok {
			t.Fatal("child region missing")
		}
		if region.Model != "child-model-2" || region.PromptContext != 77 || !region.Done ||
			region.Activity != ActivityIdle || region.Usage != childUsage || region.Label != "researcher" {
			t.Fatalf("child region = %+v", region)
		}
		if region.Feed.Len() != 1 || region.Feed.Settled() != 1 || region.Feed.At(0).Content != (Agent{Markdown: "again"}) {
			t.Fatalf("child feed = %v", region.Feed.Entries())
		}
		// The child's entries never entered the main document.
		for _, e := range s.Snapshot().Document.All() {
			if e.Content == (Agent{Markdown: "again"}) || e.Content == (Agent{Markdown: "child answer"}) {
				t.Fatal("child text reached the main document")
			}
		}
		// The main writer still owns its answer and footer.
		if err := errors.Join(main.Text(", finished"), main.SetModel("main-2"), main.Finish()); err != nil {
			t.Fatal(err)
		}
		snap := s.Snapshot()
		if agentText(t, snap.Document, answer) != "main partial, finished" || snap.Live.Model != "main-2" {
			t.Fatal("main writer lost its answer or footer")
		}
	})
}

func TestStreamReplacesInvalidUTF8(t *testing.T) {
	t.Parallel()
	s := instant()
	w := s.Lease().Stream()
	if err := w.Text("ok \xff\xfe end"); err != nil {
		t.Fatal(err)
	}
	e := s.Snapshot().Document.At(0)
	if !utf8.ValidString(e.Content.(Agent).Markdown) {
		t.Fatal("invalid UTF-8 accepted")
	}
	if _, err := EncodeEntry(e); err != nil {
		t.Fatalf("accepted partial text cannot be saved: %v", err)
	}
}

// Earlier snapshots keep the text they were published with while the
// stream keeps growing the same buffer.
func TestEarlierSnapshotsKeepTheirText(t *testing.T) {
	t.Parallel()
	s := instant()
	w := s.Lease().Stream()
	var snaps []Snapshot
	var want []string
	acc := ""
	for i := range 300 {
		d := strings.Repeat(string(rune('a'+i%26)), i%7+1)
		acc += d
		if err := w.Text(d); err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, s.Snapshot())
		want = append(want, acc)
	}
	for i, snap := range snaps {
		if got := snap.Document.At(0).Content.(Agent).Markdown; got != want[i] {
			t.Fatalf("snapshot %d changed: %q", i, got)
		}
	}
}

// An answer settled by another producer (the turn loop closing a stopped
// reply) is whole; the writer's pending tick must not hide part of it again.
func TestTickLeavesEntriesSettledElsewhereAlone(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(WithPacing(DefaultPacing))
		l := s.Lease()
		w := l.Stream()
		if err := w.Text(strings.Repeat("z", 500)); err != nil {
			t.Fatal(err)
		}
		if err := l.Settle(w.AnswerID(), nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if _, paced := s.Snapshot().Live.Revealed(w.AnswerID()); paced {
			t.Fatal("a tick paced a settled entry")
		}
		if got := s.Snapshot().Visible(0).(Agent).Markdown; len(got) != 500 {
			t.Fatalf("settled entry shows %d bytes", len(got))
		}
	})
}

// Readers on other goroutines read snapshot text while the writer keeps
// appending to the same buffer. Run with -race: the aliased string must
// never cover bytes the writer is still writing.
func TestConcurrentReadersOfStreamingText(t *testing.T) {
	t.Parallel()
	s := instant()
	sub := s.Subscribe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for snap := range sub.C() {
			if snap.Document.Len() == 0 {
				continue
			}
			text := snap.Document.At(0).Content.(Agent).Markdown
			for i := 0; i < len(text); i++ {
				if text[i] != "0123456789"[i%10] {
					t.Errorf("byte %d of %q changed", i, text)
					return
				}
			}
		}
	}()
	w := s.Lease().Stream()
	for i := range 3000 {
		if err := w.Text(string("0123456789"[i%10])); err != nil {
			t.Fatal(err)
		}
	}
	sub.Close()
	<-done
}

// What a save sees mid-stream is the accepted text; resuming from it gives
// ordinary settled history with that text, under the same IDs.
func TestHydratingAMidStreamSnapshotSettlesIt(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := NewStore(WithPacing(DefaultPacing))
		l := s.Lease()
		w := l.Stream()
		if err := errors.Join(w.Reasoning("thinking"), w.Text("partial answer")); err != nil {
			t.Fatal(err)
		}
		tool, err := l.Open(Tool{Receipt: ToolReceipt{App: "shell", Summary: "running", Status: ToolOK}})
		if err != nil {
			t.Fatal(err)
		}
		saved := s.Snapshot().Document // nothing revealed yet; all accepted
		snap := s.Hydrate(saved)
		d := snap.Document
		if d.Settled() != d.Len() || d.Len() != 3 {
			t.Fatalf("hydrated %d entries, %d settled", d.Len(), d.Settled())
		}
		wantIDs(t, d, w.ReasoningID(), w.AnswerID(), tool)
		if snap.Visible(1).(Agent).Markdown != "partial answer" {
			t.Fatalf("resumed answer shows %q", snap.Visible(1))
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if !reflect.DeepEqual(s.Snapshot(), snap) {
			t.Fatal("the old stream kept writing after resume")
		}
	})
}

// When the answer begins, the step's thinking is over: the reasoning entry
// settles then, under its ID, with a duration that does not count the time
// the answer spent streaming, so views can print it while the answer grows.
func TestReasoningSettlesWhenTheAnswerBegins(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := instant()
		w := s.Lease().Stream()
		if err := w.Reasoning("weighing it"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		rid := w.ReasoningID()
		if err := w.Text("the answer"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Second) // the answer streams for a while
		if err := w.Text(" goes on"); err != nil {
			t.Fatal(err)
		}
		d := s.Snapshot().Document
		i, ok := d.Index(rid)
		if !ok || d.IsOpen(i) {
			t.Fatalf("reasoning %s open=%v while the answer streams; want settled", rid, ok && d.IsOpen(i))
		}
		r := d.At(i).Content.(Reasoning)
		if r.DurationMs == nil || *r.DurationMs != 300 {
			t.Fatalf("reasoning took %v ms, want 300 (not the answer's streaming time)", r.DurationMs)
		}
		if w.ReasoningID() != rid {
			t.Fatalf("ReasoningID changed from %s to %s at early settlement", rid, w.ReasoningID())
		}
		if err := w.EndStep(); err != nil {
			t.Fatal(err)
		}
		d = s.Snapshot().Document
		wantIDs(t, d, rid, d.At(1).ID)
		if d.Len() != 2 || d.Settled() != 2 {
			t.Fatalf("after the step: %d entries, %d settled; want 2 and 2", d.Len(), d.Settled())
		}
	})
}
