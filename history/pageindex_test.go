package history

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/transcript"
)

// checkIndex opens the page index of the log at path and compares every
// branch's document in it with a full read of the log: the same entries in
// the same order, each one's stored bytes decoding to the entry read, and
// turns numbered by the rule.
func checkIndex(t testing.TB, path string) *Index {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ix, err := OpenIndex(path, f, 0)
	if err != nil {
		t.Fatalf("OpenIndex: %v", err)
	}
	t.Cleanup(func() { ix.Close() })
	data := readFile(t, path)
	c, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if ix.LogSize() != int64(len(data)) && data[len(data)-1] == '\n' {
		t.Fatalf("index describes %d bytes; the log has %d", ix.LogSize(), len(data))
	}
	if ix.Head() != c.Head {
		t.Fatalf("index head %q; log head %q", ix.Head(), c.Head)
	}
	for _, b := range c.Branches {
		want, _, err := c.Branch(b.ID)
		if err != nil {
			t.Fatal(err)
		}
		d, err := ix.Document(b.ID)
		if errors.Is(err, ErrNotPaged) && c.Derived {
			continue
		}
		if err != nil {
			t.Fatalf("branch %s: %v", b.ID, err)
		}
		if d.Len() != want.Len() {
			t.Fatalf("branch %s: index has %d entries; the log %d", b.ID, d.Len(), want.Len())
		}
		refs, err := d.Refs(0, d.Len())
		if err != nil {
			t.Fatalf("branch %s: %v", b.ID, err)
		}
		if err := checkTurns(refs); err != nil {
			t.Fatalf("branch %s: %v", b.ID, err)
		}
		for i, r := range refs {
			e := want.At(i)
			stored := data[r.Start : r.Start+int64(r.Len)]
			got, err := transcript.DecodeEntry(stored)
			if err != nil || r.ID != e.ID || transcript.FingerprintOf(got) != transcript.FingerprintOf(e) {
				t.Fatalf("branch %s entry %d: index %q at %d..%d = %s (%v); log has %q", b.ID, i, r.ID, r.Start, r.Start+int64(r.Len), stored, err, e.ID)
			}
			if r.User != (e.Content.Kind() == transcript.KindUser) {
				t.Fatalf("branch %s entry %d: user flag wrong", b.ID, i)
			}
		}
	}
	return ix
}

func writeGen(t testing.TB, path string, o gen.Options) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gen.Write(f, o); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestIndexOfGeneratedLogs(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			path := logPath(t)
			writeGen(t, path, gen.Options{Messages: 50 + int(seed)*97, Seed: seed})
			checkIndex(t, path)
			if _, err := os.Stat(IndexPath(path)); err != nil {
				t.Fatalf("no index written beside the log: %v", err)
			}
		})
	}
}

