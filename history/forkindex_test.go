package history

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/foliodev/folio/internal/gen"
)

// plainMedium hides a file medium's type, so a Log on it reads the log
// whole where a file log would use its page index.
type plainMedium struct{ Medium }

// Fork and SetHeadTail on a file log, and on a medium that keeps a local
// copy of its log (a replica's), check the fork point and the branches and
// load the new head's tail through the page index, without reading the
// log whole, and do exactly
// what they do on a log read whole: the same refusals, the same records,
// the same conversation afterwards.
func TestForkThroughTheIndex(t *testing.T) {
	t.Run("file", func(t *testing.T) {
		forkThroughTheIndex(t, func(path string) *Log {
			l, err := Open(path, WithClock(clock()))
			if err != nil {
				t.Fatal(err)
			}
			return l
		})
	})
	t.Run("copy", func(t *testing.T) {
		forkThroughTheIndex(t, func(path string) *Log {
			m, err := openFile(path)
			if err != nil {
				t.Fatal(err)
			}
			cp := logPath(t)
			if err := os.MkdirAll(filepath.Dir(cp), 0o700); err != nil {
				t.Fatal(err)
			}
			return OpenMedium(&copyMedium{Medium: m, path: path, copy: cp, refresh: true}, "c1", WithClock(clock()))
		})
	})
}

func forkThroughTheIndex(t *testing.T, open func(path string) *Log) {
	type fork struct {
		parent, after string
		msgs          int
	}
	indexed, plain := logPath(t), logPath(t)
	writeGen(t, indexed, gen.Options{Messages: 400, Seed: 5, Summaries: true})
	writeLog(t, plain, readFile(t, indexed))
	checkIndex(t, indexed)

	a := open(indexed)
	defer a.Close()
	m, err := openFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	b := OpenMedium(plainMedium{m}, "c1", WithClock(clock()))
	defer b.Close()
	ca, err := a.LoadTail(16, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.LoadTail(16, nil); err != nil {
		t.Fatal(err)
	}
	whole, err := ReadFile(indexed)
	if err != nil {
		t.Fatal(err)
	}
	doc := whole.Document
	mid, late := doc.At(doc.Len()/2).ID, doc.At(doc.Len()-3).ID
	n := len(ca.Messages)

	steps := []struct {
		fork fork
		head string // then SetHeadTail to it ("" for none)
	}{
		{fork{Main, late, n - 1}, "b1"},
		{fork{Main, mid, 0}, ""},
		{fork{"b1", late, 1}, "b3"},
		{fork{"nope", late, 0}, ""},
		{fork{Main, "no-such-entry", 0}, ""},
		{fork{Main, late, n + 1}, ""},
		{fork{Main, late, -1}, ""},
		{fork{Main, "", 0}, Main},
		{fork{"b3", "", 0}, "nope"},
	}
	for i, s := range steps {
		reads := wholeReads.Load()
		ida, erra := a.Fork(s.fork.parent, s.fork.after, s.fork.msgs, fmt.Sprint("step ", i))
		if got := wholeReads.Load() - reads; got != 0 {
			t.Fatalf("step %d: Fork read the log whole %d times", i, got)
		}
		idb, errb := b.Fork(s.fork.parent, s.fork.after, s.fork.msgs, fmt.Sprint("step ", i))
		if ida != idb || fmt.Sprint(erra) != fmt.Sprint(errb) {
			t.Fatalf("step %d: Fork through the index: %q %v; read whole: %q %v", i, ida, erra, idb, errb)
		}
		if erra != nil && !errors.Is(erra, ErrUnknownBranch) && !errors.Is(erra, ErrForkPoint) {
			t.Fatalf("step %d: %v, want ErrUnknownBranch or ErrForkPoint", i, erra)
		}
		if s.head == "" {
			continue
		}
		reads = wholeReads.Load()
		ca, erra := a.SetHeadTail(s.head, 16, nil)
		if got := wholeReads.Load() - reads; got != 0 {
			t.Fatalf("step %d: SetHeadTail read the log whole %d times", i, got)
		}
		cb, errb := b.SetHeadTail(s.head, 16, nil)
		if fmt.Sprint(erra) != fmt.Sprint(errb) {
			t.Fatalf("step %d: SetHeadTail through the index: %v; read whole: %v", i, erra, errb)
		}
		if erra != nil {
			if !errors.Is(erra, ErrUnknownBranch) {
				t.Fatalf("step %d: %v, want ErrUnknownBranch", i, erra)
			}
			continue
		}
		if ca.Head != s.head || !reflect.DeepEqual(ca.Messages, cb.Messages) || !reflect.DeepEqual(ca.Branches, cb.Branches) ||
			ca.Document.ID() != cb.Document.ID() || ca.Document.Elided() != cb.Document.Elided() {
			t.Fatalf("step %d: the conversations differ after switching to %s", i, s.head)
		}
	}
	if x, y := readFile(t, indexed), readFile(t, plain); string(x) != string(y) {
		t.Fatalf("the logs differ:\nindex:\n%s\nwhole:\n%s", x[len(x)-600:], y[len(y)-600:])
	}
}
