package transcript

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

func user(id, text string) Entry { return Entry{ID: id, Content: User{Text: text}, Timestamp: t0} }
func agent(id, md string) Entry  { return Entry{ID: id, Content: Agent{Markdown: md}, Timestamp: t0} }

func ids(d Document) []string {
	var out []string
	for _, e := range d.All() {
		out = append(out, e.ID)
	}
	return out
}

func mustDoc(t testing.TB, entries ...Entry) Document {
	t.Helper()
	d, err := NewDocument("doc", entries)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func must(t testing.TB) func(Document, error) Document {
	return func(d Document, err error) Document {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
}

func wantIDs(t *testing.T, d Document, want ...string) {
	t.Helper()
	if got := ids(d); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ids = %v, want %v", got, want)
	}
}

// Appending to an older document of a lineage must branch, never write into
// the storage the newer document is using.
func TestAppendToOlderDocumentDoesNotCorruptNewer(t *testing.T) {
	t.Parallel()
	a := mustDoc(t, user("1", "a"), user("2", "b"))
	b := must(t)(a.Append(user("3", "newer")))
	c := must(t)(a.Append(user("4", "older branch")))
	b2 := must(t)(b.Append(user("5", "b continues")))

	wantIDs(t, a, "1", "2")
	wantIDs(t, b, "1", "2", "3")
	wantIDs(t, c, "1", "2", "4")
	wantIDs(t, b2, "1", "2", "3", "5")
	if b.At(2).Content != (User{Text: "newer"}) {
		t.Fatalf("newer document's entry changed: %#v", b.At(2))
	}
	if _, ok := c.Index("3"); ok {
		t.Fatal("branch sees an entry appended by another branch")
	}
	if _, ok := a.Index("3"); ok {
		t.Fatal("older document sees an entry appended after it")
	}
	if i, ok := b2.Index("5"); !ok || i != 3 {
		t.Fatalf("Index(5) = %d, %v", i, ok)
	}
	// The branch can reuse an ID that only exists in the other branch.
	if _, err := c.Append(user("3", "other")); err != nil {
		t.Fatalf("branch rejected an ID it does not hold: %v", err)
	}
}

// Settling moves entries into the shared storage; that path must branch too.
func TestSettleOnOlderDocumentDoesNotCorruptNewer(t *testing.T) {
	t.Parallel()
	base := mustDoc(t, user("1", "a"))
	open := must(t)(base.Open(agent("2", "partial")))
	newer := must(t)(open.Settle("2", Agent{Markdown: "final"}))
	newer = must(t)(newer.Append(user("3", "next")))
	older := must(t)(open.Settle("2", Agent{Markdown: "other final"}))

	wantIDs(t, newer, "1", "2", "3")
	if got := newer.At(1).Content.(Agent).Markdown; got != "final" {
		t.Fatalf("newer document's settled text = %q", got)
	}
	if got := older.At(1).Content.(Agent).Markdown; got != "other final" {
		t.Fatalf("older settle = %q", got)
	}
	if !open.IsOpen(1) || open.At(1).Content.(Agent).Markdown != "partial" {
		t.Fatal("settling changed the document it was called on")
	}
}

func TestReplaceYieldsNewDocumentAndKeepsOld(t *testing.T) {
	t.Parallel()
	old := mustDoc(t, user("1", "a"), user("2", "b"), user("3", "c"))
	fpOld := old.Fingerprint(1)
	repl := must(t)(old.Replace(user("2", "B")))

	if got := old.At(1).Content.(User).Text; got != "b" {
		t.Fatalf("old document changed: %q", got)
	}
	if old.Fingerprint(1) != fpOld {
		t.Fatal("old fingerprint changed")
	}
	if got := repl.At(1).Content.(User).Text; got != "B" {
		t.Fatalf("replacement has %q", got)
	}
	if repl.Fingerprint(1) == fpOld {
		t.Fatal("changed fact kept its fingerprint")
	}
	if repl.Fingerprint(0) != old.Fingerprint(0) {
		t.Fatal("unchanged fact changed fingerprint")
	}
	if repl.Revision() <= old.Revision() {
		t.Fatal("revision did not advance")
	}
	// Appending to either afterwards stays independent.
	o2 := must(t)(old.Append(user("4", "old next")))
	r2 := must(t)(repl.Append(user("4", "new next")))
	if o2.At(1).Content.(User).Text != "b" || r2.At(1).Content.(User).Text != "B" {
		t.Fatal("documents share a replaced entry")
	}
	if _, err := old.Replace(user("9", "x")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("replace of a missing id: %v", err)
	}
	// Replacing an open entry keeps it open.
	op := must(t)(old.Open(agent("5", "x")))
	op = must(t)(op.Replace(agent("5", "y")))
	if !op.IsOpen(3) || op.At(3).Content.(Agent).Markdown != "y" {
		t.Fatal("replace of an open entry")
	}
}

// A later entry may settle before an earlier one (a tool finishing before the
// answer streaming above it). Order stays as appended; Settled counts only the
// leading settled run.
func TestLaterEntrySettlesFirst(t *testing.T) {
	t.Parallel()
	d := mustDoc(t, user("u", "q"))
	d = must(t)(d.Open(agent("a", "")))
	d = must(t)(d.Open(Entry{ID: "t", Content: Tool{Receipt: ToolReceipt{App: "x", Status: ToolOK}}, Timestamp: t0}))
	d = must(t)(d.Append(user("n", "settled after open")))
	if d.Settled() != 1 || d.Len() != 4 {
		t.Fatalf("Settled=%d Len=%d", d.Settled(), d.Len())
	}
	d = must(t)(d.Settle("t", nil))
	if d.Settled() != 1 || !d.IsOpen(1) || d.IsOpen(2) || d.IsOpen(3) {
		t.Fatalf("after settling the later entry: Settled=%d open=%v,%v,%v", d.Settled(), d.IsOpen(1), d.IsOpen(2), d.IsOpen(3))
	}
	if _, err := d.Update("t", Tool{}); !errors.Is(err, ErrSettled) {
		t.Fatalf("update of a settled entry: %v", err)
	}
	d = must(t)(d.Update("a", Agent{Markdown: "streamed"}))
	d = must(t)(d.Settle("a", nil))
	wantIDs(t, d, "u", "a", "t", "n")
	if d.Settled() != 4 {
		t.Fatalf("Settled = %d after all settled", d.Settled())
	}
	if got := d.At(1).Content.(Agent).Markdown; got != "streamed" {
		t.Fatalf("Settle(nil) lost the content: %q", got)
	}
	for _, id := range []string{"u", "a", "t", "n"} {
		if _, err := d.Settle(id, nil); !errors.Is(err, ErrSettled) {
			t.Fatalf("second settle of %s: %v", id, err)
		}
	}
	if _, err := d.Update("zz", Agent{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("update of a missing id: %v", err)
	}
}

func TestDuplicateIDsRejected(t *testing.T) {
	t.Parallel()
	if _, err := NewDocument("d", []Entry{user("1", "a"), user("2", "b"), user("1", "c")}); !errors.Is(err, ErrDuplicateID) {
		t.Fatalf("NewDocument: %v", err)
	}
	d := mustDoc(t, user("1", "a"))
	d = must(t)(d.Open(agent("2", "")))
	for _, tc := range []struct {
		name string
		op   func(Entry) (Document, error)
		id   string
	}{
		{"append over settled", d.Append, "1"},
		{"append over open", d.Append, "2"},
		{"open over settled", d.Open, "1"},
		{"open over open", d.Open, "2"},
	} {
		got, err := tc.op(user(tc.id, "dup"))
		if !errors.Is(err, ErrDuplicateID) {
			t.Errorf("%s: err = %v", tc.name, err)
		}
		if got.Len() != d.Len() || got.Revision() != d.Revision() {
			t.Errorf("%s: a rejected write changed the document", tc.name)
		}
	}
}

func TestInvalidWritesLeaveDocumentUnchanged(t *testing.T) {
	t.Parallel()
	d := mustDoc(t, user("1", "a"))
	d = must(t)(d.Open(agent("2", "x")))
	bad := Notice{Text: "x", Tone: "loud"}
	if _, err := d.Append(Entry{ID: "3", Content: bad, Timestamp: t0}); err == nil {
		t.Fatal("append accepted an invalid entry")
	}
	if _, err := d.Update("2", bad); err == nil {
		t.Fatal("update accepted invalid content")
	}
	if _, err := d.Settle("2", bad); err == nil {
		t.Fatal("settle accepted invalid content")
	}
	if !d.IsOpen(1) || d.At(1).Content.(Agent).Markdown != "x" {
		t.Fatal("document changed")
	}
}

func TestEntriesIsACopy(t *testing.T) {
	t.Parallel()
	d := mustDoc(t, user("1", "a"))
	es := d.Entries()
	es[0] = user("x", "mutated")
	if d.At(0).ID != "1" {
		t.Fatal("mutating Entries() changed the document")
	}
}

// Readers of older documents run while the newest keeps appending.
func TestConcurrentReadersOfALineage(t *testing.T) {
	t.Parallel()
	d := mustDoc(t)
	var wg sync.WaitGroup
	for i := range 200 {
		d = must(t)(d.Append(user(fmt.Sprint(i), "x")))
		snap := d
		wg.Go(func() {
			for j, e := range snap.All() {
				if e.ID != fmt.Sprint(j) {
					t.Errorf("entry %d has id %s", j, e.ID)
				}
			}
			if _, ok := snap.Index(fmt.Sprint(snap.Len())); ok {
				t.Error("older document found a later entry")
			}
		})
	}
	wg.Wait()
}

func TestIDSourceNamespaces(t *testing.T) {
	t.Parallel()
	a, b := NewIDSource(), NewIDSource()
	if a.Prefix() == b.Prefix() {
		t.Fatal("two sources share a prefix")
	}
	seen := map[string]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				id := a.Next()
				mu.Lock()
				if seen[id] {
					t.Errorf("id %s minted twice", id)
				}
				seen[id] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != 8000 {
		t.Fatalf("minted %d unique ids", len(seen))
	}
	if id := b.Next(); seen[id] {
		t.Fatalf("second source minted %s, already minted by the first", id)
	}
}

// observe is how the store keeps minted IDs clear of saved ones that share
// its namespace.
func TestIDSourceObserveMovesPastSavedIDs(t *testing.T) {
	t.Parallel()
	s := NewIDSource()
	p := s.Prefix()
	for _, id := range []string{p + "-zz", p + "-3", "other-zzzz", p + "x-zzzz", p + "-", p + "-not!base36", "x"} {
		s.observe(id)
	}
	if got, want := s.Next(), p+"-100"; got != want { // "zz" is 1295; the next is 1296, "100" in base 36
		t.Fatalf("Next() = %s, want %s", got, want)
	}
}
