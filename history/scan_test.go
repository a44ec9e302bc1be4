package history

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/transcript"
)

// sameReading fails t unless reading data with the one-pass scanner gives
// the same conversation as reading it the careful way.
func sameReading(t *testing.T, data []byte) {
	t.Helper()
	fast, ferr := parseWith(bytes.Clone(data), true, true)
	slow, serr := parseWith(bytes.Clone(data), true, false)
	if (ferr == nil) != (serr == nil) {
		t.Fatalf("scanner: %v; careful: %v", ferr, serr)
	}
	if ferr != nil {
		if ferr.Error() != serr.Error() {
			t.Fatalf("errors differ: %v / %v", ferr, serr)
		}
		return
	}
	a, b := fast.conv, slow.conv
	if !reflect.DeepEqual(a.Problems, b.Problems) {
		t.Fatalf("problems differ:\nscanner %+v\ncareful %+v", a.Problems, b.Problems)
	}
	if !reflect.DeepEqual(a.Unknown, b.Unknown) || !reflect.DeepEqual(a.Messages, b.Messages) ||
		a.Title != b.Title || !a.UpdatedAt.Equal(b.UpdatedAt) || a.Head != b.Head ||
		!reflect.DeepEqual(a.Branches, b.Branches) || a.Derived != b.Derived {
		t.Fatal("conversations differ")
	}
	if !reflect.DeepEqual(fast.reserved, slow.reserved) || fast.settledLen != slow.settledLen {
		t.Fatal("writer state differs")
	}
	for _, br := range a.Branches {
		da, db := a.Document, b.Document
		if br.ID != a.Head {
			da, db = a.views[br.ID].doc, b.views[br.ID].doc
		}
		if da.Len() != db.Len() {
			t.Fatalf("branch %s: %d entries, careful %d", br.ID, da.Len(), db.Len())
		}
		var es []transcript.Entry
		for i := range da.Len() {
			x, y := da.At(i), db.At(i)
			if x.ID != y.ID || !x.Timestamp.Equal(y.Timestamp) || !reflect.DeepEqual(x.Content, y.Content) {
				t.Fatalf("branch %s entry %d differs:\n%+v\n%+v", br.ID, i, x, y)
			}
			es = append(es, x)
		}
		// The reader builds documents without checking them again: they
		// must be what NewDocument accepts.
		if _, err := transcript.NewDocument("c1", es); err != nil {
			t.Fatalf("branch %s: the document read is not a valid document: %v", br.ID, err)
		}
		if len(es) > 0 {
			if i, ok := da.Index(es[len(es)-1].ID); !ok || i != len(es)-1 {
				t.Fatalf("branch %s: index lookup %d %v", br.ID, i, ok)
			}
		}
	}
}

// TestScannerReadsGeneratedLogs: on generated logs every UI record takes
// the one-pass path, and the result is the careful reading's.
func TestScannerReadsGeneratedLogs(t *testing.T) {
	t.Parallel()
	for seed := range uint64(4) {
		var buf bytes.Buffer
		if _, err := gen.Write(&buf, gen.Options{Messages: 400, Seed: seed}); err != nil {
			t.Fatal(err)
		}
		data := buf.Bytes()
		sameReading(t, data)
		r, err := parse(bytes.Clone(data), false)
		if err != nil {
			t.Fatal(err)
		}
		start := bytes.IndexByte(data, '\n') + 1
		var msgs, scanned int
		for line := range bytes.Lines(data[start:]) {
			line = bytes.TrimSuffix(line, []byte("\n"))
			_, ok := r.scanRecord(line)
			if bytes.HasPrefix(line, []byte(uiPrefix)) && !ok {
				t.Fatalf("seed %d: the scanner gave up on %s", seed, line)
			}
			if bytes.HasPrefix(line, []byte(msgPrefix)) {
				msgs++
				if ok {
					scanned++
				}
			}
		}
		// Messages with tool calls go the careful way; plain ones do not.
		if msgs == 0 || scanned < msgs/2 {
			t.Fatalf("seed %d: %d of %d message records scanned", seed, scanned, msgs)
		}
	}
}

// TestScannerReadsFixtures compares both readings on every fixture log.
func TestScannerReadsFixtures(t *testing.T) {
	t.Parallel()
	paths, _ := filepath.Glob("testdata/*.jsonl")
	more, _ := filepath.Glob("export/testdata/jazz/*.jsonl")
	paths = append(paths, more...)
	if len(paths) < 10 {
		t.Fatalf("only %d fixture logs", len(paths))
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(p), func(t *testing.T) { sameReading(t, data) })
	}
}

// FuzzScannerReadsLikeCareful is the differential fuzz test of hydration:
// any log body reads the same with the one-pass scanner as without it.
func FuzzScannerReadsLikeCareful(f *testing.F) {
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Options{Messages: 12, Seed: 3}); err != nil {
		f.Fatal(err)
	}
	g := buf.Bytes()
	f.Add(g[bytes.IndexByte(g, '\n')+1:])
	f.Add([]byte(branchSeed))
	f.Add([]byte(`{"type":"ui-append","at":"2026-03-04T05:06:08.000Z","entries":[{"id":"a","content":{"kind":"user","text":"x"},"timestamp":"2026-03-04T05:06:07.000Z"},{"id":"a","content":{"kind":"user","text":"x"},"timestamp":"2026-03-04T05:06:07.000Z"}]}` + "\n" +
		`{"type":"ui-open","at":"2026-03-04T05:06:08.000Z","entries":[{"id":"b","content":{"kind":"agent","markdown":"x"},"timestamp":"2026-03-04T05:06:07.000Z"}],"entries":[]}` + "\n" +
		`{"type":"ui-transcript","at":"2026-03-04T05:06:08.000Z","entries":[{"id":"a","content":{"kind":"user","text":"x"},"timestamp":"2026-03-04T05:06:07.000Z"}]} ` + "\n" +
		`{"type":"ui-append","entries":[{"id":"a","content":{"kind":"user","text":"y"},"timestamp":"2026-03-04T05:06:07.000Z"}],"at":"x"}` + "\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		sameReading(t, append([]byte(v3Header+"\n"), body...))
	})
}
