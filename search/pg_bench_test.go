package search

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/store/pgstore"
	"github.com/foliodev/folio/transcript"
)

// The PostgreSQL benchmarks run over a store FOLIO_SEARCH_PG names (a
// database URL whose search_path holds a corpus that folio log import
// copied from a folio gen data folder); they are skipped without it.
func pgCorpus(b *testing.B, params ...string) (*pgstore.Store, int64) {
	url := os.Getenv("FOLIO_SEARCH_PG")
	if url == "" {
		b.Skip("set FOLIO_SEARCH_PG to a store holding a corpus")
	}
	for _, p := range params {
		url += "&" + p
	}
	st, err := pgstore.Open(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	var size int64
	if err := st.Pool().QueryRow(context.Background(), `SELECT coalesce(sum(size), 0)::bigint FROM folio_conversations`).Scan(&size); err != nil {
		b.Fatal(err)
	}
	return st, size
}

// BenchmarkPGIndexBuild indexes the store from scratch (Rebuild). MB/s is
// log bytes per second of wall time (the work is split between this
// process and the database server); index/logs is the search tables'
// size (the words table's too), indexes and TOAST included, over the
// logs'.
func BenchmarkPGIndexBuild(b *testing.B) {
	st, size := pgCorpus(b)
	ix := OpenPostgres(st)
	b.SetBytes(size)
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := ix.Rebuild(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	var rel int64
	if err := st.Pool().QueryRow(context.Background(),
		`SELECT pg_total_relation_size('folio_search') + pg_total_relation_size('folio_search_conversations') + pg_total_relation_size('folio_search_words')`).Scan(&rel); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(rel)/float64(size), "index/logs")
	b.ReportMetric(float64(size)*float64(b.N)/1e6/(cpuTime()-cpu0).Seconds(), "MB/client-cpu-s")
}

// BenchmarkPGQuery is BenchmarkQuery on the store's index. Its pool has
// one connection, so one database backend runs every query, and the CPU
// time that backend took (from Linux's /proc/PID/schedstat; the cluster
// runs on this machine) is reported with this process's: what a query
// costs, where wall time on a shared machine is what else ran meanwhile.
func BenchmarkPGQuery(b *testing.B) {
	st, _ := pgCorpus(b, "pool_max_conns=1")
	ix := OpenPostgres(st)
	if _, err := ix.CatchUp(context.Background()); err != nil {
		b.Fatal(err)
	}
	var pid int
	if err := st.Pool().QueryRow(context.Background(), `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		b.Fatal(err)
	}
	for _, kind := range []string{"one-word", "three-word", "phrase", "prefix"} {
		b.Run(kind, func(b *testing.B) {
			var ds, cs []time.Duration
			hits := 0
			for i := 0; b.Loop(); i++ {
				q := benchQueries[kind][i%len(benchQueries[kind])]
				start, cpu, server := time.Now(), cpuTime(), backendCPU(b, pid)
				h, err := ix.Search(context.Background(), q, Options{NoCatchUp: true})
				if err != nil {
					b.Fatalf("%s (query %d, %q, after %v)", err, i, q, time.Since(start))
				}
				ds = append(ds, time.Since(start))
				cs = append(cs, cpuTime()-cpu+backendCPU(b, pid)-server)
				hits += len(h)
			}
			// The first run of each query in the benchmark's backend
			// touches shared buffers that backend has not mapped yet.
			reportFirstRuns(b, cs, len(benchQueries[kind]))
			report(b, ds)
			reportCPU(b, cs)
			b.ReportMetric(float64(hits)/float64(len(ds)), "hits/op")
		})
	}
}

// BenchmarkPGSaveUpdate saves one prompt and answer to a conversation of
// the store and measures the PGIndex's Update that follows (on
// PostgreSQL, what a save's catch-up costs): c1 is one of the corpus's
// 3,000-message conversations, big a 300,000-message one (folio log import
// of a folio gen log with that ID), skipped when the store has none.
func BenchmarkPGSaveUpdate(b *testing.B) {
	st, _ := pgCorpus(b)
	for _, id := range []string{"c1", "big"} {
		b.Run(id, func(b *testing.B) {
			var n int
			st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM folio_conversations WHERE id = $1`, id).Scan(&n)
			if n == 0 {
				b.Skipf("the store has no conversation %s", id)
			}
			ix := OpenPostgres(st)
			if _, err := ix.CatchUp(context.Background()); err != nil {
				b.Fatal(err)
			}
			l, err := history.OpenStore(st, id)
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			conv, err := l.LoadTail(50, nil)
			if err != nil {
				b.Fatal(err)
			}
			d := conv.Document
			save := func(i int) {
				for _, e := range []transcript.Entry{
					{ID: fmt.Sprintf("pu%d-%d", time.Now().UnixNano(), i), Content: transcript.User{Text: fmt.Sprintf("question %d about the zeppelin", i)}, Timestamp: time.Now()},
					{ID: fmt.Sprintf("pa%d-%d", time.Now().UnixNano(), i), Content: transcript.Agent{Markdown: fmt.Sprintf("answer %d about the zeppelin", i)}, Timestamp: time.Now()},
				} {
					if d, err = d.Append(e); err != nil {
						b.Fatal(err)
					}
				}
				if err := l.Save(d, conv.Messages); err != nil {
					b.Fatal(err)
				}
			}
			// The first update after a process starts reads the log to
			// set its Scanner up; every later one continues it.
			save(-1)
			if err := ix.Update(context.Background(), id); err != nil {
				b.Fatal(err)
			}
			var ds, cs []time.Duration
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				save(i)
				b.StartTimer()
				start, cpu := time.Now(), cpuTime()
				if err := ix.Update(context.Background(), id); err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(start))
				cs = append(cs, cpuTime()-cpu)
			}
			report(b, ds)
			reportCPU(b, cs)
		})
	}
}

// backendCPU is the CPU time the process pid (a database backend on this
// machine) has run, from /proc/PID/schedstat (nanoseconds on the CPU).
func backendCPU(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
	if err != nil {
		b.Fatalf("the database backend's CPU time: %v (the cluster must run on this machine)", err)
	}
	var ns int64
	if _, err := fmt.Sscan(string(raw), &ns); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ns)
}
