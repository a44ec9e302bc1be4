package pager

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// storedItems is the oracle of the differential test: one full pass over
// the log with history.Scanner, remembering per branch where each accepted
// UI record stored each entry, and the head's document as history reads
// it. Each item carries the entry's stored bytes, as a log-backed
// snapshot must.
func storedItems(t testing.TB, path string) ([]Item, string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type span struct{ start, end int64 }
	where := map[string]map[string]span{history.Main: {}}
	s := history.NewScanner()
	for rec, err := range s.Records(bytes.NewReader(data)) {
		if err != nil {
			t.Fatal(err)
		}
		if !rec.Accepted {
			continue
		}
		if rec.Type == history.TypeBranch {
			c, err := history.Read(bytes.NewReader(data[:rec.End+1]))
			if err != nil {
				t.Fatal(err)
			}
			info, _ := c.BranchInfo(rec.Branch)
			where[rec.Branch] = map[string]span{}
			for id, sp := range where[info.Parent] {
				where[rec.Branch][id] = sp
			}
		}
		for _, st := range rec.Batch {
			where[rec.Branch][st.Entry.ID] = span{st.Start, st.End}
		}
	}
	c, err := history.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var items []Item
	for _, e := range c.Document.Entries() {
		sp, ok := where[c.Head][e.ID]
		if !ok {
			t.Fatalf("entry %q has no stored bytes", e.ID)
		}
		raw := data[sp.start:sp.end]
		if got, err := transcript.DecodeEntry(raw); err != nil || transcript.FingerprintOf(got) != transcript.FingerprintOf(e) {
			t.Fatalf("entry %q stored as %s", e.ID, raw)
		}
		it := Item{ID: e.ID, Kind: e.Content.Kind(), Raw: raw}
		if cp, ok := e.Content.(transcript.Compaction); ok {
			cov := cp.Covers
			it.Covers = &cov
		}
		items = append(items, it)
	}
	return items, c.Head
}

// openLogSnapshot is the server's way: the log's page index, the log file.
func openLogSnapshot(t testing.TB, path string) *Snapshot {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := history.OpenIndex(path, f, 0)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := ix.Document(ix.Head())
	if err != nil {
		t.Fatal(err)
	}
	s, err := FromLog(f, doc)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// samePages pages both snapshots from every anchor, in every direction,
// with small and default budgets, and requires identical pages.
func samePages(t *testing.T, want, got *Snapshot, items []Item) {
	t.Helper()
	if ws, gs := want.Stats(), got.Stats(); ws.Entries != gs.Entries || ws.Groups != gs.Groups || ws.Bytes != gs.Bytes {
		t.Fatalf("stats: full pass %+v, index %+v", ws, gs)
	}
	anchors := []string{AnchorLatest, AnchorEarliest}
	for _, it := range items {
		anchors = append(anchors, it.ID)
	}
	for _, budget := range []int{MinBudget, 64 << 10, DefaultBudget} {
		for _, a := range anchors {
			for _, dir := range []Direction{Before, After, Around} {
				samePage(t, want, got, a, dir, budget)
			}
		}
	}
}

// samePage requires one page of both snapshots to be identical.
func samePage(t *testing.T, want, got *Snapshot, a string, dir Direction, budget int) {
	t.Helper()
	wp, werr := want.Page(nil, a, dir, budget)
	gp, gerr := got.Page(nil, a, dir, budget)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%s %s %d: full pass %v, index %v", a, dir, budget, werr, gerr)
	}
	if !bytes.Equal(wp.Bytes, gp.Bytes) || wp.First != gp.First || wp.Last != gp.Last ||
		wp.HasMoreBefore != gp.HasMoreBefore || wp.HasMoreAfter != gp.HasMoreAfter ||
		!slices.Equal(wp.Coverage, gp.Coverage) {
		t.Fatalf("%s %s %d: pages differ:\nfull pass %d..%d %s %v\nindex     %d..%d %s %v", a, dir, budget,
			wp.First, wp.Last, clip(wp.Bytes), wp.Coverage, gp.First, gp.Last, clip(gp.Bytes), gp.Coverage)
	}
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:150]) + " … " + string(b[len(b)-150:])
	}
	return string(b)
}

