package history

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/transcript"
)

// tailCounts runs f and returns how many page index rebuilds it caused
// and how many tail reads the index answered.
func tailCounts(f func()) (rebuilds, tails int64) {
	r, t := indexRebuilds.Load(), indexTails.Load()
	f()
	return indexRebuilds.Load() - r, indexTails.Load() - t
}

// A writer's LoadTail on a log that grew after its index was last written
// (another program appended, or folio stopped before its index goroutine
// caught up) extends the index by the appended records and reads through
// it: no rebuild, the same result as the full pass, and the extension is
// kept for the next open.
func TestLoadTailExtendsABehindIndex(t *testing.T) {
	path := logPath(t)
	writeGen(t, path, gen.Options{Messages: 400, Seed: 4, Summaries: true})
	checkIndex(t, path)
	f, err := openAppend(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		fmt.Fprintf(f, "%s\n", uiRec(TypeUIAppend, entryJSON(t, agent(fmt.Sprintf("late%d", i), "appended after the index"))))
	}
	f.Close()
	before, err := os.Stat(IndexPath(path))
	if err != nil {
		t.Fatal(err)
	}

	var got *Conversation
	rebuilds, tails := tailCounts(func() {
		got, err = open(t, path).LoadTail(8, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if rebuilds != 0 || tails != 1 {
		t.Fatalf("LoadTail on a behind index: %d rebuilds, %d index reads; want 0 and 1", rebuilds, tails)
	}
	if got.Document.At(got.Document.Len()-1).ID != "late5" {
		t.Fatalf("the tail ends at %q, not at the last appended entry", got.Document.At(got.Document.Len()-1).ID)
	}
	full, err := parseTail(readFile(t, path), 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	via, err := readTail(path, 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameTail(t, via, full)
	after, err := os.Stat(IndexPath(path))
	if err != nil {
		t.Fatal(err)
	}
	if after.Size() <= before.Size() {
		t.Fatalf("the index did not keep the extension: %d bytes before, %d after", before.Size(), after.Size())
	}
}

// A log with no index (written by another program, or an older folio)
// has its index built once, by the first LoadTail, which then reads
// through it; later opens pay only the tail.
func TestLoadTailBuildsAMissingIndexOnce(t *testing.T) {
	path := logPath(t)
	writeGen(t, path, gen.Options{Messages: 300, Seed: 6})
	os.Remove(IndexPath(path))

	for i, want := range []int64{1, 0} {
		var conv *Conversation
		var err error
		rebuilds, tails := tailCounts(func() {
			l, oerr := Open(path, WithClock(clock()))
			if oerr != nil {
				t.Fatal(oerr)
			}
			defer l.Close()
			conv, err = l.LoadTail(8, nil)
		})
		if err != nil {
			t.Fatal(err)
		}
		if rebuilds != want || tails != 1 {
			t.Fatalf("open %d: %d rebuilds, %d index reads; want %d and 1", i+1, rebuilds, tails, want)
		}
		if _, err := os.Stat(IndexPath(path)); err != nil {
			t.Fatalf("open %d left no index beside the log: %v", i+1, err)
		}
		whole := open(t, path)
		all, err := whole.Load()
		if err != nil {
			t.Fatal(err)
		}
		if conv.Document.ID() != all.Document.ID() || len(conv.Messages) != len(all.Messages) {
			t.Fatalf("open %d: tail document %q with %d messages, whole %q with %d",
				i+1, conv.Document.ID(), len(conv.Messages), all.Document.ID(), len(all.Messages))
		}
		whole.Close()
	}
}

// BenchmarkLoadTailIndex opens a writer on the generated 300,000-entry
// log in a data folder, as an engine does (LoadTail(64)), with the page
// index in three states: current (the tail read), behind by 100 records
// another program appended (extended, then the tail read), and missing
// (built in one pass over the log, then the tail read: what the first open
// of a log another program wrote costs, once).
//
//	go test ./history -run '^$' -bench LoadTailIndex -benchtime 3x -benchmem
func BenchmarkLoadTailIndex(b *testing.B) {
	path := filepath.Join(b.TempDir(), "data", conversationsDirName, "big.jsonl")
	writeGen(b, path, gen.Options{Messages: 300_000, Seed: 1})
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var late bytes.Buffer
	for i := range 100 {
		fmt.Fprintf(&late, "%s\n", uiRec(TypeUIAppend, entryJSON(b, agent(fmt.Sprintf("late%d", i), "appended after the index"))))
	}
	checkIndex(b, path)
	current, err := os.ReadFile(IndexPath(path))
	if err != nil {
		b.Fatal(err)
	}
	load := func(b *testing.B) {
		l, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		if _, err := l.LoadTail(64, nil); err != nil {
			b.Fatal(err)
		}
	}
	for _, state := range []string{"current", "behind", "missing"} {
		b.Run(state, func(b *testing.B) {
			tails := indexTails.Load()
			for b.Loop() {
				b.StopTimer()
				switch state {
				case "behind":
					writeLog(b, path, append(bytes.Clone(data), late.Bytes()...))
					writeLog(b, IndexPath(path), current)
				case "missing":
					os.Remove(IndexPath(path))
				}
				b.StartTimer()
				load(b)
			}
			if got := indexTails.Load() - tails; got != int64(b.N) {
				b.Fatalf("%d of %d opens went through the index", got, b.N)
			}
		})
	}
}

// Extending an index the log grew past gives what a rebuild gives: its
// documents match a full read and the tail read through it matches the
// full pass, whether the appended records are ones the light resume
// applies exactly (plain appends, messages, a snapshot, a compaction entry
// on main, whose covered entries the ID table finds) or ones that need
// every ID read back (an ID the document already has).
func TestExtensionAgreesWithTheLog(t *testing.T) {
	at := `"at":"2026-01-01T00:00:00.000Z"`
	ui := func(typ string, es ...transcript.Entry) string {
		var parts []string
		for _, e := range es {
			parts = append(parts, entryJSON(t, e))
		}
		return uiRec(typ, parts...) + "\n"
	}
	msg := `{"type":"message",` + at + `,"message":{"role":"user","content":"more"}}` + "\n"
	compaction := transcript.Entry{ID: "late-c", Timestamp: t0,
		Content: transcript.Compaction{Summary: "s", Covers: transcript.CompactionRange{FromID: "late-a", ToID: "late-a"}}}
	cases := []struct {
		name  string
		late  func(first string) string
		light bool
	}{
		{"appends", func(string) string {
			return ui(TypeUIAppend, user("late-u", "again")) + msg + ui(TypeUIAppend, agent("late-a", "answer"))
		}, true},
		{"open-tail", func(string) string {
			return ui(TypeUIAppend, user("late-u", "again")) + ui(TypeUIOpen, agent("late-a", "stream"))
		}, true},
		{"snapshot", func(string) string {
			return ui(TypeUITranscript, user("late-u", "again"), agent("late-a", "answer"))
		}, true},
		{"compaction", func(string) string {
			return ui(TypeUIAppend, agent("late-a", "answer")) + ui(TypeUIAppend, compaction)
		}, true},
		{"repeated-id", func(first string) string {
			return ui(TypeUIAppend, agent(first, "an ID the document has")) + ui(TypeUIAppend, agent("late-a", "answer"))
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := logPath(t)
			writeGen(t, path, gen.Options{Messages: 200, Seed: 11, Summaries: true})
			ix := checkIndex(t, path)
			first := ix.st.branches[0].first
			ix.Close()
			f, err := openAppend(path)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(c.late(first))
			f.Close()
			light, rebuilds := indexLightExtends.Load(), indexRebuilds.Load()
			checkIndex(t, path)
			if got := indexRebuilds.Load() - rebuilds; got != 0 {
				t.Fatalf("%d rebuilds; want the index extended", got)
			}
			if got := indexLightExtends.Load()-light == 1; got != c.light {
				t.Fatalf("extended from the light resume: %v, want %v", got, c.light)
			}
			full, err := parseTail(readFile(t, path), 8, nil)
			if err != nil {
				t.Fatal(err)
			}
			via, err := readTail(path, 8, nil)
			if err != nil && len(full.conv.Problems) == 0 {
				t.Fatal(err)
			}
			if err == nil {
				sameTail(t, via, full)
			}
		})
	}
}
