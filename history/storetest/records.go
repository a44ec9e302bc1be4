package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// The record tests: appends, superseding snapshots, branches, compaction
// and the strict reading of bad logs.

func testAppend(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uniqueID(t)
	p := openPair(t, s, id)
	d := doc(t, id, user("u1", "hello"), agent("a1", "hi"))
	p.do("first save", func(l *history.Log) error { return l.Save(d, msgs("hello", "hi")) })
	d2, _ := d.Append(user("u2", "more"))
	d2, _ = d2.Append(agent("a2", "sure"))
	p.do("second save", func(l *history.Log) error { return l.Save(d2, msgs("hello", "hi", "more", "sure")) })
	p.do("unchanged save", func(l *history.Log) error { return l.Save(d2, msgs("hello", "hi", "more", "sure")) })
	p.do("title", func(l *history.Log) error { return l.SetTitle("greetings") })
	raw, _ := history.ReadRaw(s, id)
	if got, want := types(raw), "conversation,message,message,ui-append,message,message,ui-append,meta"; got != want {
		t.Fatalf("records %s, want %s", got, want)
	}
	c, err := history.ReadStore(s, id)
	if err != nil {
		t.Fatal(err)
	}
	if ids(c.Document) != "u1,a1,u2,a2" || len(c.Messages) != 4 || c.Title != "greetings" || len(c.Problems) != 0 {
		t.Fatalf("read back %s, %d messages, title %q, problems %v", ids(c.Document), len(c.Messages), c.Title, c.Problems)
	}
	// A new writer continues where the first stopped.
	p.log.Close()
	l, err := history.OpenStore(s, id, history.WithClock(clock()))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err = l.Load()
	if err != nil || ids(c.Document) != "u1,a1,u2,a2" {
		t.Fatalf("reopened: %v %s", err, ids(c.Document))
	}
	d3, _ := c.Document.Append(user("u3", "again"))
	if err := l.Save(d3, append(c.Messages, msgs("again")...)); err != nil {
		t.Fatal(err)
	}
	if c, _ := history.ReadStore(s, id); ids(c.Document) != "u1,a1,u2,a2,u3" {
		t.Fatalf("after the second writer: %s", ids(c.Document))
	}
	l.Close()
	// A writer that loads only the tail appends after what it left out.
	l, err = history.OpenStore(s, id, history.WithClock(clock()))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err = l.LoadTail(2, nil)
	if err != nil || c.Document.Elided() != 3 || ids(c.Document) != "a2,u3" {
		t.Fatalf("LoadTail: %v, %d left out, %s", err, c.Document.Elided(), ids(c.Document))
	}
	d4, _ := c.Document.Append(agent("a3", "more"))
	if err := l.Save(d4, c.Messages); err != nil {
		t.Fatal(err)
	}
	if c, _ := history.ReadStore(s, id); ids(c.Document) != "u1,a1,u2,a2,u3,a3" {
		t.Fatalf("after a tail writer: %s", ids(c.Document))
	}
}

func testSupersede(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uniqueID(t)
	p := openPair(t, s, id)
	d := doc(t, id, user("u1", "hello"), agent("a1", "hi"))
	p.do("save", func(l *history.Log) error { return l.Save(d, msgs("hello", "hi")) })
	// An earlier entry changed: the save supersedes with a snapshot, and
	// the model's messages are rewritten.
	d2 := doc(t, id, user("u1", "hello, edited"), agent("a1b", "hi again"))
	p.do("edit", func(l *history.Log) error { return l.Save(d2, msgs("hello, edited", "hi again")) })
	raw, _ := history.ReadRaw(s, id)
	if got := types(raw); !strings.HasSuffix(got, "rewrite,message,message,ui-transcript") {
		t.Fatalf("records %s: want a rewrite and a ui-transcript at the end", got)
	}
	c, err := history.ReadStore(s, id)
	if err != nil || ids(c.Document) != "u1,a1b" || c.Messages[0].Content != "hello, edited" || len(c.Messages) != 2 {
		t.Fatalf("read back: %v %s %+v", err, ids(c.Document), c.Messages)
	}
	// A streaming answer is provisional (ui-open) and superseded by the
	// next UI record.
	d3, _ := d2.Open(agent("a2", "par"))
	p.do("open", func(l *history.Log) error { return l.Save(d3, c.Messages) })
	d4, _ := d3.Update("a2", transcript.Agent{Markdown: "partial answer"})
	p.do("grow", func(l *history.Log) error { return l.Save(d4, c.Messages) })
	d5, _ := d4.Settle("a2", nil)
	p.do("settle", func(l *history.Log) error { return l.Save(d5, c.Messages) })
	c, _ = history.ReadStore(s, id)
	if ids(c.Document) != "u1,a1b,a2" || c.Document.At(2).Content.(transcript.Agent).Markdown != "partial answer" {
		t.Fatalf("after streaming: %s", ids(c.Document))
	}
}