func differential(t *testing.T, path string) {
	items, _ := storedItems(t, path)
	want := build(t, t.TempDir(), items, ForceGraph())
	defer want.Release()
	got := openLogSnapshot(t, path)
	defer got.Release()
	if !want.Stats().GraphBuilt {
		want.coverage = nil
	}
	samePages(t, want, got, items)
}

func dataLog(t testing.TB, name string) string {
	p := filepath.Join(t.TempDir(), "data", "conversations", name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLogPagesMatchAFullPassOnGeneratedLogs(t *testing.T) {
	for _, o := range []gen.Options{{Messages: 60, Seed: 1}, {Messages: 400, Seed: 2}, {Messages: 900, Seed: 7}} {
		t.Run(fmt.Sprint(o.Seed), func(t *testing.T) {
			p := dataLog(t, "g.jsonl")
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := gen.Write(f, o); err != nil {
				t.Fatal(err)
			}
			f.Close()
			differential(t, p)
		})
	}
}

func TestLogPagesMatchAFullPassOnFixtures(t *testing.T) {
	var fixtures []string
	for _, pat := range []string{"../../history/testdata/*.jsonl", "../../history/export/testdata/jazz/*.jsonl", "../testdata/*.jsonl"} {
		m, _ := filepath.Glob(pat)
		fixtures = append(fixtures, m...)
	}
	if len(fixtures) < 10 {
		t.Fatalf("found %d fixture logs", len(fixtures))
	}
	for _, fx := range fixtures {
		t.Run(filepath.Base(fx), func(t *testing.T) {
			data, err := os.ReadFile(fx)
			if err != nil {
				t.Fatal(err)
			}
			c, err := history.Read(bytes.NewReader(data))
			if err != nil || c.Header.Version != 3 || c.Derived {
				t.Skip("not paged from its log (version 2, derived, or unreadable)")
			}
			p := dataLog(t, "f.jsonl")
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			differential(t, p)
		})
	}
}

// Jazz-layout logs (conversations/<agentId>/<id>.jsonl) page like a full
// pass through the index folio keeps for them in jazz-sidecars: the first
// snapshot builds it, one after Jazz appended extends the same file, and
// one after that uses it unchanged (a rebuild would rename a new file into
// place). Jazz's agent folder gets no file.
func TestLogPagesOfJazzLayoutLogs(t *testing.T) {
	var fixtures []string
	for _, pat := range []string{"../../history/export/testdata/jazz/*.jsonl", "../../engine/testdata/jazz/*/*.jsonl"} {
		m, _ := filepath.Glob(pat)
		fixtures = append(fixtures, m...)
	}
	paged := 0
	for _, fx := range fixtures {
		data, err := os.ReadFile(fx)
		if err != nil {
			t.Fatal(err)
		}
		c, err := history.Read(bytes.NewReader(data))
		if err != nil || c.Header.Version != 3 || c.Derived || !bytes.HasSuffix(data, []byte("\n")) {
			continue // not paged from its log, or an append would join its last line
		}
		paged++
		t.Run(fx, func(t *testing.T) {
			root := t.TempDir()
			p := filepath.Join(root, "conversations", "coder", "c1.jsonl")
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			ipath := history.IndexPath(p)
			if want := filepath.Join(root, "jazz-sidecars", "coder", "c1.jsonl.index"); ipath != want {
				t.Fatalf("index path %s; want %s", ipath, want)
			}
			differential(t, p)
			built, err := os.Stat(ipath)
			if err != nil {
				t.Fatalf("no index kept: %v", err)
			}
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(`{"type":"ui-append","at":"2026-10-01T10:01:00.000Z","entries":[{"id":"jazz-late","content":{"kind":"user","text":"from jazz"},"timestamp":"2026-10-01T10:01:00.000Z"}]}` + "\n")
			f.Close()
			differential(t, p)
			extended, err := os.Stat(ipath)
			if err != nil || !os.SameFile(built, extended) || extended.Size() <= built.Size() {
				t.Fatalf("after Jazz's append the index was rebuilt or not extended (%v)", err)
			}
			differential(t, p)
			if now, err := os.Stat(ipath); err != nil || !os.SameFile(now, extended) || now.Size() != extended.Size() {
				t.Fatalf("an unchanged log's index was rebuilt or changed (%v)", err)
			}
			if des, err := os.ReadDir(filepath.Dir(p)); err != nil || len(des) != 1 {
				t.Fatalf("Jazz's agent folder holds %v, %v; want only the log", des, err)
			}
		})
	}
	if paged < 20 {
		t.Fatalf("only %d Jazz fixtures paged from their logs", paged)
	}
}

// Random conversations written through history.Log: appends, provisional
// tails, snapshots, forks and head changes.
func TestLogPagesMatchAFullPassOnRandomBranchedLogs(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			p := dataLog(t, "r.jsonl")
			writeRandom(t, p, seed, 80)
			differential(t, p)
		})
	}
}

