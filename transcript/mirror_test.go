package transcript

import (
	"testing"
	"time"
)

// Put sets entries to another store's values by their own IDs: added open
// or settled, updated while open, settled, and a settled one replaced.
func TestTxPut(t *testing.T) {
	s := NewStore()
	l := s.Lease()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	put := func(id, text string, open bool) {
		t.Helper()
		if err := l.Do(func(tx *Tx) error { return tx.Put(Entry{ID: id, Content: Agent{Markdown: text}, Timestamp: at}, open) }); err != nil {
			t.Fatalf("put %s: %v", id, err)
		}
	}
	put("u-1", "settled first", false)
	put("a-1", "stre", true)
	put("a-1", "streaming", true)
	d := s.Snapshot().Document
	if d.Len() != 2 || !d.IsOpen(1) || d.At(1).Content.(Agent).Markdown != "streaming" {
		t.Fatalf("after an open put and its update: %d entries, open %v", d.Len(), d.IsOpen(1))
	}
	put("a-1", "streamed", false)
	put("u-1", "changed earlier fact", false)
	d = s.Snapshot().Document
	if d.IsOpen(1) || d.At(1).Content.(Agent).Markdown != "streamed" || d.At(0).Content.(Agent).Markdown != "changed earlier fact" {
		t.Fatalf("after settling and replacing: %+v", d.Entries())
	}
	// An invalid value is refused and changes nothing.
	err := l.Do(func(tx *Tx) error { return tx.Put(Entry{ID: "", Content: Agent{Markdown: "x"}, Timestamp: at}, false) })
	if err == nil || s.Snapshot().Document.Len() != 2 {
		t.Fatalf("an entry without ID: %v, %d entries", err, s.Snapshot().Document.Len())
	}
	// Minted IDs never repeat a put one.
	var minted string
	_ = l.Do(func(tx *Tx) error { minted = tx.NewID(); return nil })
	if _, dup := s.Snapshot().Document.Index(minted); dup {
		t.Fatalf("minted %s, an ID the document holds", minted)
	}
}
