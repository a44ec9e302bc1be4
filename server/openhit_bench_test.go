package server

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/search"
	"github.com/foliodev/folio/server/pager"
)

// BenchmarkOpenAtHit compares what opening a generated 300,000-message
// conversation costs the server at a search hit deep in it (a capture and
// the first page around the hit's entry, what the web app's
// /c/{id}?at={entry} asks) with opening it at its latest page (a capture
// and the first page at "latest"). The hit is the oldest hit of a word
// found in the conversation (search.Options.Newest). Each round opens both,
// in turn; "cold" drops the log and its page index from the page cache
// before each open. It reports the medians and their ratio, hit ÷ latest:
//
//	go test -run '^$' -bench OpenAtHit -benchtime 20x ./server
func BenchmarkOpenAtHit(b *testing.B) {
	ts := newTestServer(b, Options{})
	path := ts.writeGen(b, "c", 300_000, 2)
	buildIndex(b, path)
	ix, err := search.Open(ts.data)
	if err != nil {
		b.Fatal(err)
	}
	hits, err := ix.Search(context.Background(), "537 conversation:c", search.Options{Limit: search.MaxLimit, Newest: true, Timeout: time.Minute})
	ix.Close()
	if err != nil || len(hits) == 0 {
		b.Fatalf("no hit to open at: %v", err)
	}
	hit := hits[len(hits)-1].Entry
	for _, cold := range []bool{false, true} {
		name := "warm"
		if cold {
			name = "cold"
		}
		b.Run(name, func(b *testing.B) {
			open := func(anchor string, dir pager.Direction) time.Duration {
				if cold {
					dropCache(b, path, history.IndexPath(path))
				}
				c := newConversation(ts.Server, "c", path)
				t0 := time.Now()
				cp, err := c.capture("", nil)
				if err != nil {
					b.Fatal(err)
				}
				p, err := cp.snap.Page(nil, anchor, dir, pager.DefaultBudget)
				d := time.Since(t0)
				if err != nil || len(p.Bytes) == 0 {
					b.Fatalf("page %s %s: %v", dir, anchor, err)
				}
				if anchor != pager.AnchorLatest && !containsID(p.Bytes, anchor) {
					b.Fatalf("the page around %s does not hold it", anchor)
				}
				cp.snap.Release()
				c.mu.Lock()
				if c.f != nil {
					c.f.Close()
				}
				c.mu.Unlock()
				return d
			}
			var latest, atHit []time.Duration
			for b.Loop() {
				latest = append(latest, open(pager.AnchorLatest, pager.Before))
				atHit = append(atHit, open(hit, pager.Around))
			}
			ml, mh := medianDuration(latest), medianDuration(atHit)
			b.ReportMetric(float64(ml.Microseconds())/1000, "latest_ms")
			b.ReportMetric(float64(mh.Microseconds())/1000, "hit_ms")
			b.ReportMetric(float64(mh)/float64(ml), "hit/latest")
		})
	}
}

func medianDuration(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func containsID(b []byte, id string) bool {
	return bytes.Contains(b, []byte(`"id":"`+id+`"`))
}