// The fixture logs folio and Jazz wrote, copied into a data folder.
func fixtureLogs(t testing.TB) []string {
	var out []string
	for _, pat := range []string{"testdata/*.jsonl", "export/testdata/jazz/*.jsonl"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	return out
}

func TestIndexOfFixtureLogs(t *testing.T) {
	for _, fx := range fixtureLogs(t) {
		t.Run(filepath.Base(fx), func(t *testing.T) {
			path := logPath(t)
			writeLog(t, path, readFile(t, fx))
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			c, err := ReadFile(path)
			if err != nil {
				t.Skip("not a readable log:", err)
			}
			if c.Header.Version == 2 {
				if _, err := OpenIndex(path, f, 0); !errors.Is(err, ErrNotPaged) {
					t.Fatalf("a version 2 log: %v; want ErrNotPaged", err)
				}
				return
			}
			checkIndex(t, path)
		})
	}
}

// A writer's saves (appends, provisional tails, snapshots, messages),
// forks and head changes keep the index current by extending it: it always
// matches a full read, and nothing is rebuilt.
func TestWriterExtendsTheIndex(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	path := logPath(t)
	l := open(t, path)
	n := 0
	next := func() transcript.Entry {
		n++
		if rnd.IntN(3) == 0 {
			return user(fmt.Sprintf("u%d", n), "q")
		}
		return agent(fmt.Sprintf("a%d", n), "answer")
	}
	if err := l.Save(doc(t, next()), nil); err != nil {
		t.Fatal(err)
	}
	l.flushIndex() // the first write builds the index
	before := indexRebuilds.Load() - indexCompactions.Load()
	for step := range 150 {
		c, err := l.Load()
		if err != nil {
			t.Fatal(err)
		}
		d, m := c.Document, c.Messages
		switch r := rnd.IntN(12); {
		case r < 5:
			d = appendAll(t, d, next(), next())
			m = append(m, msgs("more")...)
		case r < 7:
			d = appendAll(t, d, next())
			if d, err = d.Open(agent(fmt.Sprintf("open%d", step), "partial")); err != nil {
				t.Fatal(err)
			}
		case r < 9:
			if d.Len() > 1 {
				at := d.At(rnd.IntN(d.Len())).ID
				if _, err := l.Fork(c.Head, at, rnd.IntN(len(m)+1), "b"); err != nil {
					t.Fatal(err)
				}
			}
			l.flushIndex()
			checkIndex(t, path)
			continue
		case r < 10:
			if len(c.Branches) > 1 {
				if _, err := l.SetHead(c.Branches[rnd.IntN(len(c.Branches))].ID); err != nil {
					t.Fatal(err)
				}
			}
			l.flushIndex()
			checkIndex(t, path)
			continue
		default:
			// A snapshot: drop an entry from the middle.
			es := d.Entries()
			if len(es) > 2 {
				es = append(es[:1], es[2:]...)
			}
			d = doc(t, append(es, next())...)
		}
		if err := l.Save(d, m); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		l.flushIndex()
		checkIndex(t, path)
	}
	// Dropping superseded commits (indexWriter.compact) is no rebuild.
	if got := indexRebuilds.Load() - indexCompactions.Load() - before; got != 0 {
		t.Fatalf("%d rebuilds while a writer kept the index; want 0", got)
	}
}

// An index older than its log (records appended by another program) is
// extended from where it ends, not rebuilt.
func TestOlderIndexIsExtended(t *testing.T) {
	path := logPath(t)
	writeGen(t, path, gen.Options{Messages: 300, Seed: 9})
	checkIndex(t, path)
	f, err := openAppend(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		fmt.Fprintf(f, "%s\n", uiRec(TypeUIAppend, entryJSON(t, agent(fmt.Sprintf("late%d", i), "late"))))
	}
	f.Close()
	before := indexRebuilds.Load()
	checkIndex(t, path)
	if got := indexRebuilds.Load() - before; got != 0 {
		t.Fatalf("%d rebuilds of an index older than its log; want it extended", got)
	}
	// And the extension was written back: the next open needs nothing.
	checkIndex(t, path)
	if got := indexRebuilds.Load() - before; got != 0 {
		t.Fatalf("%d rebuilds after the extension", got)
	}
}

// An index cut short or with any byte changed is never used: opening
// rebuilds it (or finds it still describes the log exactly), and the
// documents it gives match a full read every time.
func TestDamagedIndexIsRebuilt(t *testing.T) {
	// Outside a data folder a rebuilt index stays in memory, which spares
	// the test an fsync per offset; the damaged file is read every time.
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
		for _, mode := range []string{"truncate", "flip"} {
			bad := bytes.Clone(good)
			if mode == "truncate" {
				bad = bad[:off]
			} else {
				bad[off] ^= 0x5a
			}
			if err := os.WriteFile(IndexPath(path), bad, 0o600); err != nil {
				t.Fatal(err)
			}
			before := indexRebuilds.Load()
			ix, err := OpenIndex(path, f, 0)
			if err != nil {
				t.Fatalf("%s at %d: %v", mode, off, err)
			}
			got := refsOf_(t, ix)
			ix.Close()
			if !slices.Equal(got, want) {
				t.Fatalf("%s at %d: the index gave other entries", mode, off)
			}
			if frameKindAt(good, off) == frameTable && mode == "flip" {
				// Only a writer resuming after its own appends reads the
				// ID table, a bucket at a time: every bucket is checked.
				if err := checkIDTable(bad); err == nil && !inFrameCRC(good, off) {
					t.Fatalf("flip at %d: the ID table's damage went unnoticed", off)
				}
				continue
			}
			if frameKindAt(good, off) == frameMessages && mode == "flip" {
				// No page reads main's messages: the tail read, which
				// does, refuses the index and reads the log instead.
				if _, err := readTail(path, 4, nil); err == nil {
					t.Fatalf("flip at %d: the tail read used a damaged message frame", off)
				}
				continue
			}
			if indexRebuilds.Load() == before {
				t.Fatalf("%s at %d: the damaged index was used, not rebuilt", mode, off)
			}
		}
	}
}

