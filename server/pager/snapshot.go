package pager

import (
	"bufio"
	"cmp"
	"fmt"
	"hash/maphash"
	"iter"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// Page budget bounds, in bytes of group JSON.
const (
	MinBudget     = 4 << 10
	MaxBudget     = 4 << 20
	DefaultBudget = 256 << 10
)

// Special anchors.
const (
	AnchorLatest   = "latest"
	AnchorEarliest = "earliest"
)

// Direction says which way a page extends from its anchor.
type Direction string

// Directions.
const (
	Before Direction = "before"
	After  Direction = "after"
	Around Direction = "around"
)

// Item is one entry of the branch being captured.
type Item struct {
	ID   string
	Kind transcript.Kind
	// Raw is the entry's JSON in the transcript's canonical form. Build
	// copies it; the caller may reuse the slice once the yield returns.
	Raw []byte
	// Covers is the range a compaction entry summarizes (Kind compaction).
	Covers *transcript.CompactionRange
	// Links are spawn/attach relationships of this entry to other
	// conversations, from the log's extension records.
	Links []Link
	// Reset discards everything captured so far: the log superseded its
	// presentation with a fresh snapshot. The other fields are ignored.
	Reset bool
}

// Link relates an entry to another conversation.
type Link struct {
	Kind         string `json:"kind"` // "spawn" or "attach"
	Conversation string `json:"conversation"`
}

// Coverage is a compaction resolved to the groups it covers.
type Coverage struct {
	EntryID   string `json:"entryId"`
	FromID    string `json:"fromId"`
	ToID      string `json:"toId"`
	Group     int    `json:"group"`     // the group holding the compaction entry
	FromGroup int    `json:"fromGroup"` // -1 when FromID was not captured
	ToGroup   int    `json:"toGroup"`   // -1 when ToID was not captured
}

// LinkAt is a Link placed at its entry's group.
type LinkAt struct {
	EntryID string `json:"entryId"`
	Group   int    `json:"group"`
	Link
}

// Stats describes a built snapshot.
type Stats struct {
	Entries int
	Groups  int
	Bytes   int64 // the groups' page bytes, commas included (Build: its file's size)
	// GraphBuilt says whether graph annotations were resolved. It is false
	// when the captured entries had no compaction coverage and no links.
	GraphBuilt bool
}

// buildOptions are Build's settings.
type buildOptions struct {
	forceGraph bool
}

// Option configures Build.
type Option func(*buildOptions)

// Snapshot is an immutable capture of one branch: the log's file and page
// index (FromLog) or a temporary file of its own (Build).
type Snapshot struct {
	path string
	f    *os.File

	groupOff []int64
	groupLen []int32

	seed     maphash.Seed
	idHash   []uint64 // sorted
	idGroup  []int32  // parallel to idHash
	stats    Stats
	coverage []Coverage
	links    []LinkAt

	lg *logPages // non-nil: the snapshot reads its pages from a log

	refs      atomic.Int32
	mu        sync.RWMutex // held for reading by page reads, for writing by the final release
	released  bool
	readBytes atomic.Int64
}

// Build captures items into a new snapshot file in dir. It reads items once,
// in order. The returned snapshot holds one reference.
func Build(dir string, items iter.Seq2[Item, error], opts ...Option) (*Snapshot, error) {
	var o buildOptions
	for _, opt := range opts {
		opt(&o)
	}
	f, err := os.CreateTemp(dir, "snap-*.json")
	if err != nil {
		return nil, fmt.Errorf("create snapshot file: %w", err)
	}
	s := &Snapshot{path: f.Name(), f: f, seed: maphash.MakeSeed()}
	fail := func(err error) (*Snapshot, error) {
		f.Close()
		os.Remove(s.path)
		return nil, err
	}

	w := bufio.NewWriterSize(f, 256<<10)
	var (
		off       int64
		inGroup   bool
		groupUser bool // the open group is a user entry's group
		needGraph = o.forceGraph
		pendCov   []Coverage
	)
	write := func(b []byte) {
		w.Write(b) // a write error sticks in w and is reported by Flush
		off += int64(len(b))
	}
	var (
		num        []byte
		entriesLen int64 // stored bytes of the open group's entries
		nEntries   int
	)
	closeGroup := func() {
		// The group states its own stored size (groupBytes), so a client
		// budgets with the server's figure instead of estimating from
		// decoded JSON.
		g := len(s.groupOff) - 1
		num = groupClose(num[:0], g, entriesLen, nEntries)
		write(num)
		s.groupLen[g] = int32(off - s.groupOff[g])
		inGroup = false
	}
	openGroup := func() {
		if len(s.groupOff) > 0 {
			write([]byte{','})
		}
		s.groupOff = append(s.groupOff, off)
		s.groupLen = append(s.groupLen, 0)
		num = groupOpen(num[:0], len(s.groupOff)-1)
		write(num)
		entriesLen, nEntries = 0, 0
		inGroup = true
	}

	for it, err := range items {
		if err != nil {
			return fail(err)
		}
		if it.Reset {
			if err := w.Flush(); err != nil {
				return fail(fmt.Errorf("write snapshot file: %w", err))
			}
			if err := f.Truncate(0); err != nil {
				return fail(fmt.Errorf("reset snapshot file: %w", err))
			}
			if _, err := f.Seek(0, 0); err != nil {
				return fail(fmt.Errorf("reset snapshot file: %w", err))
			}
			w.Reset(f)
			off, inGroup, groupUser, needGraph, pendCov = 0, false, false, o.forceGraph, nil
			s.groupOff, s.groupLen, s.idHash, s.idGroup, s.links = nil, nil, nil, nil, nil
			s.stats = Stats{}
			continue
		}
		if it.ID == "" || len(it.Raw) == 0 {
			return fail(fmt.Errorf("%w: entry %d has no id or no bytes", ErrBadItem, s.stats.Entries))
		}
		isUser := it.Kind == transcript.KindUser
		switch {
		case !inGroup:
			openGroup()
		case isUser || groupUser:
			// A user entry is a group by itself, and ends the reply before it.
			closeGroup()
			openGroup()
		default:
			write([]byte{','})
		}
		groupUser = isUser
		g := int32(len(s.groupOff) - 1)
		write(it.Raw)
		entriesLen += int64(len(it.Raw))
		nEntries++
		s.idHash = append(s.idHash, maphash.String(s.seed, it.ID))
		s.idGroup = append(s.idGroup, g)
		s.stats.Entries++
		if it.Kind == transcript.KindCompaction && it.Covers != nil {
			needGraph = true
			pendCov = append(pendCov, Coverage{EntryID: it.ID, FromID: it.Covers.FromID, ToID: it.Covers.ToID, Group: int(g)})
		}
		for _, l := range it.Links {
			needGraph = true
			s.links = append(s.links, LinkAt{EntryID: it.ID, Group: int(g), Link: l})
		}
	}
	if inGroup {
		closeGroup()
	}
	if err := w.Flush(); err != nil {
		return fail(fmt.Errorf("write snapshot file: %w", err))
	}
	if err := s.sortIndex(); err != nil {
		return fail(err)
	}
	s.stats.Groups = len(s.groupOff)
	s.stats.Bytes = off
	if needGraph {
		s.coverage = s.resolveCoverage(pendCov)
		s.stats.GraphBuilt = true
	} else {
		s.links = nil
	}
	s.refs.Store(1)
	return s, nil
}

// sortIndex sorts the ID hashes for binary search and rejects repeats.
func (s *Snapshot) sortIndex() error {
	idx := make([]int32, len(s.idHash))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int { return cmp.Compare(s.idHash[a], s.idHash[b]) })
	h := make([]uint64, len(idx))
	g := make([]int32, len(idx))
	for i, j := range idx {
		h[i], g[i] = s.idHash[j], s.idGroup[j]
		if i > 0 && h[i] == h[i-1] {
			return fmt.Errorf("%w: an entry ID repeats (entries %d and another)", ErrBadItem, j)
		}
	}
	s.idHash, s.idGroup = h, g
	return nil
}

