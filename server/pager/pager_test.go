package pager

import (
	"bytes"
	"errors"
	"iter"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/transcript"
)

// genItems yields n generated entries as items, plus the entries.
func genItems(t testing.TB, n int) ([]Item, []transcript.Entry) {
	t.Helper()
	var items []Item
	var entries []transcript.Entry
	for e := range gen.Entries(gen.Options{Messages: n, Seed: 3}) {
		raw, err := transcript.EncodeEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		it := Item{ID: e.ID, Kind: e.Content.Kind(), Raw: raw}
		if c, ok := e.Content.(transcript.Compaction); ok {
			cov := c.Covers
			it.Covers = &cov
		}
		items = append(items, it)
		entries = append(entries, e)
	}
	return items, entries
}

func seq(items []Item) iter.Seq2[Item, error] {
	return func(yield func(Item, error) bool) {
		for _, it := range items {
			if !yield(it, nil) {
				return
			}
		}
	}
}

func build(t testing.TB, dir string, items []Item, opts ...Option) *Snapshot {
	t.Helper()
	s, err := Build(dir, seq(items), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type group struct {
	Index   int              `json:"index"`
	Entries []jsontext.Value `json:"entries"`
	Bytes   int              `json:"bytes"`
}

func decodePage(t testing.TB, p Page) []group {
	t.Helper()
	var raw []jsontext.Value
	if err := json.Unmarshal(append(append([]byte{'['}, p.Bytes...), ']'), &raw); err != nil {
		t.Fatalf("page bytes are not groups: %v", err)
	}
	gs := make([]group, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &gs[i], json.RejectUnknownMembers(true)); err != nil {
			t.Fatalf("page bytes are not groups: %v", err)
		}
		// Each group states its own stored size, exactly.
		if gs[i].Bytes != len(r) {
			t.Fatalf("group %d says it is %d bytes; it is %d", gs[i].Index, gs[i].Bytes, len(r))
		}
	}
	return gs
}

// wantGroups cuts entries into display groups the way the protocol defines
// them, independently of Build.
func wantGroups(entries []transcript.Entry) [][]string {
	var out [][]string
	prevUser := false
	for i, e := range entries {
		user := e.Content.Kind() == transcript.KindUser
		if i == 0 || user || prevUser {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], e.ID)
		prevUser = user
	}
	return out
}

func firstID(t testing.TB, g group) string {
	e, err := transcript.DecodeEntry(g.Entries[0])
	if err != nil {
		t.Fatal(err)
	}
	return e.ID
}

func TestPagingBothWaysVisitsEveryGroupOnce(t *testing.T) {
	t.Parallel()
	items, entries := genItems(t, 10000)
	want := wantGroups(entries)
	s := build(t, t.TempDir(), items)
	defer s.Release()
	if s.Stats().Groups != len(want) || s.Stats().Entries != len(entries) {
		t.Fatalf("stats %+v, want %d groups", s.Stats(), len(want))
	}
	for _, budget := range []int{MinBudget, 64 << 10, DefaultBudget} {
		// Forward from the start.
		seen := make([]int, len(want))
		var read int64
		before := s.ReadBytes()
		anchor, dir := AnchorEarliest, After
		for {
			p, err := s.Page(nil, anchor, dir, budget)
			if err != nil {
				t.Fatal(err)
			}
			if p.First < 0 {
				break
			}
			read += int64(len(p.Bytes))
			gs := decodePage(t, p)
			if len(gs) > 1 && len(p.Bytes) > budget {
				t.Fatalf("budget %d: page of %d groups has %d bytes", budget, len(gs), len(p.Bytes))
			}
			for i, g := range gs {
				if g.Index != p.First+i {
					t.Fatalf("group index %d at position %d of page starting %d", g.Index, i, p.First)
				}
				seen[g.Index]++
				if len(g.Entries) != len(want[g.Index]) {
					t.Fatalf("group %d has %d entries, want %d", g.Index, len(g.Entries), len(want[g.Index]))
				}
			}
			if p.HasMoreAfter != (p.Last < len(want)-1) || p.HasMoreBefore != (p.First > 0) {
				t.Fatalf("hasMore wrong on %d..%d", p.First, p.Last)
			}
			anchor = want[p.Last][len(want[p.Last])-1]
			if !p.HasMoreAfter {
				break
			}
		}
		for g, n := range seen {
			if n != 1 {
				t.Fatalf("budget %d forward: group %d seen %d times", budget, g, n)
			}
		}
		if got := s.ReadBytes() - before; got != read {
			t.Fatalf("page reads read %d bytes from the file, pages hold %d: something scanned", got, read)
		}
		// Backward from the end.
		clear(seen)
		anchor, dir = AnchorLatest, Before
		for {
			p, err := s.Page(nil, anchor, dir, budget)
			if err != nil {
				t.Fatal(err)
			}
			if p.First < 0 {
				break
			}
			gs := decodePage(t, p)
			for _, g := range gs {
				seen[g.Index]++
			}
			anchor = firstID(t, gs[0])
			if !p.HasMoreBefore {
				break
			}
		}
		for g, n := range seen {
			if n != 1 {
				t.Fatalf("budget %d backward: group %d seen %d times", budget, g, n)
			}
		}
	}
}

