package history

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/transcript"
)

// rebuildLogs are logs of every shape a rebuild meets: branched ones
// (forks of forks, head switches, compactions, rejected records, unknown
// lines, a torn end, a provisional tail), one a snapshot replaced, the
// fixtures folio and Jazz wrote, and a generated one.
func rebuildLogs(t *testing.T) map[string][]byte {
	logs := branchTailLogs(t)
	path := logPath(t)
	editedLog(t, path)
	logs["edited"] = readFile(t, path)
	for _, fx := range fixtureLogs(t) {
		logs["fixture/"+filepath.Base(fx)] = readFile(t, fx)
	}
	gpath := logPath(t)
	writeGen(t, gpath, gen.Options{Messages: 3000, Seed: 7, Summaries: true})
	logs["generated"] = readFile(t, gpath)
	return logs
}

// TestRebuildKeepsNoEntries: a rebuild's pass keeps each document's IDs in
// its ID set and no entries beside them, and writes, held in memory or
// written to its file as it goes (the index writer's compaction, with the
// ID table streamed out a bucket at a time), the same bytes as a pass
// that keeps every entry's ID as an entry too, which is how the index
// was built before.
func TestRebuildKeepsNoEntries(t *testing.T) {
	logs := rebuildLogs(t)
	for _, name := range slices.Sorted(maps.Keys(logs)) {
		data := logs[name]
		t.Run(name, func(t *testing.T) {
			r := bytes.NewReader(data)
			size := int64(len(data))
			whole := NewScanner()
			whole.r.idsOnly = true
			want, wantErr := newIndexBuilder().scan(whole, r, 0, size, 7)

			s := rebuildScanner()
			got, err := newIndexBuilder().scan(s, r, 0, size, 7)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("rebuild: %v; keeping entries: %v", err, wantErr)
			}
			if wantErr != nil {
				return
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("the rebuild wrote %d bytes unlike the %d of a pass keeping entries", len(got), len(want))
			}
			if len(s.r.entries) != 0 {
				t.Errorf("main keeps %d entries", len(s.r.entries))
			}
			for id, b := range s.r.tree.branches {
				if len(b.entries) != 0 {
					t.Errorf("branch %s keeps %d entries", id, len(b.entries))
				}
			}

			lpath := logPath(t)
			if err := os.MkdirAll(filepath.Dir(lpath), 0o700); err != nil {
				t.Fatal(err)
			}
			ipath := IndexPath(lpath)
			ix, err := rebuildSpilled(ipath, r, 7, size, nil)
			if err != nil {
				t.Fatal(err)
			}
			ix.Close()
			if file := readFile(t, ipath); !bytes.Equal(file, want) {
				t.Fatalf("the spilled rebuild wrote %d bytes unlike the %d in memory", len(file), len(want))
			}
		})
	}
}

// TestRebuildHeapPerEntry bounds what a rebuild's pass holds, at its
// end, for each entry of the log: its ID in the ID set and a few words of
// bookkeeping (about 70 bytes on 64-bit), where the pass used to keep an
// entry and a record of its frame besides (about 170). The bound is the
// growth of the live heap between a log of 10,000 and one of 50,000
// entries, so what is held whatever the size (the frames pending, a
// line's buffer) does not count.
func TestRebuildHeapPerEntry(t *testing.T) {
	held := func(n int) int64 {
		dir := t.TempDir()
		path := filepath.Join(dir, "c", "l.jsonl")
		writeGen(t, path, gen.Options{Messages: n, Seed: 2, Summaries: true})
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dir, "c.idx"))
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		before := liveHeap()
		s, b := rebuildScanner(), newIndexBuilder()
		b.spill = out
		if _, err := b.scan(s, f, 0, fi.Size(), 1); err != nil {
			t.Fatal(err)
		}
		if err := b.spilled(); err != nil {
			t.Fatal(err)
		}
		after := liveHeap()
		runtime.KeepAlive(s)
		runtime.KeepAlive(b)
		return after - before
	}
	small, large := held(10_000), held(50_000)
	per := (large - small) / 40_000
	t.Logf("held %d KiB after 10,000 entries, %d KiB after 50,000: %d bytes an entry", small>>10, large>>10, per)
	if per > 120 {
		t.Errorf("a rebuild holds %d bytes for each entry of the log, over 120", per)
	}
}

