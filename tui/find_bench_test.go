package tui

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// sizedFinder is sizedPager that also finds entries through the page
// index, as the chat's session does (one index open per look-up).
type sizedFinder struct{ sizedPager }

func (p sizedFinder) Find(id string) (int, error) {
	f, err := os.Open(p.path)
	if err != nil {
		return -1, err
	}
	defer f.Close()
	ix, err := history.OpenIndex(p.path, f, 0)
	if err != nil {
		return -1, err
	}
	defer ix.Close()
	d, err := ix.Document(ix.Head())
	if err != nil {
		return -1, err
	}
	return d.Find(id)
}

// PageAround reads as the chat does (history.HeadEntriesAround).
func (p sizedFinder) PageAround(id string, n, limit int) (lo, at int, es []transcript.Entry, sizes []int, err error) {
	return history.HeadEntriesAround(p.path, id, n, limit)
}

// BenchmarkOpenAtHit compares the terminal's open of a generated
// 300,000-message conversation at a search hit a tenth of the way in (the
// engine's tail read through the page index, as a resume does, then the
// hit found through the index, the page around it read and the window's
// first frame painted at it, the hit marked) with its open at the latest
// page (the same tail and the first frame at the live edge). Each round
// opens both, in turn; it reports the medians and their ratio:
//
//	go test ./tui -run '^$' -bench OpenAtHit -benchtime 20x
func BenchmarkOpenAtHit(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "conversations")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "20260101-000000-b16b16.jsonl")
	if err := os.Rename(genLog(b, 300_000, 2), path); err != nil {
		b.Fatal(err)
	}
	pg := sizedFinder{sizedPager{path}}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	ix, err := history.OpenIndex(path, f, 0)
	if err != nil {
		b.Fatal(err)
	}
	d, err := ix.Document(ix.Head())
	if err != nil {
		b.Fatal(err)
	}
	refs, err := d.Refs(d.Len()/10, d.Len()/10+1)
	if err != nil {
		b.Fatal(err)
	}
	hit := refs[0].ID
	ix.Close()
	f.Close()
	open := func(atHit bool) time.Duration {
		t0 := time.Now()
		src := resumedTail(b, path)
		v := newViewport(newRenderCache(NewPainter(PlainTheme)), 120, 40)
		v.Pager = pg
		v.SetDocument(src, 1)
		if atHit && !v.GoTo(hit, -1, []string{"the"}) {
			b.Fatalf("no entry %s", hit)
		}
		v.Lines()
		dt := time.Since(t0)
		if _, ok := v.doc.Index(hit); ok != atHit {
			b.Fatalf("the window holds the hit: %v", ok)
		}
		return dt
	}
	var latest, atHit []time.Duration
	for b.Loop() {
		latest = append(latest, open(false))
		atHit = append(atHit, open(true))
	}
	med := func(ds []time.Duration) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[len(s)/2]
	}
	ml, mh := med(latest), med(atHit)
	b.ReportMetric(float64(ml.Microseconds())/1000, "latest_ms")
	b.ReportMetric(float64(mh.Microseconds())/1000, "hit_ms")
	b.ReportMetric(float64(mh)/float64(ml), "hit/latest")
}
