package history

import (
	"os"
	"testing"

	"github.com/foliodev/folio/internal/gen"
)

// A log that ends in a torn line (a writer died mid-line) keeps its index
// as it is at every open: the line applies nothing, so no empty commit is
// appended (and fsynced) each time. Once the line is completed the index
// is extended by it.
func TestTornLineLeavesTheIndexAlone(t *testing.T) {
	p := logPath(t)
	writeGen(t, p, gen.Options{Messages: 50, Seed: 5})
	checkIndex(t, p)
	f, err := openAppend(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"ui-append","at":"2026`)
	f.Close()
	indexSize := func() int64 {
		fi, err := os.Stat(IndexPath(p))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := indexSize()
	for range 3 {
		checkIndex(t, p)
		if got := indexSize(); got != before {
			t.Fatalf("an open of a log ending in a torn line grew its index from %d to %d bytes", before, got)
		}
	}
	if _, err := readTail(p, 8, nil); err != nil {
		t.Fatalf("the tail read declined a log with a torn last line: %v", err)
	}
	// Completed, the line is a record the next open indexes.
	f, err = openAppend(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`-01-01T00:00:00.000Z","entries":[` + entryJSON(t, agent("late", "finished")) + "]}\n")
	f.Close()
	ix := checkIndex(t, p)
	if d, err := ix.Document(Main); err != nil || d.Len() != 51 {
		t.Fatalf("after the line was completed: %v", err)
	}
}
