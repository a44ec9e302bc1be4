package pager

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// BenchmarkPageRead measures one 256 KiB page read at a random anchor, for a
// small and a 300,000-entry conversation. Its p50 and p99 are reported as
// metrics; the goal is that the large one stays within 1.2x of the small.
//
//	go test -run '^$' -bench PageRead -benchtime 20000x ./server/pager
func BenchmarkPageRead(b *testing.B) {
	for _, n := range []int{3000, 300000} {
		b.Run(map[int]string{3000: "3k", 300000: "300k"}[n], func(b *testing.B) {
			items, _ := genItems(b, n)
			s := build(b, b.TempDir(), items)
			defer s.Release()
			ids := make([]string, len(items))
			for i, it := range items {
				ids[i] = it.ID
			}
			items = nil
			rnd := rand.New(rand.NewPCG(1, 2))
			buf := make([]byte, 0, MaxBudget)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				// Anchors past the first 30%, so every page can fill its budget.
				id := ids[len(ids)*3/10+rnd.IntN(len(ids)*7/10)]
				t0 := time.Now()
				p, err := s.Page(buf[:0], id, Before, DefaultBudget)
				lat = append(lat, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(p.Bytes)))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
