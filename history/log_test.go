package history

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

func TestSaveCreatesLogWithModes(t *testing.T) {
	t.Parallel()
	path := logPath(t)
	l := open(t, path)
	d := doc(t, user("u1", "hi"), agent("a1", "hello"))
	if err := l.Save(d, msgs("hi", "hello")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("log mode %v, want 0600", fi.Mode().Perm())
	}
	for _, dir := range []string{filepath.Dir(path), filepath.Dir(filepath.Dir(path))} {
		di, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if di.Mode().Perm() != 0o700 {
			t.Errorf("%s mode %v, want 0700", dir, di.Mode().Perm())
		}
	}
	data := readFile(t, path)
	if !strings.HasPrefix(string(data), `{"type":"conversation","version":3,"conversationId":"c1","startedAt":"2026-03-04T05:06:`) {
		t.Errorf("header: %s", lines(data)[0])
	}
	if got, want := strings.Join(recordTypes(data), ","), "message,message,ui-append"; got != want {
		t.Errorf("records %s, want %s", got, want)
	}
	c := readConv(t, data)
	sameDoc(t, c.Document, d)
	if len(c.Messages) != 2 || c.Messages[1].Content != "hello" || len(c.Problems) != 0 {
		t.Errorf("messages %+v problems %v", c.Messages, c.Problems)
	}
}

func TestSaveAppendsOnlyWhatIsNew(t *testing.T) {
	t.Parallel()
	path := logPath(t)
	l := open(t, path)
	c, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	d := appendAll(t, c.Document, entries(3, "a")...)
	m := msgs("q", "a")
	if err := l.Save(d, m); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, path)
	// An unchanged save writes nothing.
	if err := l.Save(d, m); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readFile(t, path), before) {
		t.Fatal("unchanged save changed the file")
	}
	d = appendAll(t, d, entries(2, "b")...)
	m = append(m, message.Text(message.User, "more"))
	if err := l.Save(d, m); err != nil {
		t.Fatal(err)
	}
	after := readFile(t, path)
	if !bytes.HasPrefix(after, before) {
		t.Fatal("save rewrote earlier bytes instead of appending")
	}
	if got := strings.Join(recordTypes(after[len(before)-1:]), ","); got != "message,ui-append" {
		// after[len(before)-1:] starts at the newline, so its "first line" is empty.
		t.Errorf("appended records %q", got)
	}
	if !strings.Contains(string(after[len(before):]), `"id":"b0"`) || strings.Contains(string(after[len(before):]), `"id":"a0"`) {
		t.Errorf("append did not carry exactly the new entries: %s", after[len(before):])
	}
	sameDoc(t, readConv(t, after).Document, d)
}

func TestChangedEarlierFactWritesSnapshot(t *testing.T) {
	t.Parallel()
	base := entries(4, "e")
	cases := []struct {
		name   string
		change func(transcript.Document) transcript.Document
	}{
		{"first changed", func(d transcript.Document) transcript.Document {
			d, _ = d.Replace(agent("e0", "rewritten"))
			return d
		}},
		{"earlier changed, last unchanged", func(d transcript.Document) transcript.Document {
			d, _ = d.Replace(agent("e2", "rewritten"))
			return d
		}},
		{"earlier changed, last unchanged, plus new", func(d transcript.Document) transcript.Document {
			d, _ = d.Replace(agent("e1", "rewritten"))
			d, _ = d.Append(user("n", "new"))
			return d
		}},
		{"last changed", func(d transcript.Document) transcript.Document {
			d, _ = d.Replace(agent("e3", "rewritten"))
			return d
		}},
		{"rebuilt equal document", func(d transcript.Document) transcript.Document {
			nd, _ := transcript.NewDocument("c1", d.Entries()[:3])
			nd, _ = nd.Append(agent("e3", "rewritten"))
			return nd
		}},
		{"entry removed", func(d transcript.Document) transcript.Document {
			nd, _ := transcript.NewDocument("c1", d.Entries()[:3])
			return nd
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := logPath(t)
			l := open(t, path)
			d := doc(t, base...)
			if err := l.Save(d, nil); err != nil {
				t.Fatal(err)
			}
			d2 := tc.change(d)
			if err := l.Save(d2, nil); err != nil {
				t.Fatal(err)
			}
			data := readFile(t, path)
			types := recordTypes(data)
			if types[len(types)-1] != TypeUITranscript {
				t.Fatalf("records %v: want a ui-transcript last", types)
			}
			sameDoc(t, readConv(t, data).Document, d2)
		})
	}
}