func testBranches(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uniqueID(t)
	p := openPair(t, s, id)
	d := doc(t, id, user("u1", "q"), agent("a1", "a"), user("u2", "q2"), agent("a2", "a2"))
	m := msgs("q", "a", "q2", "a2")
	p.do("save", func(l *history.Log) error { return l.Save(d, m) })
	var b1, b2 string
	p.do("fork", func(l *history.Log) error {
		b, err := l.Fork(history.Main, "a1", 2, "other way")
		if b1 == "" {
			b1 = b
		} else {
			b2 = b
		}
		return err
	})
	if b1 == "" || b1 != b2 {
		t.Fatalf("fork ids %q and %q", b1, b2)
	}
	var branchDoc transcript.Document
	var branchMsgs []message.Message
	p.do("head", func(l *history.Log) error {
		c, err := l.SetHead(b1)
		if err == nil {
			branchDoc, branchMsgs = c.Document, c.Messages
		}
		return err
	})
	if ids(branchDoc) != "u1,a1" || len(branchMsgs) != 2 {
		t.Fatalf("branch starts with %s and %d messages", ids(branchDoc), len(branchMsgs))
	}
	bd, _ := branchDoc.Append(user("u9", "elsewhere"))
	p.do("save on the branch", func(l *history.Log) error { return l.Save(bd, append(branchMsgs, msgs("elsewhere")...)) })
	c, err := history.ReadStore(s, id)
	if err != nil || c.Head != b1 || ids(c.Document) != "u1,a1,u9" {
		t.Fatalf("read back: %v head %q %s", err, c.Head, ids(c.Document))
	}
	main, _, err := c.Branch(history.Main)
	if err != nil || ids(main) != "u1,a1,u2,a2" {
		t.Fatalf("main: %v %s", err, ids(main))
	}
	if _, err := p.log.SetHead("nope"); !errors.Is(err, history.ErrUnknownBranch) {
		t.Fatalf("SetHead of a missing branch: %v", err)
	}
}

func testCompaction(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uniqueID(t)
	p := openPair(t, s, id)
	d := doc(t, id, user("u1", "q"))
	p.do("save", func(l *history.Log) error { return l.Save(d, msgs("q")) })
	for i := range 3 {
		d = doc(t, id, user("u1", fmt.Sprintf("q edited %d", i)))
		p.do("supersede", func(l *history.Log) error { return l.Save(d, msgs("q")) })
	}
	before, _ := history.ReadRaw(s, id)
	var r1, r2 history.CompactResult
	p.do("compact", func(l *history.Log) error {
		r, err := l.Compact()
		if l == p.log {
			r1 = r
		} else {
			r2 = r
		}
		return err
	})
	if r1.Dropped == 0 || r1.Dropped != r2.Dropped || r1.After >= r1.Before || r1.Before != int64(len(before)) {
		t.Fatalf("compaction %+v, file %+v", r1, r2)
	}
	c, err := history.ReadStore(s, id)
	if err != nil || ids(c.Document) != "u1" || c.Document.At(0).Content.(transcript.User).Text != "q edited 2" {
		t.Fatalf("after compaction: %v %s", err, ids(c.Document))
	}
	// The writer goes on after the replacement.
	d2, _ := d.Append(agent("a1", "answer"))
	p.do("save after compaction", func(l *history.Log) error { return l.Save(d2, msgs("q", "answer")) })
}

// badLog is a log with a rejected batch (two entries with one ID) between
// valid records.
func badLog(id string) []byte {
	const at = `"2026-01-01T00:00:00.000Z"`
	e := func(eid, text string) string {
		return `{"id":"` + eid + `","content":{"kind":"user","text":"` + text + `"},"timestamp":` + at + `}`
	}
	return []byte(`{"type":"conversation","version":3,"conversationId":"` + id + `","startedAt":` + at + "}\n" +
		`{"type":"ui-append","at":` + at + `,"entries":[` + e("u1", "one") + "]}\n" +
		`{"type":"ui-append","at":` + at + `,"entries":[` + e("u2", "two") + "," + e("u2", "dup") + "]}\n" +
		`{"type":"ui-append","at":` + at + `,"entries":[` + e("u3", "three") + "]}\n")
}

func testStrict(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uniqueID(t)
	l, err := history.OpenStore(s, id, history.WithClock(clock()))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// Invalid input is refused before anything is written.
	if err := l.SaveEntries([]transcript.Entry{user("x", "a"), user("x", "b")}, nil); !errors.Is(err, history.ErrDuplicateID) {
		t.Fatalf("duplicate IDs: %v", err)
	}
	if _, _, err := s.ReadLog(id); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a refused save created the log: %v", err)
	}
	if err := l.Save(doc(t, id), []message.Message{{Role: "nobody"}}); !errors.Is(err, history.ErrInvalidMessage) {
		t.Fatalf("invalid message: %v", err)
	}
	l.Close()
	// A stored log with a bad batch: the batch is rejected whole, with
	// its line, and the records around it apply.
	m, err := s.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Read(); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("read before the first write: %v", err)
	}
	if err := m.Replace(badLog(id)); err != nil {
		t.Fatal(err)
	}
	m.Close()
	c, err := history.ReadStore(s, id)
	if err != nil {
		t.Fatal(err)
	}
	if ids(c.Document) != "u1,u3" || len(c.Problems) != 1 || c.Problems[0].Line != 3 {
		t.Fatalf("read %s with problems %+v; want u1,u3 and one problem on line 3", ids(c.Document), c.Problems)
	}
	raw, _ := history.ReadRaw(s, id)
	if !bytes.Equal(raw, badLog(id)) {
		t.Fatal("the store did not keep the records byte for byte")
	}
	// A writer continues the log; its rejected IDs stay reserved.
	l, err = history.OpenStore(s, id, history.WithClock(clock()))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err = l.Load()
	if err != nil {
		t.Fatal(err)
	}
	d, _ := c.Document.Append(user("u4", "four"))
	if err := l.Save(d, nil); err != nil {
		t.Fatal(err)
	}
	if c, _ := history.ReadStore(s, id); ids(c.Document) != "u1,u3,u4" {
		t.Fatalf("after the append: %s", ids(c.Document))
	}
}
