package tui

import (
	"runtime"
	"testing"

	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/transcript"
)

// heapNow is the live heap after a collection.
func heapNow() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkLiveSessionHeap streams 100,000 generated entries into a
// fullscreen view at the live edge, a frame per entry, and reports the
// heap after 10,000 and after 100,000 entries and their ratio.
//
// "whole": the host keeps every entry in its document, as an engine told
// to keep them all does (engine.WithDocumentWindow(-1)); the heap then
// grows with the document, and view_* is what the view alone holds (the
// heap with it, less the heap once it is dropped). "tail": the host keeps
// only the last tailKeep entries (the ones before are on disk, for a
// Pager), as the engine's store does by default, so the heap is the view's
// and a bounded document. BenchmarkLiveSessionProcess measures the whole
// process, engine and log included.
//
//	go test ./tui -run '^$' -bench LiveSessionHeap -benchtime 1x
func BenchmarkLiveSessionHeap(b *testing.B) {
	const tailKeep = 2048
	for _, mode := range []string{"whole", "tail"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				v := newViewport(newRenderCache(NewPainter(PlainTheme)), 120, 40)
				d := transcript.NewCheckedDocument("live", nil)
				v.SetDocument(d, 1)
				var at10k, view10k uint64
				n := 0
				for e := range gen.Entries(gen.Options{Messages: 100_000, Seed: 3}) {
					var err error
					if d, err = d.Append(e); err != nil {
						b.Fatal(err)
					}
					n++
					if mode == "tail" && d.Len() >= 2*tailKeep {
						es := d.Entries()[d.Len()-tailKeep:]
						d = transcript.NewCheckedWindow(d.ID(), d.Elided()+d.Len()-tailKeep, d.FirstID(), es)
					}
					v.SetDocument(d, 1)
					v.Lines()
					if n == 10_000 {
						at10k = heapNow()
						view10k = viewHeld(&v, at10k)
						v = newViewport(newRenderCache(NewPainter(PlainTheme)), 120, 40)
						v.SetDocument(d, 1)
						v.Lines()
					}
					if n == 100_000 {
						break
					}
				}
				at100k := heapNow()
				view100k := viewHeld(&v, at100k)
				b.ReportMetric(float64(at10k)/(1<<20), "heap_MiB_10k")
				b.ReportMetric(float64(at100k)/(1<<20), "heap_MiB_100k")
				b.ReportMetric(float64(at100k)/float64(at10k), "heap_ratio")
				b.ReportMetric(float64(view100k)/float64(max(view10k, 1)), "view_ratio")
				b.Logf("%s: heap %.1f MiB after 10,000 entries, %.1f MiB after 100,000 (%.2f×); the view holds %.1f and %.1f MiB (%.2f×)",
					mode, float64(at10k)/(1<<20), float64(at100k)/(1<<20), float64(at100k)/float64(at10k),
					float64(view10k)/(1<<20), float64(view100k)/(1<<20), float64(view100k)/float64(max(view10k, 1)))
				runtime.KeepAlive(d)
			}
		})
	}
}

// viewHeld drops *v and returns how much of heap (measured with it) it
// held.
func viewHeld(v **viewport, heap uint64) uint64 {
	*v = nil
	after := heapNow()
	if after > heap {
		return 0
	}
	return heap - after
}

// The render cache keeps its painted lines within its byte bound and its
// heights within their count, however many runs a session paints.
func TestCacheIsBoundedInBytes(t *testing.T) {
	t.Parallel()
	c := newRenderCache(NewPainter(PlainTheme))
	v := newViewport(c, 100, 30)
	d := transcript.NewCheckedDocument("live", nil)
	n := 0
	for e := range gen.Entries(gen.Options{Messages: 12_000, Seed: 4}) {
		var err error
		if d, err = d.Append(e); err != nil {
			t.Fatal(err)
		}
		v.SetDocument(d, 1)
		v.Lines()
		n++
		if c.total > cacheBytes || len(c.heights) > maxHeights {
			t.Fatalf("after %d entries the cache holds %d bytes of lines (bound %d) and %d heights (bound %d)",
				n, c.total, cacheBytes, len(c.heights), maxHeights)
		}
	}
	sum := 0
	for el := c.lru.Front(); el != nil; el = el.Next() {
		sum += lineBytes(el.Value.(*cached).lines)
	}
	if sum != c.total || c.total < cacheBytes/2 {
		t.Fatalf("the cache counts %d bytes, its runs hold %d (bound %d): the bound was never reached or the count is off", c.total, sum, cacheBytes)
	}
}