// resolveCoverage is the graph work: it places each compaction's covered
// range on groups. Only Build calls it, and only when needed.
func (s *Snapshot) resolveCoverage(pend []Coverage) []Coverage {
	for i := range pend {
		pend[i].FromGroup = s.groupOf(pend[i].FromID)
		pend[i].ToGroup = s.groupOf(pend[i].ToID)
	}
	return pend
}

func (s *Snapshot) groupOf(id string) int {
	h := maphash.String(s.seed, id)
	i, ok := slices.BinarySearch(s.idHash, h)
	if !ok {
		return -1
	}
	return int(s.idGroup[i])
}

// Path is the snapshot file's path.
func (s *Snapshot) Path() string { return s.path }

// Stats describes what Build captured.
func (s *Snapshot) Stats() Stats { return s.stats }

// ReadBytes is how many bytes page reads have read from the file so far.
func (s *Snapshot) ReadBytes() int64 { return s.readBytes.Load() }

// GroupOf returns the group holding entry id, or -1.
func (s *Snapshot) GroupOf(id string) int {
	if s.lg != nil {
		s.lg.mu.Lock()
		defer s.lg.mu.Unlock()
		return s.lg.groupOf(id)
	}
	return s.groupOf(id)
}

// Retain adds a reference.
func (s *Snapshot) Retain() { s.refs.Add(1) }

