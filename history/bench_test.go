//go:build unix

package history

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/gen"
)

// BenchmarkSaveOneEntry saves one new entry into conversations of different
// lengths. The saver compares the saved prefix through shared storage and
// cached fingerprints and appends one record, so the cost should not grow
// with the conversation: the goal is 100,000 entries within 2x of 10. A log
// in a data folder's conversations also has its page index extended by
// every save (index=true); elsewhere it has none.
func BenchmarkSaveOneEntry(b *testing.B) {
	for _, indexed := range []bool{false, true} {
		for _, n := range []int{10, 100_000} {
			benchSave(b, n, indexed)
		}
	}
}

func benchSave(b *testing.B, n int, indexed bool) {
	{
		b.Run(fmt.Sprintf("index=%t/entries=%d", indexed, n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "c1.jsonl")
			if indexed {
				path = filepath.Join(b.TempDir(), "conversations", "c1.jsonl")
			}
			l, err := Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			d := doc(b, entries(n, "e")...)
			m := msgs("q", "a")
			if err := l.Save(d, m); err != nil {
				b.Fatal(err)
			}
			l.flushIndex() // the first save's index build is not a save's cost
			b.ReportAllocs()
			var cpu time.Duration
			for i := 0; b.Loop(); i++ {
				// Growing the document is the store's cost, not the save's.
				b.StopTimer()
				d, err = d.Append(agent(fmt.Sprintf("n%d", i), "one more answer"))
				if err != nil {
					b.Fatal(err)
				}
				c0 := cpuTime()
				b.StartTimer()
				if err := l.Save(d, m); err != nil {
					b.Fatal(err)
				}
				cpu += cpuTime() - c0
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// BenchmarkHydrate reads a generated 300,000-entry log (one entry per
// ui-append line plus model messages) from the page cache, against a bare
// encoding/json (v1) decode of the same lines into map[string]any, which
// checks nothing and builds nothing. The goal is three times its throughput
// (compare cpu-MB/s: on a loaded machine wall-clock MB/s measures the
// neighbours too).
func BenchmarkHydrate(b *testing.B) {
	path := filepath.Join(b.TempDir(), "big.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := gen.Write(f, gen.Options{Messages: 300_000, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	f.Close()
	size := fileSize(b, path)

	b.Run("history.ReadFile", func(b *testing.B) {
		b.SetBytes(size)
		defer reportCPU(b, size)()
		for b.Loop() {
			c, err := ReadFile(path)
			if err != nil {
				b.Fatal(err)
			}
			if c.Document.Len() != 300_000 || len(c.Problems) != 0 {
				b.Fatalf("%d entries, problems %v", c.Document.Len(), c.Problems)
			}
		}
	})
	b.Run("json-v1-map", func(b *testing.B) {
		b.SetBytes(size)
		defer reportCPU(b, size)()
		for b.Loop() {
			data, err := os.ReadFile(path)
			if err != nil {
				b.Fatal(err)
			}
			for line := range bytes.Lines(data) {
				var v map[string]any
				if err := stdjson.Unmarshal(line, &v); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

func fileSize(b *testing.B, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}

// reportCPU adds a cpu-MB/s metric: throughput per second of CPU time this
// process used (garbage collection included). On a shared, loaded machine
// wall-clock MB/s measures the neighbours too; CPU time does not.
func reportCPU(b *testing.B, size int64) func() {
	start := cpuTime()
	return func() {
		if d := cpuTime() - start; d > 0 {
			b.ReportMetric(float64(size)*float64(b.N)/d.Seconds()/1e6, "cpu-MB/s")
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLoadTail opens a writer on the generated 300,000-entry log the
// two ways: Load builds the whole document, LoadTail(64) checks every
// record the same way but builds only the last 64 entries.
func BenchmarkLoadTail(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "big.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := gen.Write(f, gen.Options{Messages: 300_000, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	f.Close()
	size := fileSize(b, path)
	for _, mode := range []string{"Load", "LoadTail"} {
		b.Run(mode, func(b *testing.B) {
			b.SetBytes(size)
			defer reportCPU(b, size)()
			for b.Loop() {
				l, err := Open(path)
				if err != nil {
					b.Fatal(err)
				}
				var c *Conversation
				if mode == "Load" {
					c, err = l.Load()
				} else {
					c, err = l.LoadTail(64, nil)
				}
				l.Close()
				if err != nil || c.Document.Elided()+c.Document.Len() != 300_000 {
					b.Fatalf("%v, %d+%d entries", err, c.Document.Elided(), c.Document.Len())
				}
			}
		})
	}
}
