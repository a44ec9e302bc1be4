// Package storetest is the conformance suite for history.Store: every back
// end (the data folder, PostgreSQL) runs the same tests, which check that a
// Log over the store writes exactly the bytes a Log over a file writes and
// that every rule of the log format holds: appends, supersession,
// branches, compaction, strict rejection, one writer at a time, command
// receipts, attachments and artifacts (blobs), and (where the back end can be cut between steps) a crash at
// every step of a write.
//
// The suite uses the testing package only; it starts no goroutine that
// outlives a test.
package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// Harness describes a back end to the suite.
type Harness struct {
	// New returns an empty store; the suite closes it.
	New func(t *testing.T) history.Store
	// Crash, when set, arms s so that its next write is cut before step k
	// (the writer's connection ends there, as when its process dies). The
	// returned func reports, after the write, whether step k existed.
	Crash func(t *testing.T, s history.Store, k int) (fired func() bool)
	// Kill, when set, ends the writer holding m without letting it
	// release anything, as SIGKILL would.
	Kill func(t *testing.T, m history.Medium)
}

// Run runs the suite.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"AppendSameBytesAsAFile", testAppend},
		{"Supersede", testSupersede},
		{"Branches", testBranches},
		{"Compaction", testCompaction},
		{"StrictRejection", testStrict},
		{"ConcurrentWritersRefused", testWriters},
		{"CommandReceipts", testReceipts},
		{"ReceiptsBesideSaves", testReceiptsBesideSaves},
		{"ListAndDelete", testList},
		{"InterruptedAnswer", testInterrupted},
		{"Blobs", testBlobs},
		{"BlobsRefused", testBlobsRefused},
		{"BlobsRacingPuts", testBlobsRacing},
		{"BlobsGoWithTheConversation", testBlobsDeleted},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, h) })
	}
	if h.Crash != nil {
		t.Run("CrashAtEveryStep", func(t *testing.T) { testCrash(t, h) })
	}
}

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func clock() func() time.Time {
	t := t0
	var mu sync.Mutex
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

func newStore(t *testing.T, h Harness) history.Store {
	s := h.New(t)
	t.Cleanup(func() { s.Close() })
	return s
}

// pair is a Log over the store under test and one over a file, given the
// same calls; the store must end up holding the file's bytes.
type pair struct {
	t    *testing.T
	s    history.Store
	id   string
	log  *history.Log
	file *history.Log
	path string
}

func openPair(t *testing.T, s history.Store, id string) *pair {
	t.Helper()
	l, err := history.OpenStore(s, id, history.WithClock(clock()))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "conversations", id+".jsonl")
	f, err := history.Open(path, history.WithClock(clock()))
	if err != nil {
		t.Fatal(err)
	}
	p := &pair{t: t, s: s, id: id, log: l, file: f, path: path}
	t.Cleanup(func() { p.log.Close(); p.file.Close() })
	return p
}

// do runs fn on both logs and requires the same outcome.
func (p *pair) do(what string, fn func(l *history.Log) error) {
	p.t.Helper()
	e1, e2 := fn(p.log), fn(p.file)
	if (e1 == nil) != (e2 == nil) {
		p.t.Fatalf("%s: store says %v, file says %v", what, e1, e2)
	}
	if e1 != nil {
		p.t.Fatalf("%s: %v", what, e1)
	}
	p.same(what)
}

// same requires the store to hold the file's exact bytes.
func (p *pair) same(what string) {
	p.t.Helper()
	got, err := history.ReadRaw(p.s, p.id)
	if err != nil {
		p.t.Fatalf("%s: read the store: %v", what, err)
	}
	wantRaw := readBytes(p.t, p.path)
	if !bytes.Equal(got, wantRaw) {
		p.t.Fatalf("%s: the store holds\n%s\nthe file holds\n%s", what, got, wantRaw)
	}
}

func user(id, text string) transcript.Entry {
	return transcript.Entry{ID: id, Content: transcript.User{Text: text}, Timestamp: t0}
}

func agent(id, md string) transcript.Entry {
	return transcript.Entry{ID: id, Content: transcript.Agent{Markdown: md}, Timestamp: t0}
}

