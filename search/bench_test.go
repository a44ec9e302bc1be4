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

// benchQueries are the queries of each kind the query benchmarks run.
var benchQueries = map[string][]string{
	"one-word":   {"compaction", "fsync", "latency", "checkpoint", "zeppelin"},
	"three-word": {"stream latency branch", "writer page fail", "artifact reply checkpoint"},
	"phrase":     {`"stream latency"`, `"page fail"`, `"why does the"`},
	"prefix":     {"compac*", "fsy*", "lat*"},
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
	queries := benchQueries
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
				// The first run of each query in this process reads its
				// pages into memory the process has not touched yet (the
				// index's mapping, SQLite's page cache).
				reportFirstRuns(b, cs, len(queries[kind]))
				report(b, ds)
				reportCPU(b, cs)
				b.ReportMetric(float64(hits)/float64(len(ds)), "hits/op")
			})
		}
	}
}

// reportFirstRuns reports the slowest of the first n runs (the first of
// each query) and the p99 of the runs after them, of CPU times cs in the
// order they ran.
func reportFirstRuns(b *testing.B, cs []time.Duration, n int) {
	n = min(n, len(cs))
	b.ReportMetric(float64(slices.Max(append([]time.Duration{0}, cs[:n]...)).Microseconds())/1000, "cpu-first-max-ms")
	if later := slices.Sorted(slices.Values(cs[n:])); len(later) > 0 {
		b.ReportMetric(float64(later[min(len(later)-1, int(0.99*float64(len(later))))].Microseconds())/1000, "cpu-later-p99-ms")
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
// each size through a Log opened with Follow, as the CLI and the server
// open them, and reports the save's own time (save-ms: the writer waits
// for no index) and how long after it returned the save was searchable
// (indexed-ms: the follower's Update, which should cost what was appended
// whatever the conversation's size). FOLIO_SEARCH_BIG names a generated
// 300,000-message log (folio gen) to use instead of writing one.
func BenchmarkSaveUpdate(b *testing.B) {
	big := os.Getenv("FOLIO_SEARCH_BIG")
	for _, size := range []int{3000, 300000} {
		b.Run(fmt.Sprintf("messages=%d", size), func(b *testing.B) {
			data := newData(b)
			dir := history.ConversationsDir(data)
			os.MkdirAll(dir, 0o700)
			path := filepath.Join(dir, "big.jsonl")
			if big != "" && size > 3000 {
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
			l, err := history.Open(path, Follow(data))
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			conv, err := l.LoadTail(50, nil)
			if err != nil {
				b.Fatal(err)
			}
			d := conv.Document
			save := func(i int) time.Duration {
				for _, e := range []transcript.Entry{
					{ID: fmt.Sprintf("bu%d", i), Content: transcript.User{Text: fmt.Sprintf("question %d about the zeppelin", i)}, Timestamp: time.Now()},
					{ID: fmt.Sprintf("ba%d", i), Content: transcript.Agent{Markdown: fmt.Sprintf("answer %d about the zeppelin", i)}, Timestamp: time.Now()},
				} {
					if d, err = d.Append(e); err != nil {
						b.Fatal(err)
					}
				}
				start := time.Now()
				if err := l.Save(d, conv.Messages); err != nil {
					b.Fatal(err)
				}
				return time.Since(start)
			}
			// The follower's first update sets its Scanner up from the
			// page index; every later one continues it.
			save(-1)
			if _, err := settleDir(data); err != nil {
				b.Fatal(err)
			}
			var saves, updates, cpus []time.Duration
			for i := 0; b.Loop(); i++ {
				saves = append(saves, save(i))
				start, cpu := time.Now(), cpuTime()
				if _, err := settleDir(data); err != nil {
					b.Fatal(err)
				}
				updates = append(updates, time.Since(start))
				cpus = append(cpus, cpuTime()-cpu)
			}
			hits, err := ix.Search(context.Background(), "zeppelin", Options{NoCatchUp: true, Limit: 1})
			if err != nil || len(hits) != 1 {
				b.Fatalf("the saves are not searchable: %v %v", hits, err)
			}
			slices.Sort(saves)
			slices.Sort(updates)
			pct := func(ds []time.Duration, q float64) float64 {
				return float64(ds[min(len(ds)-1, int(q*float64(len(ds))))].Microseconds()) / 1000
			}
			b.ReportMetric(pct(saves, 0.5), "save-p50-ms")
			b.ReportMetric(pct(saves, 0.99), "save-p99-ms")
			b.ReportMetric(pct(updates, 0.5), "indexed-p50-ms")
			b.ReportMetric(pct(updates, 0.99), "indexed-p99-ms")
			reportCPU(b, cpus)
		})
	}
}

// cpuTime is the CPU time this process used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
