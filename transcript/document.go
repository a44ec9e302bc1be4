package transcript

import (
	"fmt"
	"iter"
	"sync"
)

// Document is the source document of one conversation: an ordered list of
// entries, some of which may still be open (a streaming answer, a running
// tool). A Document value never changes; every operation returns a new one.
//
// Documents share structure: appending to the newest document of a lineage
// reuses its storage, so a document with 100,000 entries is not copied when
// one more is added. Changing an earlier settled fact copies the list; that
// is rare and is what makes history rewrite its presentation snapshot.
type Document struct {
	id    string
	rev   uint64
	nodes []*node // settled prefix; elements below len are never written again
	sp    *spine
	tail  []tailEntry // entries from the first open one on, in order
	// elided counts the conversation's entries before the first one held
	// here, which the holder chose not to load; first is the ID of the
	// conversation's very first entry when it is among them.
	elided int
	first  string
}

// node holds one immutable entry and its lazily computed fingerprint.
type node struct {
	e    Entry
	once sync.Once
	fp   Fingerprint
}

func (n *node) fingerprint() Fingerprint {
	n.once.Do(func() { n.fp = FingerprintOf(n.e) })
	return n.fp
}

type tailEntry struct {
	n    *node
	open bool
}

// spine is the storage shared by a lineage of documents. Only the newest
// document of the lineage may append to it in place.
//
// The ID index is built lazily: an append only adds a pointer to latest, and
// the first lookup after it indexes the entries added since. Each entry is
// indexed once, so lookups stay amortized O(1), while a stream of appends
// on a large document never touches a large map (a cache miss or a table
// split per append otherwise).
type spine struct {
	mu      sync.Mutex
	latest  []*node
	index   map[string]int
	indexed int // latest[:indexed] are in index
}

func newSpine(nodes []*node) *spine {
	return &spine{latest: nodes, index: map[string]int{}}
}

// lookup finds id among the lineage's entries. The caller holds sp.mu.
func (sp *spine) lookup(id string) (int, bool) {
	for ; sp.indexed < len(sp.latest); sp.indexed++ {
		sp.index[sp.latest[sp.indexed].e.ID] = sp.indexed
	}
	i, ok := sp.index[id]
	return i, ok
}

// NewDocument returns a document of settled entries. It rejects invalid
// entries and repeated IDs.
func NewDocument(id string, entries []Entry) (Document, error) {
	nodes := make([]*node, len(entries))
	// One allocation holds every node of a hydrated document.
	slab := make([]node, len(entries))
	seen := make(map[string]int, len(entries))
	for i, e := range entries {
		if err := e.Validate(); err != nil {
			return Document{}, fmt.Errorf("entry %d: %w", i, err)
		}
		if j, dup := seen[e.ID]; dup {
			return Document{}, fmt.Errorf("entries %d and %d: %w %q", j, i, ErrDuplicateID, e.ID)
		}
		seen[e.ID] = i
		slab[i].e = e
		nodes[i] = &slab[i]
	}
	return Document{id: id, nodes: nodes, sp: &spine{latest: nodes, index: seen, indexed: len(nodes)}}, nil
}

// NewCheckedDocument returns a document of settled entries that the caller
// has already validated and found free of repeated IDs, as the log reader
// does while it reads. It checks neither again; the ID index is built on the
// first lookup. Passing entries NewDocument would reject breaks the
// document.
func NewCheckedDocument(id string, entries []Entry) Document {
	nodes := make([]*node, len(entries))
	slab := make([]node, len(entries))
	for i, e := range entries {
		slab[i].e = e
		nodes[i] = &slab[i]
	}
	return Document{id: id, nodes: nodes, sp: newSpine(nodes)}
}

// NewCheckedWindow is NewCheckedDocument for the end of a conversation
// whose first elided entries are not loaded: the entries given come after
// them, and first is the ID of the conversation's first entry (elided or
// not). Positions (At, Len, Index) count the held entries only. Entries
// appended later are checked against the held ones only, so a holder of a
// window mints new IDs (as the store does) rather than reusing old ones.
func NewCheckedWindow(id string, elided int, first string, entries []Entry) Document {
	d := NewCheckedDocument(id, entries)
	if elided > 0 {
		d.elided, d.first = elided, first
	}
	return d
}