func doc(t *testing.T, id string, es ...transcript.Entry) transcript.Document {
	t.Helper()
	d, err := transcript.NewDocument(id, es)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func msgs(texts ...string) []message.Message {
	var out []message.Message
	for i, s := range texts {
		role := message.User
		if i%2 == 1 {
			role = message.Assistant
		}
		out = append(out, message.Text(role, s))
	}
	return out
}

func ids(d transcript.Document) string {
	var out []string
	for _, e := range d.Entries() {
		out = append(out, e.ID)
	}
	return strings.Join(out, ",")
}

func types(data []byte) string {
	var out []string
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		i := strings.Index(line, `"type":"`)
		if i < 0 {
			out = append(out, "?")
			continue
		}
		rest := line[i+8:]
		out = append(out, rest[:strings.IndexByte(rest, '"')])
	}
	return strings.Join(out, ",")
}

// uniqueID names a conversation for one test, so back ends that share a
// database between tests never see two tests' logs under one ID.
func uniqueID(t *testing.T) string {
	return fmt.Sprintf("c-%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano())
}

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

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// artifactRef is the ref the blob tests' tool entry refers to.
const artifactRef = "0123456789abcdef0123456789abcdef"

// withArtifact makes conversation id with a tool entry whose presentation
// refers to artifactRef, as a tool's retained checkpoint does (the data
// folder knows a conversation's artifacts from its log).
func withArtifact(t *testing.T, s history.Store, id string) {
	t.Helper()
	l, err := history.OpenStore(s, id, history.WithClock(clock()))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tool := transcript.Entry{ID: "t1", Timestamp: t0, Content: transcript.Tool{
		Receipt: transcript.ToolReceipt{App: "shell", Summary: "ran", Status: transcript.ToolOK},
		Presentation: &transcript.Presentation{Schema: "folio.output", Version: 1, Revision: 1,
			Artifact: &transcript.Artifact{Ref: artifactRef, ContentType: "text/plain", CommittedBytes: 5, Revision: 1, Final: true, Available: true}},
	}}
	if err := l.SaveEntries([]transcript.Entry{user("u1", "run it"), tool}, msgs("run it")); err != nil {
		t.Fatal(err)
	}
}

func getBlob(t *testing.T, s history.Store, id string, kind history.BlobKind, name string) (history.Blob, []byte) {
	t.Helper()
	b, data, err := s.GetBlob(id, kind, name)
	if err != nil {
		t.Fatalf("get %s %s: %v", kind, name, err)
	}
	return b, data
}

// testBlobs: put, get, list and delete of attachments and artifacts; a put
// of the same bytes changes nothing, other bytes under a stored name are
// refused, and bytes two names share survive the deletion of one.
func testBlobs(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uniqueID(t)
	withArtifact(t, s, id)
	att := []byte("hello, attachment\n")
	meta := []byte(`{"id":"a-1","name":"notes.txt"}`)
	b, err := s.PutBlob(id, history.Blob{Kind: history.BlobAttachment, Name: "a-1", Meta: meta}, att)
	if err != nil {
		t.Fatal(err)
	}
	if b.Digest != history.Digest(att) || b.Size != int64(len(att)) {
		t.Fatalf("put returned %+v", b)
	}
	got, data := getBlob(t, s, id, history.BlobAttachment, "a-1")
	if !bytes.Equal(data, att) || got.Digest != b.Digest || got.Size != b.Size || !bytes.Equal(got.Meta, meta) {
		t.Fatalf("got %+v %q", got, data)
	}
	// Idempotent: the same bytes again, even with the digest given.
	if _, err := s.PutBlob(id, history.Blob{Kind: history.BlobAttachment, Name: "a-1", Digest: b.Digest, Meta: meta}, att); err != nil {
		t.Fatalf("the same put again: %v", err)
	}
	// Other bytes under the name: refused, the stored ones kept.
	if _, err := s.PutBlob(id, history.Blob{Kind: history.BlobAttachment, Name: "a-1", Meta: meta}, []byte("other")); !errors.Is(err, history.ErrBlobConflict) {
		t.Fatalf("other bytes under a stored name: %v", err)
	}
	if _, data := getBlob(t, s, id, history.BlobAttachment, "a-1"); !bytes.Equal(data, att) {
		t.Fatalf("after a refused put: %q", data)
	}
	// The same bytes under a second name, and an artifact.
	if _, err := s.PutBlob(id, history.Blob{Kind: history.BlobAttachment, Name: "a-2", Meta: meta}, att); err != nil {
		t.Fatal(err)
	}
	art := bytes.Repeat([]byte("output "), 1000)
	if _, err := s.PutBlob(id, history.Blob{Kind: history.BlobArtifact, Name: artifactRef}, art); err != nil {
		t.Fatal(err)
	}
	if _, data := getBlob(t, s, id, history.BlobArtifact, artifactRef); !bytes.Equal(data, art) {
		t.Fatalf("artifact read back: %d bytes, want %d", len(data), len(art))
	}
	list, err := s.ListBlobs(id)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range list {
		names = append(names, fmt.Sprintf("%s/%s/%d/%s", b.Kind, b.Name, b.Size, b.Digest[:8]))
	}
	want := []string{
		fmt.Sprintf("artifact/%s/%d/%s", artifactRef, len(art), history.Digest(art)[:8]),
		fmt.Sprintf("attachment/a-1/%d/%s", len(att), history.Digest(att)[:8]),
		fmt.Sprintf("attachment/a-2/%d/%s", len(att), history.Digest(att)[:8]),
	}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("listed\n%s\nwant\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
	// Deleting one name keeps the bytes the other still names.
	if err := s.DeleteBlob(id, history.BlobAttachment, "a-1"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.GetBlob(id, history.BlobAttachment, "a-1"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a deleted blob reads: %v", err)
	}
	if _, data := getBlob(t, s, id, history.BlobAttachment, "a-2"); !bytes.Equal(data, att) {
		t.Fatalf("the second name lost its bytes: %q", data)
	}
	if err := s.DeleteBlob(id, history.BlobAttachment, "a-1"); err != nil {
		t.Fatalf("deleting a missing blob: %v", err)
	}
	// And the name can hold other bytes once it is free again.
	if _, err := s.PutBlob(id, history.Blob{Kind: history.BlobAttachment, Name: "a-1", Meta: meta}, []byte("new")); err != nil {
		t.Fatalf("put after delete: %v", err)
	}
}

// testBlobsRefused: hostile puts and reads get clear errors and store
// nothing.
func testBlobsRefused(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uniqueID(t)
	withArtifact(t, s, id)
	a := func(name string) history.Blob {
		return history.Blob{Kind: history.BlobAttachment, Name: name, Meta: []byte("{}")}
	}
	cases := []struct {
		name string
		b    history.Blob
		data []byte
		want error
		says string
	}{
		{"oversize attachment", a("a-big"), make([]byte, history.MaxAttachmentBytes+1), history.ErrBlobTooLarge, fmt.Sprint(history.MaxAttachmentBytes)},
		{"oversize artifact", history.Blob{Kind: history.BlobArtifact, Name: artifactRef}, make([]byte, history.MaxArtifactBytes+1), history.ErrBlobTooLarge, fmt.Sprint(history.MaxArtifactBytes)},
		{"path traversal", a("../../etc/passwd"), []byte("x"), history.ErrBlobName, "passwd"},
		{"separator", a("a/b"), []byte("x"), history.ErrBlobName, "a/b"},
		{"hidden", a(".a"), []byte("x"), history.ErrBlobName, ".a"},
		{"empty name", a(""), []byte("x"), history.ErrBlobName, "attachment"},
		{"NUL", a("a\x00b"), []byte("x"), history.ErrBlobName, "attachment"},
		{"artifact not hex", history.Blob{Kind: history.BlobArtifact, Name: "../" + artifactRef[3:]}, []byte("x"), history.ErrBlobName, "32 lowercase hex"},
		{"unknown kind", history.Blob{Kind: "secret", Name: "a-1"}, []byte("x"), history.ErrBlobName, "secret"},
		{"attachment without description", history.Blob{Kind: history.BlobAttachment, Name: "a-1"}, []byte("x"), history.ErrBlobMeta, "a-1"},
		{"wrong digest", history.Blob{Kind: history.BlobAttachment, Name: "a-1", Meta: []byte("{}"), Digest: history.Digest([]byte("y"))}, []byte("x"), history.ErrBlobDigest, history.Digest([]byte("x"))},
	}
	for _, tc := range cases {
		_, err := s.PutBlob(id, tc.b, tc.data)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: put says %v, want %v mentioning %q", tc.name, err, tc.want, tc.says)
		}
		if tc.want != history.ErrBlobName {
			if _, _, err := s.GetBlob(id, tc.b.Kind, tc.b.Name); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s: a refused put left something: %v", tc.name, err)
			}
		} else if _, _, err := s.GetBlob(id, tc.b.Kind, tc.b.Name); !errors.Is(err, history.ErrBlobName) {
			t.Errorf("%s: get says %v, want %v", tc.name, err, history.ErrBlobName)
		}
	}
	if _, _, err := s.GetBlob(id, history.BlobAttachment, "a-unknown"); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "a-unknown") {
		t.Errorf("unknown name: %v", err)
	}
	if _, _, err := s.GetBlob(id, history.BlobArtifact, strings.Repeat("f", 32)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("unknown artifact: %v", err)
	}
	if err := s.DeleteBlob(id, history.BlobAttachment, "../x"); !errors.Is(err, history.ErrBlobName) {
		t.Errorf("delete of a bad name: %v", err)
	}
	if _, err := s.PutBlob(uniqueID(t)+"-none", a("a-1"), []byte("x")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("put to a conversation that does not exist: %v", err)
	}
	if _, err := s.PutBlob("../escape", a("a-1"), []byte("x")); err == nil {
		t.Error("put to a conversation id that is a path: no error")
	}
}

