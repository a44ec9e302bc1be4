package history

import (
	"fmt"
	"os"
	"testing"

	"github.com/foliodev/folio/internal/gen"
)

// tailCounts runs f and returns how many page index rebuilds it caused
// and how many tail reads the index answered.
func tailCounts(f func()) (rebuilds, tails int64) {
	r, t := indexRebuilds.Load(), indexTails.Load()
	f()
	return indexRebuilds.Load() - r, indexTails.Load() - t
}

// A writer's LoadTail on a log that grew after its index was last written
// (another program appended, or folio stopped before its index goroutine
// caught up) extends the index by the appended records and reads through
// it: no rebuild, the same result as the full pass, and the extension is
// kept for the next open.
func TestLoadTailExtendsABehindIndex(t *testing.T) {
	path := logPath(t)
	writeGen(t, path, gen.Options{Messages: 400, Seed: 4, Summaries: true})
	checkIndex(t, path)
	f, err := openAppend(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		fmt.Fprintf(f, "%s\n", uiRec(TypeUIAppend, entryJSON(t, agent(fmt.Sprintf("late%d", i), "appended after the index"))))
	}
	f.Close()
	before, err := os.Stat(IndexPath(path))
	if err != nil {
		t.Fatal(err)
	}

	var got *Conversation
	rebuilds, tails := tailCounts(func() {
		got, err = open(t, path).LoadTail(8, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if rebuilds != 0 || tails != 1 {
		t.Fatalf("LoadTail on a behind index: %d rebuilds, %d index reads; want 0 and 1", rebuilds, tails)
	}
	if got.Document.At(got.Document.Len()-1).ID != "late5" {
		t.Fatalf("the tail ends at %q, not at the last appended entry", got.Document.At(got.Document.Len()-1).ID)
	}
	full, err := parseTail(readFile(t, path), 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	via, err := readTail(path, 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameTail(t, via, full)
	after, err := os.Stat(IndexPath(path))
	if err != nil {
		t.Fatal(err)
	}
	if after.Size() <= before.Size() {
		t.Fatalf("the index did not keep the extension: %d bytes before, %d after", before.Size(), after.Size())
	}
}

// A log with no index (written by another program, or an older folio)
// has its index built once, by the first LoadTail, which then reads
// through it; later opens pay only the tail.
func TestLoadTailBuildsAMissingIndexOnce(t *testing.T) {
	path := logPath(t)
	writeGen(t, path, gen.Options{Messages: 300, Seed: 6})
	os.Remove(IndexPath(path))

	for i, want := range []int64{1, 0} {
		var conv *Conversation
		var err error
		rebuilds, tails := tailCounts(func() {
			l, oerr := Open(path, WithClock(clock()))
			if oerr != nil {
				t.Fatal(oerr)
			}
			defer l.Close()
			conv, err = l.LoadTail(8, nil)
		})
		if err != nil {
			t.Fatal(err)
		}
		if rebuilds != want || tails != 1 {
			t.Fatalf("open %d: %d rebuilds, %d index reads; want %d and 1", i+1, rebuilds, tails, want)
		}
		if _, err := os.Stat(IndexPath(path)); err != nil {
			t.Fatalf("open %d left no index beside the log: %v", i+1, err)
		}
		whole := open(t, path)
		all, err := whole.Load()
		if err != nil {
			t.Fatal(err)
		}
		if conv.Document.ID() != all.Document.ID() || len(conv.Messages) != len(all.Messages) {
			t.Fatalf("open %d: tail document %q with %d messages, whole %q with %d",
				i+1, conv.Document.ID(), len(conv.Messages), all.Document.ID(), len(all.Messages))
		}
		whole.Close()
	}
}