// Elided is how many entries of the conversation come before the first one
// this document holds (see NewCheckedWindow); 0 for a whole document.
func (d Document) Elided() int { return d.elided }

// FirstID is the ID of the conversation's first entry, whether held or
// elided; "" for an empty document.
func (d Document) FirstID() string {
	if d.elided > 0 {
		return d.first
	}
	if d.Len() == 0 {
		return ""
	}
	return d.At(0).ID
}

// ID is the persistent identity of the conversation.
func (d Document) ID() string { return d.id }

// Revision counts the changes made since the document was created or
// hydrated. It orders documents of one lineage.
func (d Document) Revision() uint64 { return d.rev }

// Len is the number of entries, open ones included.
func (d Document) Len() int { return len(d.nodes) + len(d.tail) }

// Settled is the number of leading entries that are settled. Entries at or
// after it may still change.
func (d Document) Settled() int { return len(d.nodes) }

// At returns entry i. It panics if i is out of range, like a slice.
func (d Document) At(i int) Entry { return d.node(i).e }

// Fingerprint returns entry i's fingerprint, computed once and cached.
func (d Document) Fingerprint(i int) Fingerprint { return d.node(i).fingerprint() }

// IsOpen reports whether entry i is still open (streaming or running).
func (d Document) IsOpen(i int) bool {
	if i < len(d.nodes) {
		return false
	}
	return d.tail[i-len(d.nodes)].open
}

func (d Document) node(i int) *node {
	if i < len(d.nodes) {
		return d.nodes[i]
	}
	return d.tail[i-len(d.nodes)].n
}

// All yields the entries in order.
func (d Document) All() iter.Seq2[int, Entry] {
	return func(yield func(int, Entry) bool) {
		for i := range d.Len() {
			if !yield(i, d.node(i).e) {
				return
			}
		}
	}
}

// Entries returns a copy of the entries; the caller owns the slice.
func (d Document) Entries() []Entry {
	out := make([]Entry, 0, d.Len())
	for _, e := range d.All() {
		out = append(out, e)
	}
	return out
}

// Index returns the position of the entry with the given ID.
func (d Document) Index(id string) (int, bool) {
	for j := len(d.tail) - 1; j >= 0; j-- {
		if d.tail[j].n.e.ID == id {
			return len(d.nodes) + j, true
		}
	}
	if d.sp == nil {
		return 0, false
	}
	d.sp.mu.Lock()
	i, ok := d.sp.lookup(id)
	d.sp.mu.Unlock()
	if !ok || i >= len(d.nodes) || d.nodes[i].e.ID != id {
		return 0, false
	}
	return i, true
}

// Append returns a document with e added as a settled entry.
func (d Document) Append(e Entry) (Document, error) { return d.add(e, false, false) }

// Open returns a document with e added as an open entry, one whose content
// may still change through Update until Settle.
func (d Document) Open(e Entry) (Document, error) { return d.add(e, true, false) }

// add appends e. fresh skips the duplicate check, for IDs the store just
// minted and knows to be unused; that saves a lookup in the index, which on
// a large document is a cache miss per append.
func (d Document) add(e Entry, open, fresh bool) (Document, error) {
	if err := e.Validate(); err != nil {
		return d, err
	}
	if !fresh {
		if _, dup := d.Index(e.ID); dup {
			return d, fmt.Errorf("%w %q", ErrDuplicateID, e.ID)
		}
	}
	n := &node{e: e}
	out := d
	out.rev++
	if !open && len(d.tail) == 0 {
		out.nodes, out.sp = d.sp.extend(d.nodes, n)
		return out, nil
	}
	out.tail = append(d.tail[:len(d.tail):len(d.tail)], tailEntry{n: n, open: open})
	return out, nil
}