func TestSaveFromAReloadedLogAppends(t *testing.T) {
	t.Parallel()
	path := logPath(t)
	l := open(t, path)
	if err := l.Save(doc(t, entries(3, "a")...), nil); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l = open(t, path)
	c, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	d := appendAll(t, c.Document, user("u", "next"))
	if err := l.Save(d, nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(recordTypes(readFile(t, path)), ","); got != "ui-append,ui-append" {
		t.Errorf("records %s", got)
	}
}

func TestDuplicateIDsRejectedBeforeTheLogExists(t *testing.T) {
	t.Parallel()
	path := logPath(t)
	l := open(t, path)
	err := l.SaveEntries([]transcript.Entry{user("x", "a"), agent("y", "b"), agent("x", "c")}, nil)
	if !errors.Is(err, ErrDuplicateID) || !strings.Contains(err.Error(), `"x"`) {
		t.Fatalf("got %v, want ErrDuplicateID naming x", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("log exists after a rejected save: %v", err)
	}
	// Same for an existing log: nothing is touched.
	if err := l.SaveEntries([]transcript.Entry{user("x", "a")}, nil); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, path)
	if err := l.SaveEntries([]transcript.Entry{user("x", "a"), user("z", "1"), user("z", "2")}, nil); !errors.Is(err, ErrDuplicateID) {
		t.Fatalf("got %v", err)
	}
	if !bytes.Equal(readFile(t, path), before) {
		t.Fatal("rejected save touched the log")
	}
}

func TestInvalidMessageRejectedBeforeWriting(t *testing.T) {
	t.Parallel()
	path := logPath(t)
	l := open(t, path)
	err := l.Save(doc(t, user("u", "x")), []message.Message{{Role: "system", Content: "x"}})
	if !errors.Is(err, ErrInvalidMessage) {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("log created by a rejected save")
	}
}

func TestMessagesReplacedWriteRewrite(t *testing.T) {
	t.Parallel()
	path := logPath(t)
	l := open(t, path)
	if err := l.Save(doc(t), msgs("1", "2", "3")); err != nil {
		t.Fatal(err)
	}
	compacted := []message.Message{message.Text(message.User, "summary of 1-3")}
	if err := l.Save(doc(t), compacted); err != nil {
		t.Fatal(err)
	}
	data := readFile(t, path)
	if got := strings.Join(recordTypes(data), ","); got != "message,message,message,rewrite,message" {
		t.Errorf("records %s", got)
	}
	c := readConv(t, data)
	if len(c.Messages) != 1 || c.Messages[0].Content != "summary of 1-3" {
		t.Errorf("messages after rewrite: %+v", c.Messages)
	}
}

func TestSetTitleAndMeta(t *testing.T) {
	t.Parallel()
	path := logPath(t)
	l := open(t, path)
	if err := l.SetTitle("Trip plans"); err != nil {
		t.Fatal(err)
	}
	c := readConv(t, readFile(t, path))
	if c.Title != "Trip plans" || c.UpdatedAt.IsZero() {
		t.Errorf("title %q updated %v", c.Title, c.UpdatedAt)
	}
	// endedAt, the time of a version 2 save, does not date the
	// conversation: the latest record's at does.
	c = readConv(t, logOf(v3Header, `{"type":"meta","at":"2026-03-04T05:06:08.000Z","title":"Old","endedAt":"2026-05-01T00:00:00.000Z"}`))
	if c.Title != "Old" || c.UpdatedAt.UTC().Format("2006-01-02T15:04:05Z") != "2026-03-04T05:06:08Z" {
		t.Errorf("endedAt: title %q updated %v", c.Title, c.UpdatedAt)
	}
}

func TestNewerVersionRefusedForReadAndWrite(t *testing.T) {
	t.Parallel()
	path := logPath(t)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	data := logOf(`{"type":"conversation","version":4,"conversationId":"c1","startedAt":"2026-03-04T05:06:07.000Z","branches":{}}`,
		`{"type":"ui-append","at":"2026-03-04T05:06:08.000Z","entries":[]}`)
	data = append(data, `{"type":"partial`...) // even a torn tail is left alone
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrNewerVersion) {
			t.Fatalf("%s: got %v, want ErrNewerVersion", what, err)
		}
		if msg := err.Error(); !strings.Contains(msg, "newer folio") || !strings.Contains(msg, "update") || !strings.Contains(msg, "version 4") {
			t.Fatalf("%s: message %q does not say newer folio / update / version", what, msg)
		}
		if !bytes.Equal(readFile(t, path), data) {
			t.Fatalf("%s changed the file", what)
		}
	}
	_, err := Read(bytes.NewReader(data))
	check("Read", err)
	l := open(t, path)
	_, err = l.Load()
	check("Load", err)
	check("Save", l.Save(doc(t, user("u", "x")), msgs("x")))
	check("SetTitle", l.SetTitle("t"))
	_, err = l.Upgrade()
	check("Upgrade", err)
	_, err = l.Compact()
	check("Compact", err)
}

