package transcript

import (
	"slices"
	"testing"
)

// Trim drops settled entries from a document's start: Elided counts them,
// FirstID still names the conversation's first entry, the document left
// appends as before, and the document it came from is unchanged. Open
// entries cannot be dropped.
func TestTrimDropsSettledEntries(t *testing.T) {
	t.Parallel()
	d, err := NewDocument("c", []Entry{user("a", "1"), agent("b", "2"), user("c", "3"), agent("d", "4")})
	if err != nil {
		t.Fatal(err)
	}
	d, err = d.Open(agent("e", "streaming"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Trim(5); err == nil {
		t.Fatal("Trim dropped an open entry")
	}
	tr, err := d.Trim(2)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Elided() != 2 || tr.FirstID() != "a" || !slices.Equal(ids(tr), []string{"c", "d", "e"}) || !tr.IsOpen(2) {
		t.Fatalf("trimmed: elided %d, first %q, entries %v", tr.Elided(), tr.FirstID(), ids(tr))
	}
	if _, ok := tr.Index("a"); ok {
		t.Fatal("a dropped entry is still found")
	}
	tr2, err := tr.Trim(1)
	if err != nil || tr2.Elided() != 3 || tr2.FirstID() != "a" {
		t.Fatalf("trimmed again: elided %d, first %q, %v", tr2.Elided(), tr2.FirstID(), err)
	}
	tr2, err = tr2.Settle("e", nil)
	if err != nil {
		t.Fatal(err)
	}
	if tr2, err = tr2.Append(user("f", "5")); err != nil {
		t.Fatal(err)
	}
	if i, ok := tr2.Index("f"); !ok || i != 2 {
		t.Fatalf("an entry appended after a trim is at %d (%v)", i, ok)
	}
	if !slices.Equal(ids(d), []string{"a", "b", "c", "d", "e"}) || d.Elided() != 0 {
		t.Fatalf("the document trimmed changed: %v", ids(d))
	}
}
