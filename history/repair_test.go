package history

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Lines a damaged log gains in the repair tests.
const (
	tornLine     = `{"type":"ui-append","at":"2026-03-04T05:`
	rejectedLine = `{"type":"ui-append","at":"2026-03-04T05:06:30.000Z","entries":[{"id":"x1","content":{"kind":"bogus"},"timestamp":"2026-03-04T05:06:30.000Z"}]}`
	unknownLine  = `{"type":"future-thing","at":"2026-03-04T05:06:31.000Z","n":1}`
	garbageLine  = `not a record`
)

func appendRaw(t *testing.T, path, s string) {
	t.Helper()
	f, err := openAppend(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// damagedLog writes, through the real writer, a log that a crash tore
// (the fragment then re-terminated by the next save, as documented), that
// gained a rejected record, an unreadable line and a record of a type this
// folio does not know, and that ends in a torn line again.
func damagedLog(t *testing.T) string {
	t.Helper()
	path := logPath(t)
	l := open(t, path)
	d := doc(t, user("u1", "hello"), agent("a1", "hi"))
	if err := l.Save(d, msgs("hello", "hi")); err != nil {
		t.Fatal(err)
	}
	l.Close()
	appendRaw(t, path, tornLine)
	l = open(t, path)
	if _, err := l.Load(); err != nil {
		t.Fatal(err)
	}
	d = appendAll(t, d, user("u2", "more"), agent("a2", "done"))
	if err := l.Save(d, msgs("hello", "hi", "more", "done")); err != nil {
		t.Fatal(err)
	}
	if err := l.SetTitle("Greetings"); err != nil {
		t.Fatal(err)
	}
	l.Close()
	appendRaw(t, path, rejectedLine+"\n"+garbageLine+"\n"+unknownLine+"\n"+tornLine)
	return path
}

// A repair keeps every record the reader accepted and every record of an
// unknown type, moves every other line, byte for byte, to the side file,
// and leaves a log that reads the same with no problem but the unknown
// record; a second repair changes nothing.
func TestRepairMovesWhatItCannotKeep(t *testing.T) {
	t.Parallel()
	path := damagedLog(t)
	old := readFile(t, path)
	before, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(problemsOf(before, ProblemUnreadable)) + len(problemsOf(before, ProblemRejected)); n != 3 {
		t.Fatalf("the damaged log has %d unreadable or rejected lines, want 3: %v", n, before.Problems)
	}
	l := open(t, path)
	res, err := l.Repair()
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	after, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sameConv(t, after, before, "repaired")
	if after.Title != "Greetings" {
		t.Errorf("title %q", after.Title)
	}
	for _, p := range after.Problems {
		if p.Kind != ProblemUnknown {
			t.Errorf("problem left after repair: %v", p)
		}
	}
	side := readFile(t, RemovedPath(path))
	wantSide := tornLine + "\n" + rejectedLine + "\n" + garbageLine + "\n" + tornLine + "\n"
	if string(side) != wantSide {
		t.Errorf("side file:\n%s\nwant:\n%s", side, wantSide)
	}
	if len(res.Moved) != 4 || res.Side != RemovedPath(path) || res.MovedBytes != int64(len(side)) || res.After != int64(len(readFile(t, path))) {
		t.Errorf("result %+v", res)
	}
	// Every line of the old log is in the new one or in the side file, in
	// order; the only bytes added are the newlines ending the torn line.
	newLog := readFile(t, path)
	var merged []string
	oldLines := strings.SplitAfter(string(old), "\n")
	kept, moved := strings.SplitAfter(string(newLog), "\n"), strings.SplitAfter(string(side), "\n")
	for _, ol := range oldLines {
		switch {
		case len(kept) > 0 && kept[0] == ol:
			merged, kept = append(merged, kept[0]), kept[1:]
		case len(moved) > 0 && strings.TrimSuffix(moved[0], "\n") == strings.TrimSuffix(ol, "\n"):
			merged, moved = append(merged, ol), moved[1:]
		}
	}
	if strings.Join(merged, "") != string(old) || !bytes.Contains(newLog, []byte(unknownLine+"\n")) {
		t.Errorf("old log not accounted for:\nold:\n%s\nnew:\n%s\nside:\n%s", old, newLog, side)
	}

	// Healthy now: a second repair is a no-op.
	l = open(t, path)
	res, err = l.Repair()
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if len(res.Moved) != 0 || !bytes.Equal(readFile(t, path), newLog) || !bytes.Equal(readFile(t, RemovedPath(path)), side) {
		t.Errorf("second repair: %+v", res)
	}
}

// A healthy log is left alone: same bytes, no side file.
func TestRepairHealthyLogIsANoOp(t *testing.T) {
	t.Parallel()
	_, path := titledLog(t, "Fine")
	old := readFile(t, path)
	fi, _ := os.Stat(path)
	l := open(t, path)
	res, err := l.Repair()
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	fi2, _ := os.Stat(path)
	if len(res.Moved) != 0 || res.Side != "" || !bytes.Equal(readFile(t, path), old) || !os.SameFile(fi, fi2) {
		t.Errorf("repair of a healthy log: %+v", res)
	}
	if _, err := os.Stat(RemovedPath(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("side file of a healthy log: %v", err)
	}
}

// A crash at any step of a repair leaves the old log or the repaired one,
// and when the repaired one, the side file holds what was moved.
func TestRepairCrashLeavesOldOrNew(t *testing.T) {
	// Not parallel: repairHook is package state.
	ref := damagedLog(t)
	l := open(t, ref)
	if _, err := l.Repair(); err != nil {
		t.Fatal(err)
	}
	l.Close()
	repaired, side := readFile(t, ref), readFile(t, RemovedPath(ref))

	for _, step := range []string{"side", "replaced"} {
		path := damagedLog(t)
		old := readFile(t, path)
		type crash struct{}
		repairHook = func(s string) {
			if s == step {
				panic(crash{})
			}
		}
		l := open(t, path)
		func() {
			defer func() {
				if r := recover(); r != (crash{}) {
					t.Fatalf("step %s: %v", step, r)
				}
			}()
			l.Repair()
		}()
		l.Close() // the process is gone: its lock with it
		repairHook = nil
		got := readFile(t, path)
		switch {
		case bytes.Equal(got, old):
		case bytes.Equal(got, repaired):
			if !bytes.Equal(readFile(t, RemovedPath(path)), side) {
				t.Errorf("step %s: the new log is in place without the moved lines in the side file", step)
			}
		default:
			t.Errorf("step %s: the log is neither the old one nor the repaired one:\n%s", step, got)
		}
		// The next repair finishes the job.
		l = open(t, path)
		if _, err := l.Repair(); err != nil {
			t.Fatalf("step %s: repair after the crash: %v", step, err)
		}
		l.Close()
		if !bytes.Equal(readFile(t, path), repaired) {
			t.Errorf("step %s: repair after the crash left\n%s", step, readFile(t, path))
		}
	}

	// A replacement that fails (its temporary file cannot be made) changes
	// nothing in the log.
	path := damagedLog(t)
	old := readFile(t, path)
	if err := os.Mkdir(path+".tmp", 0o700); err != nil {
		t.Fatal(err)
	}
	l = open(t, path)
	if _, err := l.Repair(); err == nil {
		t.Error("repair with an unwritable temporary file succeeded")
	}
	l.Close()
	if !bytes.Equal(readFile(t, path), old) {
		t.Error("a failed repair changed the log")
	}
}

// Deleting a repaired conversation deletes the side file its repair wrote
// beside the log: nothing of it stays behind in the data folder.
func TestDeleteRemovesTheRepairSideFile(t *testing.T) {
	t.Parallel()
	path := damagedLog(t)
	l := open(t, path)
	res, err := l.Repair()
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	if res.Side != RemovedPath(path) {
		t.Fatalf("the repair wrote its side file to %q, want %q", res.Side, RemovedPath(path))
	}
	if _, err := os.Stat(res.Side); err != nil {
		t.Fatal(err)
	}
	data := filepath.Dir(filepath.Dir(path))
	if err := (Files{Dir: data}).Delete("c1"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{path, res.Side} {
		if _, err := os.Stat(q); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s after the delete: %v", q, err)
		}
	}
	if left, _ := os.ReadDir(filepath.Dir(path)); len(left) > 0 {
		t.Errorf("the conversations folder still holds %v", left)
	}
}
