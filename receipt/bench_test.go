package receipt

import (
	"fmt"
	"testing"
	"time"

	"github.com/foliodev/folio/transcript"
)

func benchReceipt(steps int) transcript.TurnReceipt {
	finished := time.Date(2026, 11, 30, 7, 28, 0, 0, time.UTC).UnixMilli()
	r := transcript.TurnReceipt{FinishedAt: &finished}
	for range steps {
		r.Steps = append(r.Steps, transcript.Step{
			DurationMs: 4100, PromptTokens: i64(17000), CompletionTokens: i64(101),
			CacheReadTokens: i64(13430), CostUSD: f64(0.0123), GenerationDurationMs: f64(2829),
		})
	}
	return r
}

// BenchmarkLine measures formatting a typical closing receipt; the line is
// built in one buffer, so the returned string should be its only allocation.
func BenchmarkLine(b *testing.B) {
	for _, n := range []int{1, 3, 100} {
		r := benchReceipt(n)
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Line(r, time.UTC)
			}
		})
	}
}

func BenchmarkStepLine(b *testing.B) {
	s := benchReceipt(1).Steps[0]
	b.ReportAllocs()
	for b.Loop() {
		_ = StepLine(1, s)
	}
}
