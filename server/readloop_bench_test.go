package server

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/provider/demo"
)

// BenchmarkPagesWhileACommandLoads pages one conversation over a real
// WebSocket, first idle, then while a send on the same connection makes
// the engine load a 300,000-entry conversation's log. It reports both
// p99 page round trips and their ratio (the target is at most 3x).
// "indexed" is the log as folio's writer leaves it, with its page index,
// so the load reads the tail (engine.LoadTail through the index);
// "unindexed" is a log another program wrote (or an older folio), which
// the load reads whole.
//
//	go test -run '^$' -bench PagesWhileACommandLoads -benchtime 1x ./server
//
// What the ratio measures on a 2-core machine: with -blockprofile and
// -mutexprofile, the page path waits on no mutex or channel the load holds
// (the load runs on its command's goroutine and takes no lock pages need);
// with GOGC=off the loading p99 stays the same, so it is not the load's
// garbage either. It is CPU: the load keeps one P busy and the page's four
// goroutines (client write, read loop, write loop, client read) share the
// other, so a page that finds both busy waits for a P, up to a scheduler
// slice (Go preempts after 10 ms). Run with GOMAXPROCS=4, which lets the
// OS share the cores in shorter slices, the same machine gave about 3x.
func BenchmarkPagesWhileACommandLoads(b *testing.B) {
	b.Run("unindexed", func(b *testing.B) { pagesWhileACommandLoads(b, false) })
	b.Run("indexed", func(b *testing.B) { pagesWhileACommandLoads(b, true) })
}

func pagesWhileACommandLoads(b *testing.B, indexed bool) {
	ts := newTestServer(b, Options{Turns: &TurnsOptions{Provider: demo.New(demo.Options{}), Model: "demo", Workspace: b.TempDir()}})
	ts.writeGen(b, "small", 3000, 2)
	big := ts.writeGen(b, "big", 300000, 1)
	if indexed {
		f, err := os.Open(big)
		if err != nil {
			b.Fatal(err)
		}
		ix, err := history.OpenIndex(big, f, 0) // written beside the log
		if err != nil {
			b.Fatal(err)
		}
		ix.Close()
		f.Close()
	}
	for range b.N {
		c := ts.dial(b)
		snap := c.open("small")
		page := func() time.Duration {
			start := time.Now()
			if f := c.page(snap.Token, "small", "latest", "before", 16<<10); f.Type != "page" {
				b.Fatalf("page: %s", f.raw)
			}
			return time.Since(start)
		}
		// The first pages after an open warm the snapshot and caches; the
		// idle figure is the steady state, so the comparison is not flattered.
		for range 100 {
			page()
		}
		var idle []time.Duration
		for range 300 {
			idle = append(idle, page())
		}
		c.write([]byte(`{"type":"send","id":"load","conversation":"big","commandId":"load-` + itoa(b.N) + `","text":"hello"}`))
		var loaded []time.Duration
		for {
			loaded = append(loaded, page())
			if slices.ContainsFunc(c.held, func(f frame) bool { return f.Re == "load" }) {
				break
			}
		}
		p99 := func(ds []time.Duration) time.Duration {
			slices.Sort(ds)
			return ds[len(ds)*99/100]
		}
		b.ReportMetric(float64(p99(idle).Microseconds()), "idle-p99-µs")
		b.ReportMetric(float64(p99(loaded).Microseconds()), "loading-p99-µs")
		b.ReportMetric(float64(len(loaded)), "pages-while-loading")
		b.ReportMetric(float64(p99(loaded))/float64(p99(idle)), "ratio")
	}
}
