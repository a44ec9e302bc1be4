package receipt

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/transcript"
)

func TestLine(t *testing.T) {
	t.Parallel()
	finished := time.Date(2026, 11, 30, 7, 28, 12, 0, time.UTC).UnixMilli()
	tests := []struct {
		name string
		r    transcript.TurnReceipt
		want string
	}{
		{
			name: "issue example: one step with in and out",
			r: transcript.TurnReceipt{Steps: []transcript.Step{
				{DurationMs: 1200, PromptTokens: i64(900), CompletionTokens: i64(12)},
			}},
			want: "1.2s · 900 in → 12 out",
		},
		{
			name: "issue example: only the total is known",
			r: transcript.TurnReceipt{Steps: []transcript.Step{
				{DurationMs: 100, TotalTokens: i64(42)},
			}},
			want: "0.1s · 42 tok",
		},
		{
			name: "issue example: two timed steps",
			r: transcript.TurnReceipt{Steps: []transcript.Step{
				{DurationMs: 10000, CompletionTokens: i64(100), GenerationDurationMs: f64(1000)},
				{DurationMs: 20000, CompletionTokens: i64(900), GenerationDurationMs: f64(9000)},
			}},
			want: "30.0s · 2 steps · 0 in → 1k out · 100.0 tok/s",
		},
		{
			name: "throughput is not the mean of step rates",
			r: transcript.TurnReceipt{Steps: []transcript.Step{
				{DurationMs: 5000, CompletionTokens: i64(100), GenerationDurationMs: f64(100)},
				{DurationMs: 9500, CompletionTokens: i64(900), GenerationDurationMs: f64(9000)},
			}},
			want: "14.5s · 2 steps · 0 in → 1k out · 109.9 tok/s",
		},
		{
			name: "a step missing timing omits tok/s entirely",
			r: transcript.TurnReceipt{Steps: []transcript.Step{
				{DurationMs: 2000, PromptTokens: i64(10), CompletionTokens: i64(100)},
				{DurationMs: 1000, PromptTokens: i64(5), CompletionTokens: i64(50), GenerationDurationMs: f64(500)},
			}},
			want: "3.0s · 2 steps · 15 in → 150 out",
		},
		{
			name: "a total-only step turns the split into a total",
			r: transcript.TurnReceipt{Steps: []transcript.Step{
				{DurationMs: 1000, PromptTokens: i64(100), CompletionTokens: i64(20)},
				{DurationMs: 1000, TotalTokens: i64(500)},
			}},
			want: "2.0s · 2 steps · 620 tok",
		},
		{
			name: "a reported total does not hide a known split",
			r: transcript.TurnReceipt{Steps: []transcript.Step{
				{DurationMs: 1000, PromptTokens: i64(48000), CompletionTokens: i64(315), TotalTokens: i64(49000)},
			}},
			want: "1.0s · 48k in → 315 out",
		},
		{
			name: "no usage reported",
			r:    transcript.TurnReceipt{Steps: []transcript.Step{{DurationMs: 500}}},
			want: "0.5s",
		},
		{
			name: "no steps",
			r:    transcript.TurnReceipt{},
			want: "0.0s",
		},
		{
			name: "cost from the steps that report it",
			r: transcript.TurnReceipt{Steps: []transcript.Step{
				{DurationMs: 1000, CostUSD: f64(0.0042)},
				{DurationMs: 1000},
			}},
			want: "2.0s · 2 steps · $0.0042",
		},
		{
			name: "zero cost is still shown",
			r:    transcript.TurnReceipt{Steps: []transcript.Step{{DurationMs: 1000, CostUSD: f64(0)}}},
			want: "1.0s · $0.00",
		},
		{
			name: "costs add up",
			r: transcript.TurnReceipt{Steps: []transcript.Step{
				{DurationMs: 1000, CostUSD: f64(0.006)},
				{DurationMs: 1000, CostUSD: f64(0.006)},
			}},
			want: "2.0s · 2 steps · $0.01",
		},
		{
			name: "finish time ends the line",
			r: transcript.TurnReceipt{
				Steps:      []transcript.Step{{DurationMs: 840}},
				FinishedAt: &finished,
			},
			want: "0.8s · 07:28 am",
		},
		{
			name: "every part, in order",
			r: transcript.TurnReceipt{
				Steps: []transcript.Step{
					{DurationMs: 40000, PromptTokens: i64(17000), CompletionTokens: i64(300), CacheReadTokens: i64(13000),
						CostUSD: f64(1.2), GenerationDurationMs: f64(3000)},
					{DurationMs: 25000, PromptTokens: i64(31000), CompletionTokens: i64(15), CostUSD: f64(0.07),
						TokensPerSecond: f64(15)},
				},
				FinishedAt: &finished,
			},
			// 315 tokens over 3 s + 1 s; cache reads are not part of the turn line.
			want: "1m 05s · 2 steps · 48k in → 315 out · 78.8 tok/s · $1.27 · 07:28 am",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Line(tc.r, time.UTC); got != tc.want {
				t.Errorf("Line =\n  %q\nwant\n  %q", got, tc.want)
			}
		})
	}
}

func TestLineUsesTheGivenZone(t *testing.T) {
	t.Parallel()
	finished := time.Date(2026, 11, 30, 7, 28, 0, 0, time.UTC).UnixMilli()
	r := transcript.TurnReceipt{Steps: []transcript.Step{{DurationMs: 100}}, FinishedAt: &finished}
	if got, want := Line(r, time.FixedZone("CET", 3600)), "0.1s · 08:28 am"; got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
	if got, want := Line(r, nil), "0.1s · "+clockText(finished, time.Local); got != want {
		t.Errorf("Line(nil loc) = %q, want %q", got, want)
	}
}

func TestStepLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		n    int
		s    transcript.Step
		want string
	}{
		{
			name: "issue example",
			n:    1,
			s: transcript.Step{DurationMs: 4100, PromptTokens: i64(17000), CompletionTokens: i64(101),
				CacheReadTokens: i64(13430), TokensPerSecond: f64(35.7), CostUSD: f64(0.0123)},
			want: "step 1 · 4.1s · 17k in → 101 out (79% cached) · 35.7 tok/s · $0.01",
		},
		{
			name: "rate from generation time",
			n:    2,
			s:    transcript.Step{DurationMs: 9000, PromptTokens: i64(500), CompletionTokens: i64(250), GenerationDurationMs: f64(2000)},
			want: "step 2 · 9.0s · 500 in → 250 out · 125.0 tok/s",
		},
		{
			name: "no timing, no rate",
			n:    3,
			s:    transcript.Step{DurationMs: 9000, PromptTokens: i64(500), CompletionTokens: i64(250)},
			want: "step 3 · 9.0s · 500 in → 250 out",
		},
		{
			name: "only a total",
			n:    4,
			s:    transcript.Step{DurationMs: 100, TotalTokens: i64(42), CacheReadTokens: i64(10)},
			want: "step 4 · 0.1s · 42 tok",
		},
		{
			name: "nothing cached is still reported when the count is known",
			n:    1,
			s:    transcript.Step{DurationMs: 100, PromptTokens: i64(100), CompletionTokens: i64(1), CacheReadTokens: i64(0)},
			want: "step 1 · 0.1s · 100 in → 1 out (0% cached)",
		},
		{
			name: "almost all cached does not round to 100%",
			n:    1,
			s:    transcript.Step{DurationMs: 100, PromptTokens: i64(1000), CompletionTokens: i64(1), CacheReadTokens: i64(998)},
			want: "step 1 · 0.1s · 1k in → 1 out (99% cached)",
		},
		{
			name: "all cached",
			n:    1,
			s:    transcript.Step{DurationMs: 100, PromptTokens: i64(1000), CompletionTokens: i64(1), CacheReadTokens: i64(1000)},
			want: "step 1 · 0.1s · 1k in → 1 out (100% cached)",
		},
		{
			name: "cache over-report is capped",
			n:    1,
			s:    transcript.Step{DurationMs: 100, PromptTokens: i64(10), CompletionTokens: i64(1), CacheReadTokens: i64(900)},
			want: "step 1 · 0.1s · 10 in → 1 out (100% cached)",
		},
		{
			name: "no cached share without a prompt count",
			n:    1,
			s:    transcript.Step{DurationMs: 100, CompletionTokens: i64(1), CacheReadTokens: i64(900)},
			want: "step 1 · 0.1s · 0 in → 1 out",
		},
		{
			name: "time to first token after the duration",
			n:    1,
			s: transcript.Step{DurationMs: 4100, TimeToFirstTokenMs: f64(412), PromptTokens: i64(17000), CompletionTokens: i64(101),
				CacheReadTokens: i64(13430), TokensPerSecond: f64(35.7), CostUSD: f64(0.0123)},
			want: "step 1 · 4.1s · ttft 0.4s · 17k in → 101 out (79% cached) · 35.7 tok/s · $0.01",
		},
		{
			name: "a zero time to first token is a measurement",
			n:    2,
			s:    transcript.Step{DurationMs: 100, TimeToFirstTokenMs: f64(0)},
			want: "step 2 · 0.1s · ttft 0.0s",
		},
		{
			name: "a long wait for the first token reads in minutes",
			n:    3,
			s:    transcript.Step{DurationMs: 95000, TimeToFirstTokenMs: f64(61000)},
			want: "step 3 · 1m 35s · ttft 1m 01s",
		},
		{
			name: "an invalid time to first token is left out",
			n:    4,
			s:    transcript.Step{DurationMs: 100, TimeToFirstTokenMs: f64(-5)},
			want: "step 4 · 0.1s",
		},
		{
			name: "duration only",
			n:    12,
			s:    transcript.Step{DurationMs: 125000},
			want: "step 12 · 2m 05s",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := StepLine(tc.n, tc.s); got != tc.want {
				t.Errorf("StepLine =\n  %q\nwant\n  %q", got, tc.want)
			}
		})
	}
}

// The time to first token is a per-step fact: the turn's line stays as it
// was, and a NaN or infinite value never reaches a step line.
func TestTimeToFirstTokenOnlyInStepLines(t *testing.T) {
	t.Parallel()
	s := transcript.Step{DurationMs: 30000, PromptTokens: i64(0), CompletionTokens: i64(1000), GenerationDurationMs: f64(10000)}
	with := s
	with.TimeToFirstTokenMs = f64(400)
	if a, b := Line(transcript.TurnReceipt{Steps: []transcript.Step{s}}, time.UTC),
		Line(transcript.TurnReceipt{Steps: []transcript.Step{with}}, time.UTC); a != b || strings.Contains(b, "ttft") {
		t.Errorf("Line changed with a time to first token: %q, without %q", b, a)
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -0.5} {
		s := transcript.Step{DurationMs: 100, TimeToFirstTokenMs: f64(bad)}
		if got := StepLine(1, s); got != "step 1 · 0.1s" {
			t.Errorf("ttft %v: StepLine = %q", bad, got)
		}
	}
}