// TestCompactionsKeepNoLines: the compactions a page index's state keeps
// (an index writer's state lives as long as its log is open) hold copies
// of their IDs, not strings read from the lines, each of which kept the
// block the line was copied into (32 KiB, shared by the lines around it)
// alive: a live session that compacts its context every few turns grew
// by a block a compaction. Here 300 compactions, each after 35 answers of
// a KiB, may hold at most 16 KiB each once applied, their entries and
// the answers' IDs and frames included (about 6 KiB).
func TestCompactionsKeepNoLines(t *testing.T) {
	const n = 300
	answer := strings.Repeat("A KiB of an answer. ", 1024/20)
	var recs []string
	for i := range n {
		u, a := fmt.Sprintf("u-%d", i), ""
		recs = append(recs, uiRec(TypeUIAppend, entryJSON(t, user(u, "q"))))
		for j := range 35 {
			a = fmt.Sprintf("a-%d-%d", i, j)
			recs = append(recs, uiRec(TypeUIAppend, entryJSON(t, agent(a, answer))))
		}
		recs = append(recs, uiRec(TypeUIAppend, entryJSON(t, transcript.Entry{ID: fmt.Sprintf("c-%d", i), Timestamp: t0,
			Content: transcript.Compaction{Summary: "s", Covers: transcript.CompactionRange{FromID: u, ToID: a}}})))
	}
	data := logOf(v3Header, recs...)
	recs = nil
	before := liveHeap()
	s, b := rebuildScanner(), newIndexBuilder()
	if _, err := b.scan(s, bytes.NewReader(data), 0, int64(len(data)), 1); err != nil {
		t.Fatal(err)
	}
	held := liveHeap() - before
	if got := len(b.st.branches[0].cov); got != n {
		t.Fatalf("%d compactions in the state, want %d", got, n)
	}
	runtime.KeepAlive(s)
	runtime.KeepAlive(b)
	runtime.KeepAlive(data)
	t.Logf("%d KiB held after %d compactions in a %d KiB log", held>>10, n, len(data)>>10)
	if held > n*16<<10 {
		t.Errorf("the state holds %d KiB after %d compactions: %d bytes each", held>>10, n, held/n)
	}
}

// liveHeap is the heap's live bytes after a collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestFirstOpenWritesTheIndexAsItBuilds: the first open of a data folder's
// log that has no index builds it written to its file as it goes, holding
// the IDs and not the index (a 300,000-message log's first read held
// about 250 MB with the index in memory); a log elsewhere, which gets no
// file, builds it in memory. Both give the index a second open reads back,
// and the same bytes as a build held in memory.
func TestFirstOpenWritesTheIndexAsItBuilds(t *testing.T) {
	data := filepath.Join(t.TempDir(), "conversations", "c.jsonl")
	writeGen(t, data, gen.Options{Messages: 3000, Seed: 3, Summaries: true})
	elsewhere := filepath.Join(t.TempDir(), "c.jsonl")
	if err := os.WriteFile(elsewhere, readFile(t, data), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(IndexPath(data))
	open := func(path string) *Index {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		ix, err := OpenIndex(path, f, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
	spilled, rebuilt := spilledRebuilds.Load(), indexRebuilds.Load()
	ix := open(data)
	if n, m := spilledRebuilds.Load()-spilled, indexRebuilds.Load()-rebuilt; n != 1 || m != 1 {
		t.Fatalf("the first open of a data folder's log: %d rebuilds, %d written as they went; want 1 and 1", m, n)
	}
	written := readFile(t, IndexPath(data))
	r := bytes.NewReader(readFile(t, data))
	mem, err := newIndexBuilder().scan(rebuildScanner(), r, 0, r.Size(), ix.st.inode)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(written, mem) {
		t.Errorf("the index written as it was built (%d bytes) differs from one built in memory (%d bytes)", len(written), len(mem))
	}
	spilled, rebuilt = spilledRebuilds.Load(), indexRebuilds.Load()
	again := open(data)
	if n := indexRebuilds.Load() - rebuilt; n != 0 {
		t.Errorf("the second open rebuilt the index %d times", n)
	}
	if again.st.logSize != ix.st.logSize || again.Head() != ix.Head() {
		t.Errorf("the second open reads another index: %d bytes of log, head %s; want %d, %s", again.st.logSize, again.Head(), ix.st.logSize, ix.Head())
	}
	open(elsewhere)
	if n, m := spilledRebuilds.Load()-spilled, indexRebuilds.Load()-rebuilt; n != 0 || m != 1 {
		t.Errorf("the open of a log elsewhere: %d rebuilds, %d written as they went; want 1 and 0", m, n)
	}
	if _, err := os.Stat(IndexPath(elsewhere)); err == nil {
		t.Errorf("an index was written beside a log outside a data folder")
	}
}