func writeRandom(t testing.TB, path string, seed uint64, steps int) {
	t.Helper()
	rnd := rand.New(rand.NewPCG(seed, 99))
	clock := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	l, err := history.Open(path, history.WithClock(func() time.Time { clock = clock.Add(time.Second); return clock }))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	n := 0
	next := func() transcript.Entry {
		n++
		e := transcript.Entry{ID: fmt.Sprintf("e%d", n), Timestamp: clock}
		switch rnd.IntN(4) {
		case 0:
			e.Content = transcript.User{Text: fmt.Sprintf("question %d", n)}
		case 1:
			e.Content = transcript.Compaction{Summary: "earlier", Covers: transcript.CompactionRange{FromID: "e1", ToID: fmt.Sprintf("e%d", max(1, n-2))}}
		default:
			e.Content = transcript.Agent{Markdown: fmt.Sprintf("answer %d %s", n, bytes.Repeat([]byte("x"), rnd.IntN(3000)))}
		}
		return e
	}
	for step := range steps {
		c, err := l.Load()
		if err != nil {
			t.Fatal(err)
		}
		d := c.Document
		switch r := rnd.IntN(10); {
		case r < 6:
			for range 1 + rnd.IntN(3) {
				if d, err = d.Append(next()); err != nil {
					t.Fatal(err)
				}
			}
		case r == 6:
			if d, err = d.Open(transcript.Entry{ID: fmt.Sprintf("o%d", step), Content: transcript.Agent{Markdown: "partial"}, Timestamp: clock}); err != nil {
				t.Fatal(err)
			}
		case r == 7 && d.Len() > 0:
			if _, err := l.Fork(c.Head, d.At(rnd.IntN(d.Len())).ID, 0, ""); err != nil {
				t.Fatal(err)
			}
			continue
		case r == 8 && len(c.Branches) > 1:
			if _, err := l.SetHead(c.Branches[rnd.IntN(len(c.Branches))].ID); err != nil {
				t.Fatal(err)
			}
			continue
		default:
			es := d.Entries()
			if len(es) > 3 {
				es = slices.Delete(es, 1, 2)
			}
			if d, err = transcript.NewDocument(d.ID(), append(es, next())); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Save(d, []message.Message{message.Text(message.User, "m")}); err != nil {
			t.Fatal(err)
		}
	}
}

// A page asked for first around an anchor before the last entries a
// snapshot starts with is read from a window of refs up to the anchor,
// not from the end back to it. Each anchor here is the first one its
// snapshot pages, so every direction starts from such a window; the pages
// must still be the full pass's.
func TestFirstPageAtEachAnchorMatchesAFullPass(t *testing.T) {
	p := dataLog(t, "g.jsonl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gen.Write(f, gen.Options{Messages: 3000, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	firstPages(t, p, 2000, 7)
}

// firstPages pages every step-th anchor of the log at path (at least min
// entries) first from a fresh snapshot, in each direction.
func firstPages(t *testing.T, p string, least, step int) {
	items, _ := storedItems(t, p)
	if len(items) < least {
		t.Fatalf("%d entries: too few for anchors before the first refs", len(items))
	}
	want := build(t, t.TempDir(), items, ForceGraph())
	defer want.Release()
	if !want.Stats().GraphBuilt {
		want.coverage = nil
	}
	for i := 0; i < len(items); i += step {
		for _, budget := range []int{MinBudget, DefaultBudget} {
			for _, dir := range []Direction{Before, After, Around} {
				got := openLogSnapshot(t, p)
				samePage(t, want, got, items[i].ID, dir, budget)
				got.Release()
			}
		}
	}
}