func TestLargeGroupComesAloneAndWhole(t *testing.T) {
	t.Parallel()
	items, entries := genItems(t, 4000) // has a ~300 KiB turn at 1,000, 2,000 and 3,000
	s := build(t, t.TempDir(), items)
	defer s.Release()
	want := wantGroups(entries)
	found := false
	for g := range want {
		p, err := s.Page(nil, want[g][0], Around, MinBudget)
		if err != nil {
			t.Fatal(err)
		}
		if p.First > g || p.Last < g {
			t.Fatalf("around page %d..%d misses its anchor group %d", p.First, p.Last, g)
		}
		if len(p.Bytes) > MinBudget {
			found = true
			if p.First != p.Last {
				t.Fatalf("over-budget page holds groups %d..%d", p.First, p.Last)
			}
			if n := len(decodePage(t, p)[0].Entries); n != len(want[g]) {
				t.Fatalf("large group split: %d of %d entries", n, len(want[g]))
			}
		}
	}
	if !found {
		t.Fatal("no group exceeded the budget; the test proves nothing")
	}
}

func TestPageErrors(t *testing.T) {
	t.Parallel()
	items, _ := genItems(t, 100)
	s := build(t, t.TempDir(), items)
	for _, c := range []struct {
		anchor string
		dir    Direction
		budget int
		want   error
	}{
		{"nope", Before, 0, ErrAnchorNotFound},
		{AnchorLatest, "sideways", 0, ErrBadDirection},
		{AnchorLatest, Before, 100, ErrBadBudget},
		{AnchorLatest, Before, MaxBudget + 1, ErrBadBudget},
	} {
		if _, err := s.Page(nil, c.anchor, c.dir, c.budget); !errors.Is(err, c.want) {
			t.Errorf("%q %q %d: got %v, want %v", c.anchor, c.dir, c.budget, err, c.want)
		}
	}
	s.Release()
	if _, err := s.Page(nil, AnchorLatest, Before, 0); !errors.Is(err, ErrReleased) {
		t.Fatalf("page after release: %v", err)
	}
}

func TestEmptyPagesAtTheEnds(t *testing.T) {
	t.Parallel()
	items, entries := genItems(t, 50)
	s := build(t, t.TempDir(), items)
	defer s.Release()
	p, err := s.Page(nil, entries[0].ID, Before, 0)
	if err != nil || p.First != -1 || p.HasMoreBefore || !p.HasMoreAfter || len(p.Bytes) != 0 {
		t.Fatalf("before the first group: %+v %v", p, err)
	}
	p, err = s.Page(nil, entries[len(entries)-1].ID, After, 0)
	if err != nil || p.First != -1 || !p.HasMoreBefore || p.HasMoreAfter {
		t.Fatalf("after the last group: %+v %v", p, err)
	}
	empty := build(t, t.TempDir(), nil)
	defer empty.Release()
	p, err = empty.Page(nil, AnchorLatest, Before, 0)
	if err != nil || p.First != -1 || p.HasMoreBefore || p.HasMoreAfter {
		t.Fatalf("empty snapshot: %+v %v", p, err)
	}
}

