package history

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/foliodev/folio/internal/gen"
)

// readForward reads d's refs from lo to the end through a cursor, n at a
// time.
func readForward(d *IndexDoc, lo, n int) ([]Ref, *RefCursor, error) {
	c, err := d.Forward(lo)
	if err != nil {
		return nil, nil, err
	}
	var out []Ref
	for {
		refs, err := c.Next(n)
		if err != nil {
			return nil, c, err
		}
		if len(refs) == 0 {
			return out, c, nil
		}
		out = append(out, refs...)
	}
}

// A forward cursor reads the refs the backward read gives, from any entry
// on, in every branch of generated and fixture logs (long ones across
// many checkpoints), whatever it is asked for at a time.
func TestForwardCursorReadsTheIndexRefs(t *testing.T) {
	var paths []string
	for _, n := range []int{7, 300, 4000} {
		p := filepath.Join(t.TempDir(), "conversations", fmt.Sprintf("gen%d.jsonl", n))
		writeGen(t, p, gen.Options{Messages: n, Seed: uint64(n)})
		paths = append(paths, p)
	}
	for _, fx := range fixtureLogs(t) {
		p := logPath(t)
		writeLog(t, p, readFile(t, fx))
		paths = append(paths, p)
	}
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		ix, err := OpenIndex(path, f, 0)
		if errors.Is(err, ErrNotPaged) {
			f.Close()
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		c, err := ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range c.Branches {
			d, err := ix.Document(b.ID)
			if errors.Is(err, ErrNotPaged) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			want, err := d.Refs(0, d.Len())
			if err != nil {
				t.Fatal(err)
			}
			n := d.Len()
			for _, lo := range []int{0, 1, n / 3, n - cursorStride - 1, n - cursorStride, n - 2, n - 1, n} {
				if lo < 0 || lo > n {
					continue
				}
				for _, step := range []int{1, 7, 1000} {
					fresh, err := ix.Document(b.ID)
					if err != nil {
						t.Fatal(err)
					}
					got, cur, err := readForward(fresh, lo, step)
					if err != nil {
						t.Fatalf("%s branch %s from %d by %d: %v", filepath.Base(path), b.ID, lo, step, err)
					}
					if !slices.Equal(got, want[lo:]) {
						t.Fatalf("%s branch %s from %d by %d: the cursor read other refs", filepath.Base(path), b.ID, lo, step)
					}
					if cur.Pos() != n {
						t.Fatalf("%s: the cursor ends at %d of %d", filepath.Base(path), cur.Pos(), n)
					}
				}
			}
		}
		ix.Close()
		f.Close()
	}
}

// A cursor holds a checkpoint per cursorStride frames, not the refs.
func TestForwardCursorHoldsCheckpointsNotRefs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "conversations", "c1.jsonl")
	writeGen(t, path, gen.Options{Messages: 6000, Seed: 5})
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ix, err := OpenIndex(path, f, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	d, err := ix.Document(ix.Head())
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.Forward(0)
	if err != nil {
		t.Fatal(err)
	}
	if d.Settled() < 4*cursorStride {
		t.Fatalf("only %d settled entries: the test needs several checkpoints", d.Settled())
	}
	if max := d.Settled()/cursorStride + 1; len(c.marks) > max {
		t.Fatalf("the cursor holds %d checkpoints for %d entries, more than %d", len(c.marks), d.Settled(), max)
	}
	if d.loaded != nil || d.ix.data != nil {
		t.Fatal("the cursor loaded the refs or the whole index")
	}
	if _, err := c.Next(10); err != nil {
		t.Fatal(err)
	}
	if len(c.seg) > cursorStride {
		t.Fatalf("the cursor holds %d runs ahead", len(c.seg))
	}
}

// A damaged index never gives a cursor other refs: a damaged head is
// found as the cursor starts (and the index rebuilt from the log), a
// damaged frame as it is read (an error).
func TestForwardCursorOnADamagedIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c1.jsonl")
	writeGen(t, path, gen.Options{Messages: 8, Seed: 3})
	ix := checkIndex(t, path)
	if err := os.WriteFile(IndexPath(path), ix.mem, 0o600); err != nil {
		t.Fatal(err)
	}
	want := refsOf_(t, ix)
	good := readFile(t, IndexPath(path))
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for off := range len(good) {
		bad := bytes.Clone(good)
		bad[off] ^= 0x5a
		if err := os.WriteFile(IndexPath(path), bad, 0o600); err != nil {
			t.Fatal(err)
		}
		ix, err := OpenIndex(path, f, 0)
		if err != nil {
			t.Fatalf("flip at %d: %v", off, err)
		}
		d, err := ix.Document(ix.Head())
		if err != nil {
			t.Fatalf("flip at %d: %v", off, err)
		}
		got, _, err := readForward(d, 0, 3)
		ix.Close()
		if err == nil && !slices.Equal(got, want) {
			t.Fatalf("flip at %d: the cursor read other refs", off)
		}
		if err != nil && !errors.Is(err, ErrIndexDamaged) {
			t.Fatalf("flip at %d: %v, want a damaged index", off, err)
		}
	}
}