// frameKindAt is the kind of the frame of a whole index file that byte
// off is in (0 for the magic and trailers).
func frameKindAt(data []byte, off int) byte {
	pos := len(indexMagic)
	for pos+frameHeadLen <= len(data) {
		if string(data[pos:pos+4]) == string(trailerMagic) {
			pos += trailerLen
			continue
		}
		end := pos + frameHeadLen + int(binary.LittleEndian.Uint32(data[pos:])) + 4
		if off >= pos && off < end {
			return data[pos+4]
		}
		pos = end
	}
	return 0
}

// checkIDTable reads every bucket of the ID table of a whole index file
// as a lookup does.
func checkIDTable(data []byte) error {
	st, _, err := decodeTrailer(data)
	if err != nil {
		return err
	}
	t, err := openIDTable(bytes.NewReader(data), int64(len(data)), st.tables)
	if err != nil {
		return err
	}
	for _, s := range t.segs {
		for b := range s.n {
			if _, err := s.bucket(b); err != nil {
				return err
			}
		}
	}
	return nil
}

// inFrameCRC reports whether byte off of a whole index file is in the
// CRC that ends its frame.
func inFrameCRC(data []byte, off int) bool {
	pos := len(indexMagic)
	for pos+frameHeadLen <= len(data) {
		if string(data[pos:pos+4]) == string(trailerMagic) {
			pos += trailerLen
			continue
		}
		end := pos + frameHeadLen + int(binary.LittleEndian.Uint32(data[pos:])) + 4
		if off >= end-4 && off < end {
			return true
		}
		pos = end
	}
	return false
}

// refsOf_ reads the head's whole document from an index.
func refsOf_(t testing.TB, ix *Index) []Ref {
	t.Helper()
	d, err := ix.Document(ix.Head())
	if err != nil {
		t.Fatal(err)
	}
	refs, err := d.Refs(0, d.Len())
	if err != nil {
		t.Fatal(err)
	}
	return refs
}

// A writer that loads a log without an index builds it in the same pass
// (one rebuild, no second read at the first save), and its saves extend it.
func TestWriterLoadBuildsTheIndexOnce(t *testing.T) {
	path := logPath(t)
	writeGen(t, path, gen.Options{Messages: 200, Seed: 11})
	before := indexRebuilds.Load()
	l := open(t, path)
	c, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(IndexPath(path)); err != nil {
		t.Fatalf("Load left no index: %v", err)
	}
	if err := l.Save(appendAll(t, c.Document, agent("late", "more")), c.Messages); err != nil {
		t.Fatal(err)
	}
	l.flushIndex()
	if got := indexRebuilds.Load() - before; got != 1 {
		t.Fatalf("%d rebuilds; want the one Load's pass made", got)
	}
	checkIndex(t, path)
	if got := indexRebuilds.Load() - before; got != 1 {
		t.Fatalf("%d rebuilds after the save; the save should have extended it", got)
	}
}

// A reader looking at an earlier length of the log than the writer has
// indexed (it read up to there, or stopped inside a write) gets the index
// as of that length, from the commit at or before it, never a rebuild.
func TestIndexAtEveryEarlierLength(t *testing.T) {
	path := logPath(t)
	first := writeRandomSaves(t, path, 40)
	data := readFile(t, path)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	before := indexRebuilds.Load()
	for off := range len(data) + 1 {
		if off > 0 && data[off-1] != '\n' {
			continue
		}
		if off < int(first) {
			continue // inside the write that created the log: no commit before it
		}
		c, err := Read(bytes.NewReader(data[:off]))
		if err != nil {
			t.Fatal(err)
		}
		ix, err := OpenIndex(path, f, int64(off))
		if err != nil {
			t.Fatalf("at %d: %v", off, err)
		}
		if ix.LogSize() != int64(off) || ix.Head() != c.Head {
			t.Fatalf("at %d: index describes %d bytes, head %q; want head %q", off, ix.LogSize(), ix.Head(), c.Head)
		}
		d, err := ix.Document(c.Head)
		if c.Derived && errors.Is(err, ErrNotPaged) {
			ix.Close()
			continue
		}
		if err != nil {
			t.Fatalf("at %d: %v", off, err)
		}
		refs, err := d.Refs(0, d.Len())
		if err != nil || len(refs) != c.Document.Len() {
			t.Fatalf("at %d: %d refs (%v); the log has %d entries", off, len(refs), err, c.Document.Len())
		}
		for i, r := range refs {
			if r.ID != c.Document.At(i).ID {
				t.Fatalf("at %d: entry %d is %q; want %q", off, i, r.ID, c.Document.At(i).ID)
			}
		}
		ix.Close()
	}
	if got := indexRebuilds.Load() - before; got != 0 {
		t.Fatalf("%d rebuilds reading earlier lengths", got)
	}
}

