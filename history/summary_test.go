package history

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

// titledLog writes a closed log of three entries and one message, titled
// title, in a fresh data folder.
func titledLog(t *testing.T, title string) (data, path string) {
	t.Helper()
	data = t.TempDir()
	path, _ = Path(data, "c1")
	l := open(t, path)
	if err := l.Save(doc(t, entries(3, "a")...), msgs("q")); err != nil {
		t.Fatal(err)
	}
	if err := l.SetTitle(title); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return data, path
}

// truth is what List must report for the log at path: a full read of it.
func truth(t testing.TB, path string) Summary {
	t.Helper()
	s := Summary{ID: idFromPath(path), Path: path}
	c, err := ReadFile(path)
	if err != nil {
		s.Err = err
		return s
	}
	s.ID, s.Title, s.Entries, s.Messages = c.Header.ConversationID, DisplayTitle(c.Title, c.Messages), c.Document.Len(), len(c.Messages)
	s.Problems, s.Version, s.UpdatedAt = len(c.Problems), c.Header.Version, c.UpdatedAt
	return s
}

func sameSummary(a, b Summary) bool {
	return a.ID == b.ID && a.Path == b.Path && a.Title == b.Title && a.Entries == b.Entries &&
		a.Messages == b.Messages && a.Problems == b.Problems && a.Version == b.Version &&
		a.UpdatedAt.Equal(b.UpdatedAt) && (a.Err == nil) == (b.Err == nil)
}

// cached is what the summary beside path says, if it matches the log.
func cached(t testing.TB, path string) (Summary, bool) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := cachedSummary(path, fi)
	return Summary{ID: c.ConversationID, Path: path, Title: c.Title, Entries: c.Entries, Messages: c.Messages,
		Problems: c.Problems, Version: c.Version, UpdatedAt: c.UpdatedAt}, ok
}

// checkSummary fails unless the writer left a summary that matches the log
// and says exactly what a full read says.
func checkSummary(t *testing.T, path, step string) {
	t.Helper()
	got, ok := cached(t, path)
	if !ok {
		t.Fatalf("%s: no matching summary", step)
	}
	if want := truth(t, path); !sameSummary(got, want) {
		t.Fatalf("%s: summary %+v\nfull read %+v", step, got, want)
	}
	mode, err := statMode(SummaryPath(path))
	if err != nil || mode.Perm() != 0o600 {
		t.Fatalf("%s: summary mode %v, %v", step, mode, err)
	}
}

func listOnly(t *testing.T, data string) Summary {
	t.Helper()
	got, err := List(data)
	if err != nil || len(got) != 1 {
		t.Fatalf("List = %+v, %v", got, err)
	}
	return got[0]
}