func TestTornLastLine(t *testing.T) {
	t.Parallel()
	path := logPath(t)
	l := open(t, path)
	d := doc(t, entries(2, "a")...)
	if err := l.Save(d, msgs("q")); err != nil {
		t.Fatal(err)
	}
	l.Close()
	complete := readFile(t, path)
	torn := append(bytes.Clone(complete), `{"type":"ui-append","at":"2026-03-04T05:06:09.000Z","entries":[{"id":"zz","con`...)
	if err := os.WriteFile(path, torn, 0o600); err != nil {
		t.Fatal(err)
	}
	c := readConv(t, torn)
	sameDoc(t, c.Document, d)
	if p := problemsOf(c, ProblemTorn); len(p) != 1 || p[0].Line != 4 || len(c.Problems) != 1 {
		t.Fatalf("problems %v, want one torn line 4", c.Problems)
	}
	if len(c.Unknown) != 0 {
		t.Fatalf("torn line reported as unknown: %v", c.Unknown)
	}

	l = open(t, path)
	c, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	d2 := appendAll(t, c.Document, user("u", "after the crash"))
	if err := l.Save(d2, c.Messages); err != nil {
		t.Fatal(err)
	}
	after := readFile(t, path)
	if !bytes.HasPrefix(after, append(bytes.Clone(torn), '\n')) {
		t.Fatal("the torn line was not kept and re-terminated")
	}
	c2 := readConv(t, after)
	sameDoc(t, c2.Document, d2)
	if u := problemsOf(c2, ProblemUnreadable); len(u) != 1 || u[0].Line != 4 {
		t.Fatalf("after re-termination the fragment should be one unreadable line 4: %v", c2.Problems)
	}
}

func TestCompleteUnterminatedLastLineIsRead(t *testing.T) {
	t.Parallel()
	data := logOf(v3Header, uiRec(TypeUIAppend, entryJSON(t, user("u", "x"))))
	c := readConv(t, data[:len(data)-1])
	if c.Document.Len() != 1 || len(c.Problems) != 0 {
		t.Fatalf("entries %v problems %v", ids(c.Document), c.Problems)
	}
}