// TryRetain adds a reference unless the last one is already gone, so a cache
// that holds no reference of its own can share a live snapshot safely.
func (s *Snapshot) TryRetain() bool {
	for {
		n := s.refs.Load()
		if n <= 0 {
			return false
		}
		if s.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release drops a reference. The last one closes and deletes the file.
func (s *Snapshot) Release() error {
	if s.refs.Add(-1) != 0 {
		return nil
	}
	if s.lg != nil {
		return s.lg.close()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.released = true
	err := s.f.Close()
	if rerr := os.Remove(s.path); err == nil {
		err = rerr
	}
	return err
}

// Page is the result of a page read.
type Page struct {
	// First and Last are the group indexes the page holds; both are -1 for
	// an empty page.
	First, Last int
	// Bytes is the groups' stored JSON objects joined by commas, exactly as
	// in the snapshot file.
	Bytes         []byte
	HasMoreBefore bool
	HasMoreAfter  bool
	// Coverage and Links are the graph annotations touching the page's
	// groups; both are empty when the snapshot needed no graph.
	Coverage []Coverage
	Links    []LinkAt
}

// Page reads the groups an anchor, direction and budget select, appending
// their bytes to dst (which may be nil) to form Page.Bytes.
func (s *Snapshot) Page(dst []byte, anchor string, dir Direction, budget int) (Page, error) {
	if budget == 0 {
		budget = DefaultBudget
	}
	if budget < MinBudget || budget > MaxBudget {
		return Page{}, fmt.Errorf("%w: %d is not within %d..%d", ErrBadBudget, budget, MinBudget, MaxBudget)
	}
	switch dir {
	case Before, After, Around:
	default:
		return Page{}, fmt.Errorf("%w: got %q", ErrBadDirection, dir)
	}
	var v groups = fileGroups{s}
	if s.lg != nil {
		s.lg.mu.Lock()
		if s.lg.closed {
			s.lg.mu.Unlock()
			return Page{}, ErrReleased
		}
		v = s.lg
	}
	first, last := selectGroups(v, anchor, dir, int64(budget))
	var rs []history.Ref
	err := v.err()
	if err == nil && s.lg != nil && first >= 0 {
		rs, err = s.lg.pageRefs(first, last)
	}
	var ag int
	if err == nil && first == -1 {
		ag = anchorGroup(v, anchor)
		err = v.err()
	}
	n := v.n()
	if s.lg != nil {
		s.lg.mu.Unlock()
	}
	if err != nil {
		return Page{}, err
	}
	if first == -2 {
		return Page{}, fmt.Errorf("%w: %q", ErrAnchorNotFound, anchor)
	}
	p := Page{First: first, Last: last, Bytes: dst}
	if first < 0 {
		// Empty: the anchor is at an end of the snapshot, or it has no groups.
		p.First, p.Last = -1, -1
		if g := ag; g >= 0 {
			// Empty because the anchor's group is at that end; the anchor's
			// own group lies on the other side.
			p.HasMoreBefore = dir == After
			p.HasMoreAfter = dir == Before
		}
		return p, nil
	}
	if s.lg != nil {
		b, err := s.lg.compose(p.Bytes, rs)
		if err != nil {
			return Page{}, err
		}
		s.readBytes.Add(int64(len(b) - len(p.Bytes)))
		p.Bytes = b
	} else {
		b, err := s.readFile(p.Bytes, first, last)
		if err != nil {
			return Page{}, err
		}
		p.Bytes = b
	}
	p.HasMoreBefore = first > 0
	p.HasMoreAfter = last < n-1
	for _, c := range s.coverage {
		if overlaps(first, last, c.Group, c.Group) || (c.FromGroup >= 0 && c.ToGroup >= 0 && overlaps(first, last, c.FromGroup, c.ToGroup)) {
			p.Coverage = append(p.Coverage, c)
		}
	}
	for _, l := range s.links {
		if l.Group >= first && l.Group <= last {
			p.Links = append(p.Links, l)
		}
	}
	return p, nil
}

// readFile appends the stored bytes of groups first..last of the
// snapshot's own file to dst.
func (s *Snapshot) readFile(dst []byte, first, last int) ([]byte, error) {
	start := s.groupOff[first]
	end := s.groupOff[last] + int64(s.groupLen[last])
	size := int(end - start)
	dst = slices.Grow(dst, size)
	buf := dst[len(dst) : len(dst)+size]
	s.mu.RLock()
	if s.released {
		s.mu.RUnlock()
		return nil, ErrReleased
	}
	_, err := s.f.ReadAt(buf, start)
	s.mu.RUnlock()
	if err != nil {
		return nil, fmt.Errorf("read snapshot groups %d..%d: %w", first, last, err)
	}
	s.readBytes.Add(int64(size))
	return dst[:len(dst)+size], nil
}

func overlaps(a0, a1, b0, b1 int) bool { return a0 <= b1 && b0 <= a1 }

// groups is what page selection needs of a snapshot's display groups.
type groups interface {
	n() int
	// span is the stored bytes of groups first..last, commas included.
	span(first, last int) int64
	// groupOf is entry id's group, or -1.
	groupOf(id string) int
	// err is the first failure of the calls above (a log-backed
	// snapshot reads its index as it goes); their results are then void.
	err() error
}

// fileGroups are the groups of a snapshot's own file.
type fileGroups struct{ s *Snapshot }

func (f fileGroups) n() int                     { return len(f.s.groupOff) }
func (f fileGroups) span(first, last int) int64 { return f.s.span(first, last) }
func (f fileGroups) groupOf(id string) int      { return f.s.groupOf(id) }
func (f fileGroups) err() error                 { return nil }

// anchorGroup is the anchor's group, -1 for the special anchors.
func anchorGroup(v groups, anchor string) int {
	switch anchor {
	case AnchorLatest, AnchorEarliest:
		return -1
	}
	return v.groupOf(anchor)
}

// span is the byte length of groups first..last as stored, commas included.
func (s *Snapshot) span(first, last int) int64 {
	return s.groupOff[last] + int64(s.groupLen[last]) - s.groupOff[first]
}

// selectGroups picks the page's group range. It returns -1,-1 for an empty
// page and -2 when the anchor is unknown.
func selectGroups(s groups, anchor string, dir Direction, budget int64) (int, int) {
	n := s.n()
	var g int
	switch anchor {
	case AnchorLatest:
		g, dir = n, Before
	case AnchorEarliest:
		g, dir = -1, After
	default:
		g = s.groupOf(anchor)
		if g < 0 {
			return -2, -2
		}
	}
	switch dir {
	case Before:
		if g <= 0 {
			return -1, -1
		}
		first, last := g-1, g-1
		for first > 0 && s.span(first-1, last) <= budget {
			first--
		}
		return first, last
	case After:
		if g >= n-1 {
			return -1, -1
		}
		first, last := g+1, g+1
		for last < n-1 && s.span(first, last+1) <= budget {
			last++
		}
		return first, last
	default: // Around
		first, last := g, g
		for {
			grew := false
			if last < n-1 && s.span(first, last+1) <= budget {
				last++
				grew = true
			}
			if first > 0 && s.span(first-1, last) <= budget {
				first--
				grew = true
			}
			if !grew {
				return first, last
			}
		}
	}
}
