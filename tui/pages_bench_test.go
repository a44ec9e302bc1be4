package tui

import (
	tea "charm.land/bubbletea/v2"

	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// sizedPager pages a log through its page index as the chat does, with
// each entry's stored size.
type sizedPager struct{ path string }

func (p sizedPager) Page(lo, hi int) ([]transcript.Entry, []int, error) {
	return history.HeadEntries(p.path, lo, hi)
}

// BenchmarkPageBack resumes a generated 300,000-message conversation in a
// 120×40 fullscreen view, as the chat does (the engine's tail, pages
// through the log's index), and presses PageUp 50 times from the live
// edge, a frame after each. It reports each key's time (median, p99 and
// slowest, the page reads included) and the heap after the 50 pages
// against the heap at the live edge.
//
//	go test ./tui -run '^$' -bench PageBack -benchtime 1x
func BenchmarkPageBack(b *testing.B) {
	// A log in a data folder's conversations folder, with the page index
	// such a log keeps (the chat's logs all have one).
	dir := filepath.Join(b.TempDir(), "conversations")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "20260101-000000-b16b16.jsonl")
	if err := os.Rename(genLog(b, 300_000, 2), path); err != nil {
		b.Fatal(err)
	}
	if _, _, err := (sizedPager{path}).Page(0, 1); err != nil {
		b.Fatal(err)
	}
	src := resumedTail(b, path)
	for b.Loop() {
		v := newViewport(newRenderCache(NewPainter(PlainTheme)), 120, 40)
		v.Pager = sizedPager{path}
		v.SetDocument(src, 1)
		v.Lines()
		edge := heapNow()
		var ts []time.Duration
		for range 50 {
			t0 := time.Now()
			v.Update(tea.KeyPressMsg{Code: tea.KeyPgUp})
			v.Lines()
			ts = append(ts, time.Since(t0))
		}
		after := heapNow()
		slices.Sort(ts)
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		p99 := ts[(len(ts)*99+99)/100-1]
		b.ReportMetric(ms(ts[len(ts)/2]), "key_ms_median")
		b.ReportMetric(ms(p99), "key_ms_p99")
		b.ReportMetric(float64(after)/float64(edge), "heap_ratio")
		b.Logf("50 pages back from position %d: key median %.1f ms, p99 %.1f ms, slowest %.1f ms; heap %.1f MiB at the edge, %.1f MiB after (%.2f×); the view holds positions %d..%d",
			src.Elided(), ms(ts[len(ts)/2]), ms(p99), ms(ts[len(ts)-1]), float64(edge)/(1<<20), float64(after)/(1<<20),
			float64(after)/float64(edge), v.doc.Elided(), v.doc.Elided()+v.doc.Len())
		if v.Following() || v.doc.Elided() >= src.Elided() {
			b.Fatal("the view did not page back")
		}
	}
}