// A read far back from the end (the terminal's pager scrolled a long way,
// Home) goes through a cursor: it gives the refs a whole walk gives, at
// any position, without reading the whole index file.
func TestFarBackRefsReadThroughACursor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "conversations", "far.jsonl")
	writeGen(t, path, gen.Options{Messages: 20_000, Seed: 3})
	checkIndex(t, path)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ix, err := OpenIndex(path, f, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	whole, err := ix.Document(ix.Head())
	if err != nil {
		t.Fatal(err)
	}
	all, err := whole.Refs(0, whole.Len())
	if err != nil {
		t.Fatal(err)
	}
	ix.data = nil // what the whole read above kept
	n := len(all)
	if n < 2*farBack {
		t.Fatalf("only %d entries", n)
	}
	for _, lo := range []int{0, 1, 63, 64, 1000, n / 2, n - farBack - 2} {
		d, err := ix.Document(ix.Head())
		if err != nil {
			t.Fatal(err)
		}
		hi := min(n, lo+50)
		got, err := d.Refs(lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, all[lo:hi]) {
			t.Errorf("refs %d..%d differ from the whole walk's", lo, hi)
		}
		es, err := d.Entries(f, lo, hi)
		if err != nil || len(es) != hi-lo || es[0].ID != all[lo].ID {
			t.Errorf("entries %d..%d: %v", lo, hi, err)
		}
	}
	if ix.data != nil {
		t.Error("a far-back read read the whole index file")
	}
}

// BenchmarkFarBackPage reads one page of 50 entries a tenth of the way
// into a conversation, as the terminal's pager does (HeadEntries: the
// index opened, the page read), at 3,000 and 300,000 messages.
func BenchmarkFarBackPage(b *testing.B) {
	for _, n := range []int{3_000, 300_000} {
		path := filepath.Join(b.TempDir(), "conversations", fmt.Sprintf("far%d.jsonl", n))
		writeGen(b, path, gen.Options{Messages: n, Seed: 2})
		checkIndex(b, path)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := HeadEntries(path, n/10, n/10+50); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// HeadEntriesAround reads the same entries and sizes as HeadEntries does at
// the page it names, for entries near the start, the middle and the end of
// a head, and refuses an entry past limit or not in the head.
func TestHeadEntriesAroundAgreesWithHeadEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "conversations", "around.jsonl")
	writeGen(t, path, gen.Options{Messages: 600, Seed: 3})
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := l.Load()
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	all := c.Document.Entries()
	n := len(all)
	for _, at := range []int{0, 1, n / 2, n - 2, n - 1} {
		lo, got, es, sizes, err := HeadEntriesAround(path, all[at].ID, 40, n)
		if err != nil || got != at {
			t.Fatalf("entry %d: at %d, %v", at, got, err)
		}
		want, wantSizes, err := HeadEntries(path, lo, min(lo+40, n))
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != len(want) || !slices.Equal(sizes, wantSizes) || lo > at || at >= lo+len(es) {
			t.Fatalf("entry %d: page %d+%d, want %d entries with the same sizes", at, lo, len(es), len(want))
		}
		for i := range es {
			if es[i].ID != want[i].ID {
				t.Fatalf("entry %d: position %d is %s, want %s", at, lo+i, es[i].ID, want[i].ID)
			}
		}
	}
	if lo, at, es, _, err := HeadEntriesAround(path, all[n/2].ID, 40, n/2); err != nil || lo != -1 || at != n/2 || es != nil {
		t.Errorf("an entry at limit: lo %d at %d, %d entries, %v", lo, at, len(es), err)
	}
	if lo, at, _, _, err := HeadEntriesAround(path, "no-such-entry", 40, n); err != nil || lo != -1 || at != -1 {
		t.Errorf("an unknown entry: lo %d at %d, %v", lo, at, err)
	}
}
