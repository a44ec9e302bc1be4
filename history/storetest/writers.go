package storetest

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// The writer tests: one writer at a time, receipts, listing, interrupted
// and crashed writes.

func testWriters(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uniqueID(t)
	l, err := history.OpenStore(s, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := history.OpenStore(s, id); !errors.Is(err, history.ErrLocked) {
		t.Fatalf("a second writer: %v, want ErrLocked", err)
	}
	if err := s.Delete(id); !errors.Is(err, history.ErrLocked) {
		t.Fatalf("delete beside a writer: %v, want ErrLocked", err)
	}
	l.Close()
	// Writers racing for a free conversation: exactly one wins.
	const n = 6
	var wg sync.WaitGroup
	var mu sync.Mutex
	var won []*history.Log
	refused := 0
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := history.OpenStore(s, id)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won = append(won, l)
			case errors.Is(err, history.ErrLocked):
				refused++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, l := range won {
		defer l.Close()
	}
	// Winners may take turns when one closes before another opens; none
	// here closes, so exactly one holds it.
	if len(won) != 1 || refused != n-1 {
		t.Fatalf("%d writers won, %d refused; want 1 and %d", len(won), refused, n-1)
	}
	if err := won[0].SaveEntries([]transcript.Entry{user("u1", "mine")}, nil); err != nil {
		t.Fatal(err)
	}
}

func testReceipts(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uniqueID(t)
	l, err := history.OpenStore(s, id, history.WithClock(clock()))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := l.LoadCommands(); err != nil || len(got) != 0 {
		t.Fatalf("receipts of a new conversation: %v %v", got, err)
	}
	// A command may come before the first record.
	for _, r := range []history.CommandRecord{
		{ID: "k1", State: "accepted"},
		{ID: "k2", State: "accepted", Steer: true},
		{ID: "k1", State: "done"},
	} {
		if err := l.RecordCommand(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.SaveEntries([]transcript.Entry{user("u1", "q")}, msgs("q")); err != nil {
		t.Fatal(err)
	}
	if err := l.RecordCommand(history.CommandRecord{ID: "k2", State: "failed", Reason: "stopped"}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l, err = history.OpenStore(s, id)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got, err := l.LoadCommands()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "k1" || got[0].State != "done" || got[1].State != "failed" || got[1].Reason != "stopped" || got[0].At == "" {
		t.Fatalf("receipts %+v", got)
	}
	if c, err := l.Load(); err != nil || ids(c.Document) != "u1" {
		t.Fatalf("log beside the receipts: %v", err)
	}
}

// testReceiptsBesideSaves: the engine records command receipts from its
// own goroutines while its saver saves; a medium must take both at once.
func testReceiptsBesideSaves(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uniqueID(t)
	l, err := history.OpenStore(s, id, history.WithClock(clock()))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const n = 20
	done := make(chan error, 1)
	go func() {
		for i := range n {
			if err := l.RecordCommand(history.CommandRecord{ID: fmt.Sprint("k", i), State: "done"}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	d := doc(t, id)
	for i := range n {
		d, _ = d.Append(user(fmt.Sprint("u", i), "q"))
		if err := l.Save(d, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	rs, err := l.LoadCommands()
	if err != nil || len(rs) != n {
		t.Fatalf("%d receipts (%v), want %d", len(rs), err, n)
	}
	if c, err := history.ReadStore(s, id); err != nil || c.Document.Len() != n {
		t.Fatalf("read back: %v", err)
	}
}

func testList(t *testing.T, h Harness) {
	s := newStore(t, h)
	a, b := uniqueID(t)+"a", uniqueID(t)+"b"
	for i, id := range []string{a, b} {
		l, err := history.OpenStore(s, id, history.WithClock(func() time.Time { return t0.Add(time.Duration(i) * time.Hour) }))
		if err != nil {
			t.Fatal(err)
		}
		q := fmt.Sprintf("question %d", i)
		if err := l.SaveEntries([]transcript.Entry{user("u1", q)}, msgs(q)); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			if err := l.SetTitle("the second"); err != nil {
				t.Fatal(err)
			}
		}
		l.Close()
	}
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var mine []history.Summary
	for _, x := range list {
		if x.ID == a || x.ID == b {
			mine = append(mine, x)
		}
	}
	if len(mine) != 2 || mine[0].ID != b || mine[0].Title != "the second" || mine[1].Title != "question 0" ||
		mine[1].Entries != 1 || mine[1].Messages != 1 || mine[0].Version != history.Version {
		t.Fatalf("listing %+v", mine)
	}
	if err := s.Delete(a); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ReadLog(a); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("read after delete: %v", err)
	}
	if err := s.Delete(a); err != nil {
		t.Fatalf("deleting a missing log: %v", err)
	}
	list, _ = s.List()
	for _, x := range list {
		if x.ID == a {
			t.Fatal("a deleted conversation is still listed")
		}
	}
}

// testInterrupted: a writer that dies mid-answer leaves a provisional
// tail; the next writer records it as interrupted, once.
func testInterrupted(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uniqueID(t)
	m, err := s.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	l := history.OpenMedium(m, id, history.WithClock(clock()))
	d := doc(t, id, user("u1", "write an essay"))
	d, _ = d.Open(agent("a1", "The partial ans"))
	if err := l.Save(d, msgs("write an essay")); err != nil {
		t.Fatal(err)
	}
	if h.Kill != nil {
		h.Kill(t, m)
	}
	l.Close() // after Kill this releases only what is left on this side
	l2, err := history.OpenStore(s, id, history.WithClock(clock()))
	if err != nil {
		t.Fatalf("the next writer after the first died: %v", err)
	}
	defer l2.Close()
	c, err := l2.Load()
	if err != nil || !c.Interrupted || c.Document.Len() != 3 {
		t.Fatalf("load after the writer died: %v interrupted=%v entries=%d", err, c.Interrupted, c.Document.Len())
	}
	if n, ok := c.Document.At(2).Content.(transcript.Notice); !ok || n.Text != history.InterruptedNotice {
		t.Fatalf("no interrupted notice: %+v", c.Document.At(2))
	}
	if c, err := history.ReadStore(s, id); err != nil || c.Document.Len() != 3 || c.Document.At(1).Content.(transcript.Agent).Markdown != "The partial ans" {
		t.Fatalf("read back: %v", err)
	}
}

// testCrash cuts a save before each of its steps in turn; after each cut
// the next writer finds the log as it was before the save or after it,
// never anything else, and writes on.
func testCrash(t *testing.T, h Harness) {
	s := newStore(t, h)
	for k := 0; ; k++ {
		id := fmt.Sprintf("%s-%d", uniqueID(t), k)
		l, err := history.OpenStore(s, id, history.WithClock(clock()))
		if err != nil {
			t.Fatal(err)
		}
		base := doc(t, id, user("u1", "q"), agent("a1", "a"))
		if err := l.Save(base, msgs("q", "a")); err != nil {
			t.Fatal(err)
		}
		more, _ := base.Append(user("u2", "q2"))
		fired := h.Crash(t, s, k)
		saveErr := l.Save(more, msgs("q", "a", "q2"))
		l.Close()
		if !fired() {
			if saveErr != nil {
				t.Fatalf("step %d: no crash, yet the save failed: %v", k, saveErr)
			}
			if k < 2 {
				t.Fatalf("only %d steps: the crash hook never fired", k)
			}
			t.Logf("a save was cut before each of its %d steps", k)
			return
		}
		if saveErr == nil {
			t.Fatalf("step %d: the save succeeded across a crash", k)
		}
		l, err = history.OpenStore(s, id, history.WithClock(clock()))
		if err != nil {
			t.Fatalf("step %d: reopen: %v", k, err)
		}
		c, err := l.Load()
		if err != nil || len(c.Problems) != 0 {
			t.Fatalf("step %d: load: %v %+v", k, err, c.Problems)
		}
		switch got := ids(c.Document); {
		case got == "u1,a1" && len(c.Messages) == 2:
		case got == "u1,a1,u2" && len(c.Messages) == 3:
		default:
			t.Fatalf("step %d: after the crash the log holds %s and %d messages", k, got, len(c.Messages))
		}
		again, _ := c.Document.Append(agent("a2", "a2"))
		if err := l.Save(again, append(c.Messages, msgs("x", "a2")[1:]...)); err != nil {
			t.Fatalf("step %d: save after the crash: %v", k, err)
		}
		l.Close()
	}
}
