package history

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/foliodev/folio/internal/gen"
)

// indexSeed is the page index of a small generated log with a fork, a
// provisional tail and a snapshot, as a writer leaves it.
func indexSeed(f *testing.F) []byte {
	f.Helper()
	path := filepath.Join(f.TempDir(), "data", "conversations", "c1.jsonl")
	l, err := Open(path, WithClock(clock()))
	if err != nil {
		f.Fatal(err)
	}
	defer l.Close()
	d := doc(f, user("u1", "q"), agent("a1", "one"), user("u2", "q2"))
	if err := l.Save(d, msgs("q", "one")); err != nil {
		f.Fatal(err)
	}
	b, err := l.Fork(Main, "a1", 1, "b")
	if err != nil {
		f.Fatal(err)
	}
	open, err := d.Open(agent("s", "partial"))
	if err != nil {
		f.Fatal(err)
	}
	if err := l.Save(open, msgs("q", "one")); err != nil {
		f.Fatal(err)
	}
	// The fork's own messages and a rewrite on it, then a line no reader
	// accepts (the index keeps it as a problem) and a rejected batch
	// (whose ID it keeps as reserved).
	c, err := l.SetHead(b)
	if err != nil {
		f.Fatal(err)
	}
	if err := l.Save(appendAll(f, c.Document, user("bu", "again")), msgs("q", "again")); err != nil {
		f.Fatal(err)
	}
	l.flushIndex()
	w, err := openAppend(path)
	if err != nil {
		f.Fatal(err)
	}
	w.WriteString("not a record\n" + uiRec(TypeUIAppend, `{"id":"rej","content":{"kind":"nope"}}`) + "\n")
	w.Close()
	ix := checkIndex(f, path)
	if ix.st.problems != 2 || !ix.st.extrasOK() || len(ix.st.unknown) != 1 || len(ix.st.branches[0].reserved) != 1 {
		f.Fatalf("the seed's index keeps %d of %d problems, %d unknown lines, reserved %v",
			len(ix.st.problemList), ix.st.problems, len(ix.st.unknown), ix.st.branches[0].reserved)
	}
	ix.Close()
	data, err := os.ReadFile(IndexPath(path))
	if err != nil {
		f.Fatal(err)
	}
	return data
}

// FuzzIndexDecode feeds arbitrary bytes to the page index decoder. It must
// never panic; what it accepts must be a well-formed index (every chain
// walks to its first entry, turns numbered by the rule); and anything
// else must be reported as damage, so OpenIndex rebuilds.
func FuzzIndexDecode(f *testing.F) {
	seed := indexSeed(f)
	f.Add(seed)
	f.Add(seed[:len(seed)-1])
	f.Add(indexMagic)
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Options{Messages: 12, Seed: 5}); err == nil {
		b := newIndexBuilder()
		s := NewScanner()
		if data, err := b.scan(s, bytes.NewReader(buf.Bytes()), 0, int64(buf.Len()), 1); err == nil {
			f.Add(data)
		}
	}
	f.Add(branchedIndex(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, docs, err := decodeIndex(data)
		if err != nil {
			if !errors.Is(err, ErrIndexDamaged) {
				t.Fatalf("a bad index must be reported as damaged: %v", err)
			}
			return
		}
		if len(docs) != len(st.branches) || st.branch(st.head) == nil {
			t.Fatalf("accepted an index without its head's document")
		}
		for i, refs := range docs {
			if err := checkTurns(refs); err != nil {
				t.Fatalf("accepted misnumbered turns in branch %d: %v", i, err)
			}
		}
		if len(st.problemList) > st.problems || len(st.problemList) > maxTailProblems || len(st.unknown) > len(st.problemList) {
			t.Fatalf("accepted %d problems and %d unknown lines of %d", len(st.problemList), len(st.unknown), st.problems)
		}
		for _, b := range st.branches {
			if _, err := walkMessages(bytesFrames(data), b.msgChain, b.msgs); err != nil {
				t.Fatalf("accepted an index whose branch %q's messages do not walk: %v", b.info.ID, err)
			}
		}
	})
}

// branchedIndex is the page index of a generated branched log with
// problems: forks sharing messages, rewrites on branches, rejected and
// unknown lines.
func branchedIndex(f *testing.F) []byte {
	data := withProblems(branchedLog(f, 7, 16), 7, false)
	data, err := newIndexBuilder().scan(NewScanner(), bytes.NewReader(data), 0, int64(len(data)), 1)
	if err != nil {
		f.Fatal(err)
	}
	return data
}
