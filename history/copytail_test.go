package history

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// copyMedium is a log file's medium that keeps a copy of the log in
// another data folder, as a replica keeps a copy of a log in PostgreSQL;
// refresh says whether ReadCopy brings the copy up to the log first.
type copyMedium struct {
	Medium
	path, copy string
	refresh    bool
	fail       error // returned by ReadCopy when set
	reads      int   // Read calls
	copies     int   // ReadCopy calls whose read succeeded
}

func (m *copyMedium) Read() ([]byte, error) {
	m.reads++
	return m.Medium.Read()
}

func (m *copyMedium) ReadCopy(read func(path string, size int64) error) error {
	if m.fail != nil {
		return m.fail
	}
	data, err := os.ReadFile(m.path)
	if err != nil {
		return err
	}
	if m.refresh {
		if err := os.WriteFile(m.copy, data, 0o600); err != nil {
			return err
		}
	}
	if err := read(m.copy, int64(len(data))); err != nil {
		return err
	}
	m.copies++
	return nil
}

// TestLoadTailThroughACopy: LoadTail on a CopyMedium reads through the
// copy's index when the copy is the log, and otherwise (a copy behind the
// log, a copy the medium cannot give) reads the log; either way it returns
// what a full read of the log returns, and the next save appends to the
// log what it would after a full read.
func TestLoadTailThroughACopy(t *testing.T) {
	cases := []struct {
		name    string
		refresh bool
		fail    error
		copied  bool
	}{
		{"current copy", true, nil, true},
		{"copy behind the log", false, nil, false},
		{"no copy to give", true, errors.New("no copy"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "db", "conversations", "c1.jsonl")
			copyPath := filepath.Join(dir, "replica", "conversations", "c1.jsonl")
			l := open(t, path)
			d := doc(t, entries(100, "e")...)
			if err := l.Save(d, msgs("one", "two")); err != nil {
				t.Fatal(err)
			}
			l.Close()
			writeLog(t, copyPath, readFile(t, path))
			// The log grows after the copy was made.
			l = open(t, path)
			if _, err := l.LoadTail(8, nil); err != nil {
				t.Fatal(err)
			}
			d = appendAll(t, d, user("u-more", "more"))
			if err := l.Save(d, msgs("one", "two", "more")); err != nil {
				t.Fatal(err)
			}
			l.Close()

			// A full read of a copy of the log, and (from another such
			// read, since a save caches in the document) the bytes a
			// save after it appends.
			full := func() (*Log, *Conversation, string) {
				p := filepath.Join(t.TempDir(), "c1.jsonl")
				writeLog(t, p, readFile(t, path))
				m, err := openFile(p)
				if err != nil {
					t.Fatal(err)
				}
				l := OpenMedium(m, "c1", WithClock(clock()))
				t.Cleanup(func() { l.Close() })
				st, _, err := l.readWith(func(data []byte) (*reader, error) { return parseTail(data, 8, nil) })
				if err != nil {
					t.Fatal(err)
				}
				return l, st.conv, p
			}
			_, wantConv, _ := full()
			wl, wc, wp := full()
			if err := wl.Save(appendAll(t, wc.Document, agent("a-after", "after")), wc.Messages); err != nil {
				t.Fatal(err)
			}
			wantLog := readFile(t, wp)

			fm, err := openFile(path)
			if err != nil {
				t.Fatal(err)
			}
			m := &copyMedium{Medium: fm, path: path, copy: copyPath, refresh: tc.refresh, fail: tc.fail}
			l = OpenMedium(m, "c1", WithClock(clock()))
			defer l.Close()
			c, err := l.LoadTail(8, nil)
			if err != nil {
				t.Fatal(err)
			}
			if through := m.copies == 1 && m.reads == 0; through != tc.copied {
				t.Fatalf("%d reads through the copy, %d of the log; want through the copy: %v", m.copies, m.reads, tc.copied)
			}
			if !reflect.DeepEqual(c, wantConv) {
				t.Fatalf("LoadTail gave\n%+v\na full read gives\n%+v", c, wantConv)
			}
			if err := l.Save(appendAll(t, c.Document, agent("a-after", "after")), c.Messages); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, path); !bytes.Equal(got, wantLog) {
				t.Fatalf("the save after LoadTail wrote\n%s\nafter a full read it writes\n%s", got, wantLog)
			}
		})
	}
}