// extend appends n after nodes, in place when nodes is the newest document
// of this spine's lineage, else on a copy with a spine of its own.
func (sp *spine) extend(nodes []*node, n *node) ([]*node, *spine) {
	if sp == nil {
		nodes = []*node{n}
		return nodes, newSpine(nodes)
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if len(nodes) == len(sp.latest) && (len(nodes) == 0 || &nodes[0] == &sp.latest[0]) {
		sp.latest = append(sp.latest, n)
		return sp.latest, sp
	}
	cp := make([]*node, len(nodes), len(nodes)*5/4+8)
	copy(cp, nodes)
	cp = append(cp, n)
	return cp, newSpine(cp)
}

// Update returns a document in which the open entry id has content c. It
// keeps the entry's ID and timestamp.
func (d Document) Update(id string, c Content) (Document, error) {
	j, err := d.openIndex(id)
	if err != nil {
		return d, err
	}
	e := d.tail[j].n.e
	e.Content = c
	if err := e.Validate(); err != nil {
		return d, err
	}
	out := d
	out.rev++
	out.tail = append([]tailEntry(nil), d.tail...)
	out.tail[j] = tailEntry{n: &node{e: e}, open: true}
	return out, nil
}

// Settle returns a document in which the open entry id is settled with
// content c (nil keeps its current content). Its ID never changes.
func (d Document) Settle(id string, c Content) (Document, error) {
	j, err := d.openIndex(id)
	if err != nil {
		return d, err
	}
	e := d.tail[j].n.e
	if c != nil {
		e.Content = c
		if err := e.Validate(); err != nil {
			return d, err
		}
	}
	out := d
	out.rev++
	tail := append([]tailEntry(nil), d.tail...)
	tail[j] = tailEntry{n: &node{e: e}}
	// Leading settled entries move into the shared spine, in order.
	k := 0
	for k < len(tail) && !tail[k].open {
		out.nodes, out.sp = out.sp.extend(out.nodes, tail[k].n)
		k++
	}
	out.tail = tail[k:]
	if len(out.tail) == 0 {
		out.tail = nil
	}
	return out, nil
}

func (d Document) openIndex(id string) (int, error) {
	for j := range d.tail {
		if d.tail[j].n.e.ID == id {
			if !d.tail[j].open {
				return 0, fmt.Errorf("%w: %q", ErrSettled, id)
			}
			return j, nil
		}
	}
	if _, ok := d.Index(id); ok {
		return 0, fmt.Errorf("%w: %q", ErrSettled, id)
	}
	return 0, fmt.Errorf("%w: %q", ErrNotFound, id)
}

// Replace returns a document in which the settled entry with e's ID is
// replaced by e. This is how an earlier fact changes: the old document is
// untouched, and the new one no longer shares its prefix.
func (d Document) Replace(e Entry) (Document, error) {
	if err := e.Validate(); err != nil {
		return d, err
	}
	i, ok := d.Index(e.ID)
	if !ok {
		return d, fmt.Errorf("%w: %q", ErrNotFound, e.ID)
	}
	out := d
	out.rev++
	if i >= len(d.nodes) {
		j := i - len(d.nodes)
		out.tail = append([]tailEntry(nil), d.tail...)
		out.tail[j] = tailEntry{n: &node{e: e}, open: d.tail[j].open}
		return out, nil
	}
	cp := make([]*node, len(d.nodes), cap(d.nodes))
	copy(cp, d.nodes)
	cp[i] = &node{e: e}
	out.nodes, out.sp = cp, newSpine(cp)
	return out, nil
}

// Trim returns a document without its first k entries, which Elided counts
// from then on: a holder that keeps only a conversation's end (the engine,
// once the log holds the entries) drops what it no longer needs. The
// entries must be settled; FirstID still names the conversation's first
// entry. The rest are copied into storage of their own, so the dropped
// entries are not kept alive by the documents that come after.
func (d Document) Trim(k int) (Document, error) {
	if k <= 0 {
		return d, nil
	}
	if k > len(d.nodes) {
		return d, fmt.Errorf("trim %d entries: only the first %d are settled", k, len(d.nodes))
	}
	out := d
	out.first, out.elided = d.FirstID(), d.elided+k
	out.rev++
	rest := d.nodes[k:]
	cp := make([]*node, len(rest), len(rest)*5/4+8)
	copy(cp, rest)
	out.nodes, out.sp = cp, newSpine(cp)
	return out, nil
}