func countFiles(t testing.TB, dir string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

func TestLRUReleasesFilesAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	items, _ := genItems(t, 200)
	l := NewLRU(0)
	for i := range 6 {
		ev := l.Add(string(rune('a'+i)), build(t, dir, items))
		if i >= DefaultLRUSize && len(ev) != 1 {
			t.Fatalf("add %d evicted %v", i, ev)
		}
		if n := countFiles(t, dir); n != min(i+1, DefaultLRUSize) {
			t.Fatalf("after %d adds: %d files", i+1, n)
		}
	}
	if _, ok := l.Get("a"); ok {
		t.Fatal("evicted token still answers")
	}
	s, ok := l.Get("f")
	if !ok {
		t.Fatal("newest token missing")
	}
	// Replacing under the same token releases the old snapshot, but a
	// reader holding a reference keeps it readable until it lets go.
	l.Add("f", build(t, dir, items))
	if _, err := s.Page(nil, AnchorLatest, Before, 0); err != nil {
		t.Fatalf("held snapshot unreadable: %v", err)
	}
	s.Release()
	if n := countFiles(t, dir); n != DefaultLRUSize {
		t.Fatalf("after replacement: %d files", n)
	}
	l.Remove("e")
	if n := countFiles(t, dir); n != DefaultLRUSize-1 {
		t.Fatalf("after remove: %d files", n)
	}
	l.Close()
	if n := countFiles(t, dir); n != 0 {
		t.Fatalf("after close: %d files left", n)
	}
}

func TestGraphSkippedWithIdenticalPages(t *testing.T) {
	t.Parallel()
	items, entries := genItems(t, 3000)
	for _, it := range items {
		if it.Covers != nil {
			t.Fatal("fixture has a compaction; pick a smaller one")
		}
	}
	plain := build(t, t.TempDir(), items)
	defer plain.Release()
	forced := build(t, t.TempDir(), items, ForceGraph())
	defer forced.Release()
	if plain.Stats().GraphBuilt || !forced.Stats().GraphBuilt {
		t.Fatalf("graph built: plain %v forced %v", plain.Stats().GraphBuilt, forced.Stats().GraphBuilt)
	}
	for i := 0; i < len(entries); i += 37 {
		for _, dir := range []Direction{Before, After, Around} {
			a, err := plain.Page(nil, entries[i].ID, dir, MinBudget)
			if err != nil {
				t.Fatal(err)
			}
			b, err := forced.Page(nil, entries[i].ID, dir, MinBudget)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes, b.Bytes) || a.First != b.First || a.Last != b.Last ||
				len(a.Coverage)+len(b.Coverage)+len(a.Links)+len(b.Links) != 0 {
				t.Fatalf("pages differ at %s %s", entries[i].ID, dir)
			}
		}
	}
}

func TestCompactionCoverageIsAnnotated(t *testing.T) {
	t.Parallel()
	items, _ := genItems(t, 8000)
	s := build(t, t.TempDir(), items)
	defer s.Release()
	if !s.Stats().GraphBuilt {
		t.Fatal("a log with compactions skipped the graph")
	}
	var cov *Item
	for i := range items {
		if items[i].Covers != nil {
			cov = &items[i]
			break
		}
	}
	if cov == nil {
		t.Fatal("fixture has no compaction")
	}
	p, err := s.Page(nil, cov.Covers.FromID, Around, MinBudget)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Coverage) == 0 || p.Coverage[0].EntryID != cov.ID || p.Coverage[0].FromGroup != s.GroupOf(cov.Covers.FromID) {
		t.Fatalf("page over the covered range has coverage %+v", p.Coverage)
	}
}

func TestResetSupersedesEarlierItems(t *testing.T) {
	t.Parallel()
	items, _ := genItems(t, 300)
	all := append(append(append([]Item{}, items[:200]...), Item{Reset: true}), items[200:]...)
	s := build(t, t.TempDir(), all)
	defer s.Release()
	if s.Stats().Entries != 100 || s.GroupOf(items[0].ID) != -1 || s.GroupOf(items[250].ID) < 0 {
		t.Fatalf("after reset: %+v", s.Stats())
	}
	info, _ := os.Stat(s.Path())
	if info.Size() != s.Stats().Bytes {
		t.Fatalf("file has %d bytes, index says %d", info.Size(), s.Stats().Bytes)
	}
}

func TestBuildRejectsBadItems(t *testing.T) {
	t.Parallel()
	items, _ := genItems(t, 20)
	dir := t.TempDir()
	for name, bad := range map[string][]Item{
		"repeated id": append(append([]Item{}, items...), items[3]),
		"no bytes":    {{ID: "x", Kind: transcript.KindUser}},
	} {
		if _, err := Build(dir, seq(bad)); !errors.Is(err, ErrBadItem) {
			t.Errorf("%s: got %v", name, err)
		}
	}
	if n := countFiles(t, dir); n != 0 {
		t.Fatalf("failed builds left %d files", n)
	}
}