// writeRandomSaves saves a growing conversation with provisional tails and
// an occasional snapshot, a record batch per save. It returns the log's
// size after the first save.
func writeRandomSaves(t *testing.T, path string, n int) (first int64) {
	t.Helper()
	rnd := rand.New(rand.NewPCG(5, 6))
	l := open(t, path)
	d := doc(t, user("u0", "q"))
	m := msgs("q")
	for i := range n {
		var err error
		switch rnd.IntN(4) {
		case 0:
			d, err = d.Open(agent(fmt.Sprintf("o%d", i), "partial"))
		case 1:
			es := d.Entries()
			d, err = transcript.NewDocument("c1", append(es[:len(es)/2], agent(fmt.Sprintf("s%d", i), "snap")))
		default:
			d = doc(t, append(d.Entries(), user(fmt.Sprintf("u%d", i+1), "q"), agent(fmt.Sprintf("a%d", i), "a"))...)
		}
		if err != nil {
			t.Fatal(err)
		}
		m = append(m, msgs("x")...)
		if err := l.Save(d, m); err != nil {
			t.Fatal(err)
		}
		l.flushIndex()
		if i == 0 {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			first = fi.Size()
		}
	}
	return first
}

// Refs around an entry Find found through the ID table are read from
// that entry's frame, backwards and (scanning the file for main's next
// frames) forwards. Forks from the ends of main's frames put frames that
// link to the same frame as main's next one in the file; the refs must
// still be main's, as a walk from the end reads them.
func TestRefsAroundAnEntryFoundByTheTable(t *testing.T) {
	path := logPath(t)
	l := open(t, path)
	n := 0
	next := func(i int) transcript.Entry {
		n++
		if i%3 == 0 {
			return user(fmt.Sprintf("u%d", n), "q")
		}
		return agent(fmt.Sprintf("a%d", n), "answer")
	}
	for step := range 120 {
		c, err := l.Load()
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Save(appendAll(t, c.Document, next(step), next(step+1), next(step+2)), c.Messages); err != nil {
			t.Fatal(err)
		}
		if step%5 == 4 {
			c, err = l.Load()
			if err != nil {
				t.Fatal(err)
			}
			d := c.Document
			b, err := l.Fork(c.Head, d.At(d.Len()-1).ID, 0, "b")
			if err != nil {
				t.Fatal(err)
			}
			if c, err = l.SetHead(b); err != nil {
				t.Fatal(err)
			}
			for range 2 { // frames of the fork's own, one after another
				if err := l.Save(appendAll(t, c.Document, next(1), next(2)), c.Messages); err != nil {
					t.Fatal(err)
				}
				if c, err = l.Load(); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := l.SetHead(Main); err != nil {
				t.Fatal(err)
			}
		}
	}
	l.Close()
	if err := os.Remove(IndexPath(path)); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	document := func() *IndexDoc {
		ix, err := OpenIndex(path, f, 0)
		if err != nil {
			t.Fatal(err)
		}
		d, err := ix.Document(Main)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	whole := document()
	defer whole.Close()
	all, err := whole.Refs(0, whole.Len())
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 300 {
		t.Fatalf("main has %d entries", len(all))
	}
	for i := range all {
		for _, w := range [][2]int{{-40, 1}, {0, 1}, {0, 4}, {-3, 60}, {1, 200}, {-200, 200}} {
			lo, hi := max(0, i+w[0]), min(len(all), i+w[1])
			if lo >= hi {
				continue
			}
			d := document()
			if got, err := d.Find(all[i].ID); err != nil || got != i {
				t.Fatalf("find %s: %d, %v; want %d", all[i].ID, got, err, i)
			}
			if !d.hitOK {
				t.Fatalf("find %s: not through the table", all[i].ID)
			}
			got, err := d.Refs(lo, hi)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, all[lo:hi]) {
				t.Fatalf("refs %d..%d around %d differ from the walk from the end", lo, hi, i)
			}
			d.Close()
		}
	}
}
