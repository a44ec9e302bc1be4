package history

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

// lastInstant is the latest "at" of any record in a log and the latest meta
// updatedAt: when the conversation last changed.
func lastInstant(t *testing.T, data []byte) time.Time {
	t.Helper()
	var last time.Time
	for _, l := range lines(data)[1:] {
		var rec struct {
			At        string `json:"at"`
			UpdatedAt string `json:"updatedAt"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		for _, s := range []string{rec.At, rec.UpdatedAt} {
			if at := looseInstant(s); at.After(last) {
				last = at
			}
		}
	}
	if last.IsZero() {
		t.Fatal("the log has no dated record")
	}
	return last
}

// updatedEverywhere checks that every way a listing learns when the log at
// path changed says want: a whole read, a tail read through the page index,
// the listing from the writer's summary, and the listing that reads the
// log because no summary is there.
func updatedEverywhere(t *testing.T, data, path string, want time.Time) {
	t.Helper()
	c, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !c.UpdatedAt.Equal(want) {
		t.Errorf("whole read: updated %v, want %v", c.UpdatedAt, want)
	}
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := l.LoadTail(1, nil)
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !tc.UpdatedAt.Equal(want) {
		t.Errorf("tail read: updated %v, want %v", tc.UpdatedAt, want)
	}
	for _, how := range []string{"summary", "read"} {
		if how == "read" {
			if err := os.Remove(SummaryPath(path)); err != nil {
				t.Fatal(err)
			}
		}
		list, err := List(data)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || !list[0].UpdatedAt.Equal(want) {
			t.Errorf("listing from the %s: %+v, want updated %v", how, list, want)
		}
	}
}

// A conversation is "updated" when it last changed: a title set after the
// first prompt does not pin it there while the conversation goes on.
func TestUpdatedIsTheLastChange(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	path, _ := Path(data, "c1")
	l := open(t, path)
	d := doc(t, user("u1", "help"))
	if err := l.Save(d, msgs("help")); err != nil {
		t.Fatal(err)
	}
	if err := l.SetTitle("Help"); err != nil {
		t.Fatal(err)
	}
	titled := lastInstant(t, readFile(t, path))
	d = appendAll(t, d, agent("a1", "sure"), user("u2", "more"), agent("a2", "done"))
	if err := l.Save(d, msgs("help", "sure", "more", "done")); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	want := lastInstant(t, readFile(t, path))
	if !want.After(titled) {
		t.Fatalf("the log's last change %v is not after the title's %v", want, titled)
	}
	updatedEverywhere(t, data, path, want)
}

// Jazz's logs keep Jazz's rule: the newest record's at, or a meta
// updatedAt Jazz wrote later than any record.
func TestUpdatedOfJazzLogs(t *testing.T) {
	t.Parallel()
	for name, log := range jazzFixtures(t) {
		if c := readConv(t, log); c.Header.Version != Version || len(lines(log)) < 2 {
			continue // a version 2 or header-only log: no index to read a tail through
		}
		t.Run(filepath.Base(name), func(t *testing.T) {
			data := t.TempDir()
			path := jazzLog(t, data, "coder", "c1", log)
			updatedEverywhere(t, data, path, lastInstant(t, log))
		})
	}
	// A meta updatedAt later than every record dates the conversation.
	log := readFile(t, "export/testdata/jazz/title-meta-wins.jsonl")
	log = append(log, `{"type":"meta","at":"2026-08-01T10:00:03.000Z","updatedAt":"2026-08-02T09:00:00.000Z"}`+"\n"...)
	data := t.TempDir()
	path := jazzLog(t, data, "coder", "c1", log)
	updatedEverywhere(t, data, path, time.Date(2026, 8, 2, 9, 0, 0, 0, time.UTC))
}

// A listing summary that an earlier folio wrote with the title's time as
// "updated" is not trusted, though it still matches the file.
func TestOldSummaryFormatIsRead(t *testing.T) {
	t.Parallel()
	data, path := titledLog(t, "Trip")
	want := lastInstant(t, readFile(t, path))
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	ino, ctime := changeStamp(fi)
	writeSummary(SummaryPath(path), summaryFile{Format: 3, Size: fi.Size(), ModTime: fi.ModTime().UnixNano(), Inode: ino,
		ChangeTime: ctime, Version: Version, ConversationID: "c1", Title: "Trip", Entries: 3, Messages: 1, UpdatedAt: t0})
	list, err := List(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || !list[0].UpdatedAt.Equal(want) {
		t.Errorf("listing %+v, want updated %v", list, want)
	}
}
