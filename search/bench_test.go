package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/transcript"
)

// The benchmarks run over a corpus folio gen wrote: FOLIO_SEARCH_CORPUS
// names a data folder (see docs/search.md for how the figures were
// made); without it they make a small one.
func corpus(b *testing.B) string {
	if d := os.Getenv("FOLIO_SEARCH_CORPUS"); d != "" {
		return d
	}
	return genData(b, 8, 2000)
}

func logBytes(b *testing.B, data string) int64 {
	logs, err := history.Logs(data)
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, l := range logs {
		n += fileSize(b, l.Path)
	}
	return n
}

// BenchmarkIndexBuild indexes the corpus from scratch; MB/s is log bytes
// read per second, and index/logs the index file's size over the logs'.
func BenchmarkIndexBuild(b *testing.B) {
	data := corpus(b)
	size := logBytes(b, data)
	b.SetBytes(size)
	cpu0 := cpuTime()
	for b.Loop() {
		b.StopTimer()
		os.RemoveAll(filepath.Dir(Path(data)))
		ix, err := Open(data)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := ix.CatchUp(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		ix.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(fileSize(b, Path(data)))/float64(size), "index/logs")
	// On a shared machine wall time says little: log bytes per second of
	// this process's CPU time is what indexing costs.
	b.ReportMetric(float64(size)*float64(b.N)/1e6/(cpuTime()-cpu0).Seconds(), "MB/cpu-s")
}

// BenchmarkQuery reports each kind of query's p50 and p99 over many runs,
// with the index current (NoCatchUp) and with Search's catch-up (which
// finds nothing new: the cost of looking).
func BenchmarkQuery(b *testing.B) {
	data := corpus(b)
	ix, err := Open(data)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.CatchUp(context.Background()); err != nil {
		b.Fatal(err)
	}
	queries := map[string][]string{
		"one-word":   {"compaction", "fsync", "latency", "checkpoint", "zeppelin"},
		"three-word": {"stream latency branch", "writer page fail", "artifact reply checkpoint"},
		"phrase":     {`"stream latency"`, `"page fail"`, `"why does the"`},
		"prefix":     {"compac*", "fsy*", "lat*"},
	}
	for _, kind := range []string{"one-word", "three-word", "phrase", "prefix"} {
		for _, catch := range []bool{false, true} {
			name := kind
			if catch {
				name += "+catchup"
			}
			b.Run(name, func(b *testing.B) {
				var ds, cs []time.Duration
				hits := 0
				for i := 0; b.Loop(); i++ {
					q := queries[kind][i%len(queries[kind])]
					start, cpu := time.Now(), cpuTime()
					h, err := ix.Search(context.Background(), q, Options{NoCatchUp: !catch})
					if err != nil {
						b.Fatal(err)
					}
					ds = append(ds, time.Since(start))
					cs = append(cs, cpuTime()-cpu)
					hits += len(h)
				}
				report(b, ds)
				reportCPU(b, cs)
				b.ReportMetric(float64(hits)/float64(len(ds)), "hits/op")
			})
		}
	}
}

func report(b *testing.B, ds []time.Duration) {
	slices.Sort(ds)
	p := func(q float64) float64 {
		return float64(ds[min(len(ds)-1, int(q*float64(len(ds))))].Microseconds()) / 1000
	}
	b.ReportMetric(p(0.5), "p50-ms")
	b.ReportMetric(p(0.9), "p90-ms")
	b.ReportMetric(p(0.99), "p99-ms")
}

// reportCPU reports percentiles of CPU time per operation: on a machine
// other work shares, the cost of an operation where wall time is what
// else ran meanwhile.
func reportCPU(b *testing.B, ds []time.Duration) {
	slices.Sort(ds)
	p := func(q float64) float64 {
		return float64(ds[min(len(ds)-1, int(q*float64(len(ds))))].Microseconds()) / 1000
	}
	b.ReportMetric(p(0.5), "cpu-p50-ms")
	b.ReportMetric(p(0.99), "cpu-p99-ms")
}

// BenchmarkSaveUpdate appends one prompt and answer to a conversation of
// each size and measures the index's Update that follows the save: it
// should cost what was appended, whatever the conversation's size.
// FOLIO_SEARCH_BIG names a large generated log (folio gen) to use as the
// large one.
func BenchmarkSaveUpdate(b *testing.B) {
	big := os.Getenv("FOLIO_SEARCH_BIG")
	for _, size := range []int{1000, 30000} {
		name := fmt.Sprintf("messages=%d", size)
		if big != "" && size > 1000 {
			name = "log=" + filepath.Base(big)
		}
		b.Run(name, func(b *testing.B) {
			data := newData(b)
			dir := history.ConversationsDir(data)
			os.MkdirAll(dir, 0o700)
			path := filepath.Join(dir, "big.jsonl")
			if big != "" && size > 1000 {
				raw, err := os.ReadFile(big)
				if err != nil {
					b.Fatal(err)
				}
				os.WriteFile(path, raw, 0o600)
			} else {
				f, _ := os.Create(path)
				if _, err := gen.Write(f, gen.Options{Messages: size, Seed: 7, ConversationID: "big"}); err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
			ix, err := Open(data)
			if err != nil {
				b.Fatal(err)
			}
			defer ix.Close()
			if _, err := ix.CatchUp(context.Background()); err != nil {
				b.Fatal(err)
			}
			l, err := history.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			conv, err := l.LoadTail(50, nil)
			if err != nil {
				b.Fatal(err)
			}
			d := conv.Document
			var ds []time.Duration
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				for _, e := range []transcript.Entry{
					{ID: fmt.Sprintf("bu%d", i), Content: transcript.User{Text: fmt.Sprintf("question %d about the zeppelin", i)}, Timestamp: time.Now()},
					{ID: fmt.Sprintf("ba%d", i), Content: transcript.Agent{Markdown: fmt.Sprintf("answer %d about the zeppelin", i)}, Timestamp: time.Now()},
				} {
					if d, err = d.Append(e); err != nil {
						b.Fatal(err)
					}
				}
				if err := l.Save(d, conv.Messages); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				start := time.Now()
				if err := ix.Update(context.Background(), "big"); err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(start))
			}
			report(b, ds)
		})
	}
}

// cpuTime is the CPU time this process used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
