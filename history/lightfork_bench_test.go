package history

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"testing"

	"github.com/foliodev/folio/internal/gen"
)

// BenchmarkResumeBranched measures what a follower of a branched log pays
// the first time the log grows: a Scanner resumed from the page index
// (ResumeScanner, light: the entries indexed since the ID table; or the
// full resume, every ID of every branch read back, as ResumeScanner did
// for branched logs before) that then reads an appended record on the
// head, a fork of main just before its last entries. live-MB is what the
// heap gained, the Scanner held, after it.
//
//	go test ./history -run '^$' -bench ResumeBranched -benchtime 5x
func BenchmarkResumeBranched(b *testing.B) {
	for _, n := range []int{3_000, 300_000} {
		path := logPath(b)
		writeGen(b, path, gen.Options{Messages: n, Seed: 1, Summaries: true})
		c, err := ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		w, err := openAppend(path)
		if err != nil {
			b.Fatal(err)
		}
		at := `"at":"2026-03-04T05:06:08.000Z"`
		fmt.Fprintf(w, `{"type":"branch",%s,"branch":"b1","parent":"main","afterEntry":%q,"afterMessage":0}`+"\n", at, c.Document.At(c.Document.Len()-3).ID)
		fmt.Fprintf(w, `{"type":"branch",%s,"branch":"b2","parent":"main","afterEntry":%q,"afterMessage":0}`+"\n", at, c.Document.At(c.Document.Len()/2).ID)
		fmt.Fprintf(w, `{"type":"head",%s,"branch":"b1"}`+"\n", at)
		w.Close()
		c = nil
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		ix, err := OpenIndex(path, f, 0) // rebuilt, with its table
		if err != nil {
			b.Fatal(err)
		}
		ix.Close()
		fi, err := f.Stat()
		if err != nil {
			b.Fatal(err)
		}
		size := fi.Size()
		w, err = openAppend(path)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(w, `{"type":"on-branch",%s,"branch":"b1","record":{"type":"ui-append",%s,"entries":[{"id":"late","content":{"kind":"user","text":"x"},"timestamp":"2026-03-01T00:00:05.000Z"}]}}`+"\n", at, at)
		w.Close()
		fi, err = f.Stat()
		if err != nil {
			b.Fatal(err)
		}
		end := fi.Size()
		for _, mode := range []string{"light", "full"} {
			b.Run(fmt.Sprintf("entries=%d/resume=%s", n, mode), func(b *testing.B) {
				var s *Scanner
				base := heapAfterGC()
				for b.Loop() {
					s = nil
					var err error
					if mode == "light" {
						s, err = ResumeScanner(path, f, size)
						if err == nil && !s.Partial() {
							b.Fatal("ResumeScanner read every ID back")
						}
					} else {
						var ix *Index
						if ix, err = OpenIndex(path, f, size); err == nil {
							s, err = ix.resume()
							ix.Close()
						}
					}
					if err != nil {
						b.Fatal(err)
					}
					got := 0
					for rec, err := range s.Records(io.NewSectionReader(f, size, end-size)) {
						if err != nil || !rec.Accepted || rec.Branch != "b1" {
							b.Fatalf("%+v %v", rec, err)
						}
						got++
					}
					if got != 1 {
						b.Fatalf("%d records", got)
					}
				}
				live := heapAfterGC()
				runtime.KeepAlive(s)
				b.ReportMetric((float64(live)-float64(base))/1e6, "live-MB")
			})
		}
		f.Close()
	}
}

// heapAfterGC is the live heap.
func heapAfterGC() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