func TestOpenEntriesAreSavedProvisionally(t *testing.T) {
	t.Parallel()
	path := logPath(t)
	l := open(t, path)
	d := doc(t, entries(3, "a")...)
	d, err := d.Open(agent("s", "partial"))
	if err != nil {
		t.Fatal(err)
	}
	d = appendAll(t, d, user("after", "typed while streaming"))
	if err := l.Save(d, nil); err != nil {
		t.Fatal(err)
	}
	data := readFile(t, path)
	if got := strings.Join(recordTypes(data), ","); got != "ui-append,ui-open" {
		t.Fatalf("records %s", got)
	}
	// A crash now keeps the accepted partial text, as settled history.
	c := readConv(t, data)
	sameDoc(t, c.Document, d)
	if c.Document.IsOpen(3) {
		t.Fatal("partial answer read back as open")
	}

	// Streaming more text writes a small ui-open, never a snapshot.
	if d, err = d.Update("s", transcript.Agent{Markdown: "partial answer, longer"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Save(d, nil); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, path)
	if got := strings.Join(recordTypes(before), ","); got != "ui-append,ui-open,ui-open" {
		t.Fatalf("records %s", got)
	}
	sameDoc(t, readConv(t, before).Document, d)
	if err := l.Save(d, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readFile(t, path), before) {
		t.Fatal("an unchanged save while streaming wrote")
	}

	// Settling without changing the text changes nothing a reader sees, so
	// nothing is written; the next open entry settles the tail for good.
	if d, err = d.Settle("s", nil); err != nil {
		t.Fatal(err)
	}
	if err := l.Save(d, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readFile(t, path), before) {
		t.Fatal("settling unchanged text wrote")
	}

	// A log whose tail is provisional: loading it and saving the loaded
	// document writes nothing; continuing from it settles the tail.
	d2, _ := d.Open(agent("s2", "again"))
	if err := l.Save(d2, nil); err != nil {
		t.Fatal(err)
	}
	data = readFile(t, path)
	if got := strings.Join(recordTypes(data), ","); got != "ui-append,ui-open,ui-open,ui-append,ui-open" {
		t.Fatalf("records %s", got)
	}
	sameDoc(t, readConv(t, data).Document, d2)
	l.Close()
	l = open(t, path)
	c, err = l.Load()
	if err != nil {
		t.Fatal(err)
	}
	held := readFile(t, path)
	if err := l.Save(c.Document, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readFile(t, path), held) {
		t.Fatal("saving the loaded document wrote")
	}
	d3 := appendAll(t, c.Document, user("u9", "next"))
	if err := l.Save(d3, nil); err != nil {
		t.Fatal(err)
	}
	data = readFile(t, path)
	if types := recordTypes(data); types[len(types)-1] != TypeUIAppend || strings.Contains(strings.Join(types, ","), TypeUITranscript) {
		t.Fatalf("records %v", types)
	}
	sameDoc(t, readConv(t, data).Document, d3)
}

func TestProvisionalTailRemoved(t *testing.T) {
	t.Parallel()
	path := logPath(t)
	l := open(t, path)
	d := doc(t, entries(2, "a")...)
	open, err := d.Open(agent("s", "partial"))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Save(open, nil); err != nil {
		t.Fatal(err)
	}
	// The open answer is dropped (its document was replaced).
	if err := l.Save(d, nil); err != nil {
		t.Fatal(err)
	}
	data := readFile(t, path)
	if got := strings.Join(recordTypes(data), ","); got != "ui-append,ui-open,ui-open" {
		t.Fatalf("records %s", got)
	}
	sameDoc(t, readConv(t, data).Document, d)
}

func TestProvisionalTailRules(t *testing.T) {
	t.Parallel()
	data := logOf(v3Header,
		uiRec(TypeUIAppend, entryJSON(t, user("a", "1"))),
		uiRec(TypeUIOpen, entryJSON(t, agent("s", "part"))),
		uiRec(TypeUIOpen, entryJSON(t, agent("s", "partial"))),        // replaces the tail
		uiRec(TypeUIOpen, entryJSON(t, agent("a", "dup of settled"))), // rejected: a is settled
		uiRec(TypeUIAppend, entryJSON(t, user("b", "2"))),             // supersedes the tail
	)
	c := readConv(t, data)
	if got := strings.Join(ids(c.Document), ","); got != "a,b" {
		t.Fatalf("document %s", got)
	}
	if rej := problemsOf(c, ProblemRejected); len(rej) != 1 || rej[0].Line != 5 || rej[0].Type != TypeUIOpen {
		t.Fatalf("problems %v", c.Problems)
	}
	c = readConv(t, data[:len(data)-len(uiRec(TypeUIAppend, entryJSON(t, user("b", "2"))))-1])
	if got := strings.Join(ids(c.Document), ","); got != "a,s" || c.Document.At(1).Content.(transcript.Agent).Markdown != "partial" {
		t.Fatalf("with the tail: %s", got)
	}
}
