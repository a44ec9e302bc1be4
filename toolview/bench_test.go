package toolview

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// BenchmarkReplace1KiB measures accepted updates per second for a 1 KiB
// payload on one item, with one subscriber. ns/op is the host's added
// latency per update: validation, copy, revision, delivery. The cadence is
// disabled (WithCadence(0)) so every update is also delivered; with the
// default cadence most updates are coalesced instead.
func BenchmarkReplace1KiB(b *testing.B) {
	data := append([]byte(`{"text":"`), bytes.Repeat([]byte("x"), 1024-12)...)
	data = append(data, `"}`...)
	for _, cadence := range []time.Duration{0, DefaultCadence} {
		b.Run(fmt.Sprintf("cadence=%v", cadence), func(b *testing.B) {
			h := New(WithCadence(cadence))
			h.Subscribe(func(Change) {})
			inv := mustOpen(b, h, Spec{Tool: "echo", Producer: testManifest(b)})
			p := inv.Presentation()
			pl := Payload{Schema: schemaText, Version: 1, Data: data}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				if _, err := p.Replace(pl); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "updates/s")
			inv.Close(Outcome{}, Result{})
		})
	}
}

// BenchmarkHeldMemory measures the heap held by 1,000 open invocations whose
// primary item is at the 256 KiB bound, after 1 or 10 replacements each:
// superseded values must not add to it.
func BenchmarkHeldMemory(b *testing.B) {
	const invocations = 1000
	data := append([]byte(`"`), bytes.Repeat([]byte("x"), DefaultPayloadLimit-2)...)
	data = append(data, '"')
	for _, replacements := range []int{1, 10} {
		b.Run(fmt.Sprintf("replacements=%d", replacements), func(b *testing.B) {
			m := testManifest(b)
			var held float64
			for range b.N {
				h := New(WithCadence(0))
				before := heap()
				invs := make([]*Invocation, invocations)
				for i := range invs {
					invs[i] = mustOpen(b, h, Spec{Tool: "echo", Producer: m})
					for range replacements {
						if _, err := invs[i].Presentation().Replace(Payload{Schema: schemaText, Version: 1, Data: data}); err != nil {
							b.Fatal(err)
						}
					}
				}
				held = float64(heap() - before)
				runtime.KeepAlive(invs)
				h.Close()
			}
			b.ReportMetric(held, "B-held")
			b.ReportMetric(held/invocations, "B-held/inv")
		})
	}
}

func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