// testBlobsDeleted: deleting a conversation deletes its blobs.
func testBlobsDeleted(t *testing.T, h Harness) {
	s := newStore(t, h)
	id, other := uniqueID(t), uniqueID(t)+"-other"
	withArtifact(t, s, id)
	withArtifact(t, s, other)
	for _, c := range []string{id, other} {
		if _, err := s.PutBlob(c, history.Blob{Kind: history.BlobAttachment, Name: "a-1", Meta: []byte("{}")}, []byte("att "+c)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.PutBlob(id, history.Blob{Kind: history.BlobArtifact, Name: artifactRef}, []byte("art")); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(id); err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct {
		kind history.BlobKind
		name string
	}{{history.BlobAttachment, "a-1"}, {history.BlobArtifact, artifactRef}} {
		if _, _, err := s.GetBlob(id, k.kind, k.name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s %s after the conversation was deleted: %v", k.kind, k.name, err)
		}
	}
	if list, err := s.ListBlobs(id); err != nil || len(list) != 0 {
		t.Errorf("blobs listed after delete: %v %v", list, err)
	}
	if _, data := getBlob(t, s, other, history.BlobAttachment, "a-1"); string(data) != "att "+other {
		t.Errorf("another conversation's attachment: %q", data)
	}
}

// testBlobsRacing: puts racing for one name: the same bytes all succeed;
// different bytes, exactly one wins and the others are refused as
// conflicts, and the name holds the winner's bytes.
func testBlobsRacing(t *testing.T, h Harness) {
	s := newStore(t, h)
	id := uniqueID(t)
	withArtifact(t, s, id)
	const n = 8
	race := func(name string, data func(i int) []byte) []error {
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = s.PutBlob(id, history.Blob{Kind: history.BlobAttachment, Name: name, Meta: []byte("{}")}, data(i))
			}()
		}
		wg.Wait()
		return errs
	}
	for i, err := range race("a-same", func(int) []byte { return []byte("same bytes") }) {
		if err != nil {
			t.Errorf("put %d of the same bytes: %v", i, err)
		}
	}
	winner := -1
	for i, err := range race("a-differ", func(i int) []byte { return []byte(fmt.Sprintf("bytes %d", i)) }) {
		switch {
		case err == nil && winner < 0:
			winner = i
		case err == nil:
			t.Errorf("puts %d and %d of different bytes both succeeded", winner, i)
		case !errors.Is(err, history.ErrBlobConflict):
			t.Errorf("put %d: %v, want a conflict", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no put won")
	}
	if _, data := getBlob(t, s, id, history.BlobAttachment, "a-differ"); string(data) != fmt.Sprintf("bytes %d", winner) {
		t.Fatalf("the name holds %q, the winner put %q", data, fmt.Sprintf("bytes %d", winner))
	}
}
