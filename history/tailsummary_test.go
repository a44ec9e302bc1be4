package history

import (
	"path/filepath"
	"testing"
)

// TestTailLoadListsTheWholeDocument: the listing summary a writer leaves
// after loading only the tail (through the page index or in a full pass)
// counts every entry of the document, not the window it loaded.
func TestTailLoadListsTheWholeDocument(t *testing.T) {
	for _, indexed := range []bool{false, true} {
		path := logPath(t)
		l := open(t, path)
		if err := l.SaveEntries(entries(100, "e"), nil); err != nil {
			t.Fatal(err)
		}
		l.flushIndex()
		l.Close()
		if !indexed {
			writeLog(t, IndexPath(path), []byte("not an index"))
		}
		l = open(t, path)
		c, err := l.LoadTail(8, nil)
		if err != nil || c.Document.Elided() == 0 {
			t.Fatalf("LoadTail: %v, %d left out", err, c.Document.Elided())
		}
		l.Close()
		list, err := List(filepath.Dir(filepath.Dir(path)))
		if err != nil || len(list) != 1 || list[0].Entries != 100 {
			t.Fatalf("indexed %v: the listing says %+v (%v), want 100 entries", indexed, list, err)
		}
	}
}