// Every kind of write leaves a summary that agrees with a full read.
func TestSummaryFollowsEveryWrite(t *testing.T) {
	t.Parallel()
	path := logPath(t)
	l := open(t, path)
	d := doc(t, entries(3, "a")...)
	m := msgs("q", "a")
	step := func(name string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkSummary(t, path, name)
	}
	step("create", l.Save(d, m))
	d = appendAll(t, d, user("u1", "more"))
	m = append(m, msgs("q2")...)
	step("append", l.Save(d, m))
	open1, err := d.Open(agent("s", "partial"))
	if err != nil {
		t.Fatal(err)
	}
	step("open tail", l.Save(open1, m))
	step("tail gone", l.Save(d, m))
	step("title", l.SetTitle("First"))
	step("empty title", l.SetTitle(""))
	step("snapshot", l.Save(doc(t, user("x", "fresh start")), m))
	step("messages rewritten", l.Save(doc(t, user("x", "fresh start")), msgs("other")))
	b, err := l.Fork(Main, "x", 1, "side")
	step("fork", err)
	_, err = l.SetHead(b)
	step("head", err)
	step("save on branch", l.Save(doc(t, user("x", "fresh start"), agent("y", "branch answer")), msgs("other", "reply")))
	step("title on branch", l.SetTitle("Second"))
	_, err = l.Compact()
	step("compact", err)
	l.Close()

	// A torn last line left by a crash, then a new writer.
	f, err := openAppend(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"message","at":"2026`)
	f.Close()
	l = open(t, path)
	c, err := l.Load()
	step("load torn", err)
	if len(c.Problems) == 0 {
		t.Fatal("torn line not reported")
	}
	step("save after torn", l.Save(appendAll(t, c.Document, user("z", "after crash")), append(c.Messages, msgs("z")...)))
}

func TestSummaryAfterUpgrade(t *testing.T) {
	t.Parallel()
	path := logPath(t)
	writeLog(t, path, legacyLog())
	l := open(t, path)
	c, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	checkSummary(t, path, "load v2")
	if err := l.Save(appendAll(t, c.Document, user("n", "new")), c.Messages); err != nil {
		t.Fatal(err)
	}
	checkSummary(t, path, "save upgrades")
}

// A log whose entries are derived from its messages has no summary from the
// writer (it would have to derive them to count), and still lists right.
func TestDerivedLogListsWithoutSummary(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	path, _ := Path(data, "c1")
	l := open(t, path)
	if err := l.Save(doc(t), msgs("q", "a")); err != nil {
		t.Fatal(err)
	}
	if _, ok := cached(t, path); ok {
		t.Fatal("summary written for a derived document")
	}
	if got, want := listOnly(t, data), truth(t, path); !sameSummary(got, want) {
		t.Fatalf("List %+v, want %+v", got, want)
	}
	checkSummary(t, path, "refreshed by List")
}

// A summary whose size and mtime match the log is what List reports: a
// title no read of the log could produce proves it.
func TestListUsesMatchingSummary(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	path, _ := Path(data, "c1")
	l := open(t, path)
	if err := l.Save(doc(t, entries(2, "a")...), msgs("q")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	ino, ctime := changeStamp(fi)
	writeSummary(SummaryPath(path), summaryFile{Format: summaryFormat, Size: fi.Size(), ModTime: fi.ModTime().UnixNano(),
		Inode: ino, ChangeTime: ctime, Version: 3, ConversationID: "c1", Title: "FROM THE CACHE", Entries: 77, Messages: 5})
	if s := listOnly(t, data); s.Title != "FROM THE CACHE" || s.Entries != 77 || s.Messages != 5 {
		t.Fatalf("List ignored a matching summary: %+v", s)
	}
}

// A log changed behind the writer's back (another tool, an older folio)
// no longer matches its summary: List reads it and refreshes the summary.
func TestListFallsBackWhenLogChanged(t *testing.T) {
	t.Parallel()
	data, path := titledLog(t, "Old")
	checkSummary(t, path, "written")

	// Another program appends a record: the size no longer matches.
	f, err := openAppend(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"meta","at":"2026-03-04T06:00:00.000Z","title":"Changed elsewhere"}` + "\n")
	f.Close()
	if s := listOnly(t, data); s.Title != "Changed elsewhere" || s.Entries != 3 {
		t.Fatalf("after append: %+v", s)
	}
	checkSummary(t, path, "refreshed")

	// Same size, corrupted body, new mtime: still not trusted.
	body := readFile(t, path)
	corrupt := append([]byte(nil), body...)
	copy(corrupt[len(corrupt)-20:], "XXXXXXXXXXXXXXXXXXX\n")
	if err := os.WriteFile(path, corrupt, 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	os.Chtimes(path, later, later)
	want := truth(t, path)
	if want.Title == "Changed elsewhere" || want.Problems == 0 {
		t.Fatalf("corruption did not change the log: %+v", want)
	}
	if got := listOnly(t, data); !sameSummary(got, want) {
		t.Fatalf("after corruption: %+v, want %+v", got, want)
	}
}

// A summary left from a deleted log lists nothing; one left from a log that
// was replaced is ignored.
func TestStraySummariesIgnored(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	path, _ := Path(data, "c1")
	l := open(t, path)
	if err := l.Save(doc(t, entries(4, "a")...), msgs("q")); err != nil {
		t.Fatal(err)
	}
	l.Close()
	stale := readFile(t, SummaryPath(path))
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if got, err := List(data); err != nil || len(got) != 0 {
		t.Fatalf("deleted log listed: %+v, %v", got, err)
	}

	other, _ := Path(t.TempDir(), "c1")
	l2 := open(t, other)
	if err := l2.Save(doc(t, entries(1, "b")...), nil); err != nil {
		t.Fatal(err)
	}
	if err := l2.SetTitle("Replacement"); err != nil {
		t.Fatal(err)
	}
	l2.Close()
	writeLog(t, path, readFile(t, other))
	if err := os.WriteFile(SummaryPath(path), stale, 0o600); err != nil {
		t.Fatal(err)
	}
	if s := listOnly(t, data); s.Title != "Replacement" || s.Entries != 1 {
		t.Fatalf("replaced log listed from the old summary: %+v", s)
	}
}

// Garbage where a summary should be never breaks List and never changes
// what it reports.
func FuzzSummaryFile(f *testing.F) {
	good, _ := json.Marshal(summaryFile{Format: summaryFormat, Size: 10, ModTime: 1, Version: 3, ConversationID: "c1", Entries: 1})
	for _, s := range []string{"", "{}", "null", "[1,2]", `{"format":1,"size":-1}`, string(good), "\x00\xff", `{"format":1,"size":1,"size":2}`} {
		f.Add([]byte(s))
	}
	data := f.TempDir()
	path, _ := Path(data, "c1")
	l, err := Open(path, WithClock(clock()))
	if err != nil {
		f.Fatal(err)
	}
	if err := l.Save(doc(f, entries(2, "a")...), msgs("q")); err != nil {
		f.Fatal(err)
	}
	l.Close()
	want := truth(f, path)
	f.Fuzz(func(t *testing.T, garbage []byte) {
		if err := os.WriteFile(SummaryPath(path), garbage, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := List(data)
		if err != nil || len(got) != 1 || !sameSummary(got[0], want) {
			t.Fatalf("List = %+v, %v; want %+v", got, err, want)
		}
	})
}

// Stray temporary and summary files beside logs are not logs.
func TestListSkipsSummaryFiles(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	path, _ := Path(data, "c1")
	l := open(t, path)
	if err := l.Save(doc(t, entries(1, "a")...), nil); err != nil {
		t.Fatal(err)
	}
	l.Close()
	os.WriteFile(filepath.Join(ConversationsDir(data), "gone.jsonl.summary"), []byte("{}"), 0o600)
	if s := listOnly(t, data); s.ID != "c1" {
		t.Fatalf("listed %+v", s)
	}
}

// A log rewritten in place with the same size and its old mtime put back
// (as a copy that preserves times does) still is not listed from the old
// summary: its status-change time moved, and no program can set that back.
func TestSameSizeAndMtimeStillInvalidates(t *testing.T) {
	t.Parallel()
	data, path := titledLog(t, "Before")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if ino, ctime := changeStamp(fi); ino == 0 && ctime == 0 {
		t.Skip("no inode or change time on this system; size and mtime alone are trusted")
	}
	body := readFile(t, path)
	corrupt := bytes.Replace(body, []byte(`"Before"`), []byte(`"Af ter"`), 1)
	if len(corrupt) != len(body) || bytes.Equal(corrupt, body) {
		t.Fatal("test setup: replacement changed the size or nothing")
	}
	if err := os.WriteFile(path, corrupt, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if s := listOnly(t, data); s.Title != "Af ter" {
		t.Fatalf("listed from a stale summary: %+v", s)
	}
}

// A summary whose stamp matches but whose bytes were changed (a read torn
// by a concurrent rewrite, two rewrites mixed) fails its checksum.
func TestTamperedSummaryIgnored(t *testing.T) {
	t.Parallel()
	data, path := titledLog(t, "Right")
	checkSummary(t, path, "written")
	sum := readFile(t, SummaryPath(path))
	for _, edit := range [][2]string{{`"Right"`, `"Wrong"`}, {`"entries":3`, `"entries":9`}} {
		bad := bytes.Replace(sum, []byte(edit[0]), []byte(edit[1]), 1)
		if bytes.Equal(bad, sum) {
			t.Fatalf("summary lacks %s: %s", edit[0], sum)
		}
		if err := os.WriteFile(SummaryPath(path), bad, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, ok := cached(t, path); ok {
			t.Fatalf("tampered summary trusted: %s", bad)
		}
		if s := listOnly(t, data); s.Title != "Right" || s.Entries != 3 {
			t.Fatalf("listed %+v from %s", s, bad)
		}
	}
}

// A log opened outside a data folder's conversations folder (folio log
// upgrade ~/old.jsonl) gets no summary file beside it.
func TestNoSummaryOutsideADataFolder(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "old.jsonl")
	l := open(t, path)
	if err := l.Save(doc(t, user("u1", "hello")), nil); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(SummaryPath(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("summary beside a log outside a data folder: stat err = %v", err)
	}
	in := logPath(t)
	l = open(t, in)
	if err := l.Save(doc(t, user("u1", "hello")), nil); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, err := os.Stat(SummaryPath(in)); err != nil {
		t.Fatalf("no summary inside a data folder: %v", err)
	}
}
