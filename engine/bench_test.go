package engine_test

import (
	"context"
	"io"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/transcript"
)

const benchTokens = 10_000

// flood is a provider whose one reply is benchTokens text deltas handed
// out as fast as Next is called: it measures the engine and store, not a
// network.
type flood struct{ events []provider.Event }

func newFlood() *flood {
	evs := make([]provider.Event, 0, benchTokens+2)
	for i := range benchTokens {
		evs = append(evs, provider.Event{Kind: provider.TextDelta, Text: " tok" + strconv.Itoa(i%10)})
	}
	evs = append(evs, provider.Event{Kind: provider.UsageReport, Usage: &provider.Usage{Prompt: provider.Int(10), Completion: provider.Int(benchTokens)}},
		provider.Event{Kind: provider.Done, FinishReason: provider.FinishStop})
	return &flood{events: evs}
}

func (f *flood) Name() string { return "flood" }
func (f *flood) Stream(ctx context.Context, _ provider.Request) (provider.Stream, error) {
	return &floodStream{evs: f.events}, nil
}

type floodStream struct {
	evs []provider.Event
	i   int
}

func (s *floodStream) Next() (provider.Event, error) {
	if s.i >= len(s.evs) {
		return provider.Event{}, io.EOF
	}
	s.i++
	return s.evs[s.i-1], nil
}
func (s *floodStream) Close() error { return nil }

// BenchmarkTurnPerToken is one whole turn of 10,000 streamed tokens per
// iteration, from the provider's event to the store's accepted text; the
// ns/token metric is the cost of one token through engine and store.
func BenchmarkTurnPerToken(b *testing.B) {
	store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	eng := engine.New(store, newFlood())
	defer eng.Close()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; b.Loop(); i++ {
		id := "c" + strconv.Itoa(i)
		eng.Send(ctx, id, "go", nil)
		if r, _ := eng.Wait(ctx, id); r.State != engine.Done {
			b.Fatal(r.State)
		}
	}
	report(b, cpu)
}

// report adds per-token metrics: wall time, throughput, and the process's
// CPU time per token, which stays meaningful on a shared, loaded machine
// where wall time mostly measures waiting for a core.
func report(b *testing.B, cpu0 time.Duration) {
	tokens := float64(b.N * benchTokens)
	perToken := float64(b.Elapsed().Nanoseconds()) / tokens
	b.ReportMetric(perToken, "ns/token")
	b.ReportMetric(1e9/perToken, "tokens/s")
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/tokens, "cpu-ns/token")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStoreOnlyPerToken is the store's share of the same work: the
// stream writer accepting 10,000 deltas with no engine in front of it.
// The engine's overhead is the difference to BenchmarkTurnPerToken.
func BenchmarkStoreOnlyPerToken(b *testing.B) {
	store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	f := newFlood()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for b.Loop() {
		w := store.Lease().Stream()
		for _, ev := range f.events[:benchTokens] {
			w.Text(ev.Text)
		}
		w.Finish()
	}
	report(b, cpu)
}
