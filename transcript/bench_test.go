package transcript

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// BenchmarkStreamDelta measures accepting one text delta into a streaming
// answer at the end of a small and a large document. The cost must not grow
// with the document: the delta is appended to the answer's buffer, and the
// new document shares everything but its short open tail. Pacing is off so
// timer noise does not enter the measurement; a subscriber that never reads
// makes every delta publish into a full slot.
func BenchmarkStreamDelta(b *testing.B) {
	for _, n := range []int{10, 100_000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			s := instant(WithDocument(hydrated(b, n)))
			sub := s.Subscribe()
			defer sub.Close()
			w := s.Lease().Stream()
			if err := w.Text("start"); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				if err := w.Text("tok "); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkPublishAfterAppend measures appending one entry and publishing
// the snapshot at 100 and 100,000 entries. The document is rebuilt (off the
// clock) every n/10 appends so its size stays near n.
func BenchmarkPublishAfterAppend(b *testing.B) {
	for _, n := range []int{100, 100_000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			entries := hydrated(b, n).Entries()
			s := instant()
			sub := s.Subscribe()
			defer sub.Close()
			var l Lease
			reset := func() {
				d, err := NewDocument("bench", entries)
				if err != nil {
					b.Fatal(err)
				}
				s.Replace(d)
				l = s.Lease()
				// Collect a large discarded document now, off the clock, so
				// its garbage is not charged to the appends that follow.
				if n >= 10_000 {
					runtime.GC()
				}
			}
			reset()
			period, i := max(n/10, 10), 0
			b.ReportAllocs()
			var cpu time.Duration // CPU time on the clock only, like b's timer
			start := processCPU()
			for b.Loop() {
				if i == period {
					cpu += processCPU() - start
					b.StopTimer()
					reset()
					b.StartTimer()
					start = processCPU()
					i = 0
				}
				if _, err := l.Append(User{Text: "x"}); err != nil {
					b.Fatal(err)
				}
				i++
			}
			cpu += processCPU() - start
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// reportCPU adds the process CPU time per operation since start.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((processCPU()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
