package transcript

import (
	"fmt"
	"runtime"
	"testing"
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
			for b.Loop() {
				if err := w.Text("tok "); err != nil {
					b.Fatal(err)
				}
			}
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
			for b.Loop() {
				if i == period {
					b.StopTimer()
					reset()
					b.StartTimer()
					i = 0
				}
				if _, err := l.Append(User{Text: "x"}); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
