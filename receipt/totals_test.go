package receipt

import (
	"math"
	"testing"

	"github.com/foliodev/folio/transcript"
)

func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }

func TestThroughput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		steps  []transcript.Step
		want   float64 // rounded to one decimal, as shown
		wantOK bool
	}{
		{
			name: "issue example: total tokens over total generation time",
			steps: []transcript.Step{
				{DurationMs: 10000, CompletionTokens: i64(100), GenerationDurationMs: f64(1000)},
				{DurationMs: 20000, CompletionTokens: i64(900), GenerationDurationMs: f64(9000)},
			},
			want: 100, wantOK: true,
		},
		{
			// 1000 tok/s and 100 tok/s: the mean of rates would say 550.0,
			// the correct figure is 1000 tokens over 9.1 s.
			name: "not an average of per-step rates",
			steps: []transcript.Step{
				{DurationMs: 5000, CompletionTokens: i64(100), GenerationDurationMs: f64(100)},
				{DurationMs: 9500, CompletionTokens: i64(900), GenerationDurationMs: f64(9000)},
			},
			want: 109.9, wantOK: true,
		},
		{
			name: "rate only: time is completion over rate",
			steps: []transcript.Step{
				{DurationMs: 8000, CompletionTokens: i64(300), TokensPerSecond: f64(60)},          // 5 s
				{DurationMs: 12000, CompletionTokens: i64(100), GenerationDurationMs: f64(10000)}, // 10 s
			},
			want: 26.7, wantOK: true, // the mean of rates would be 35.0
		},
		{
			name: "generation duration wins over a reported rate",
			steps: []transcript.Step{
				{DurationMs: 3000, CompletionTokens: i64(100), GenerationDurationMs: f64(2000), TokensPerSecond: f64(999)},
			},
			want: 50, wantOK: true,
		},
		{
			name: "zero generation duration falls back to the rate",
			steps: []transcript.Step{
				{DurationMs: 3000, CompletionTokens: i64(100), GenerationDurationMs: f64(0), TokensPerSecond: f64(40)},
			},
			want: 40, wantOK: true,
		},
		{
			name: "tool time in the step duration does not count",
			steps: []transcript.Step{
				{DurationMs: 60000, CompletionTokens: i64(200), GenerationDurationMs: f64(4000)},
			},
			want: 50, wantOK: true,
		},
		{
			name: "a step without output needs no timing",
			steps: []transcript.Step{
				{DurationMs: 1000, CompletionTokens: i64(100), GenerationDurationMs: f64(1000)},
				{DurationMs: 4000, PromptTokens: i64(50), CompletionTokens: i64(0)},
			},
			want: 100, wantOK: true,
		},
		{
			name: "an output-bearing step missing timing omits the rate",
			steps: []transcript.Step{
				{DurationMs: 1000, CompletionTokens: i64(100), GenerationDurationMs: f64(1000)},
				{DurationMs: 2000, CompletionTokens: i64(50)},
			},
		},
		{
			name: "wall-clock time is never substituted",
			steps: []transcript.Step{
				{DurationMs: 2000, CompletionTokens: i64(100)},
			},
		},
		{
			name: "unknown completion count omits the rate",
			steps: []transcript.Step{
				{DurationMs: 1000, CompletionTokens: i64(100), GenerationDurationMs: f64(1000)},
				{DurationMs: 1000, TotalTokens: i64(42)},
			},
		},
		{
			name:  "zero generation time and no rate is missing timing",
			steps: []transcript.Step{{DurationMs: 1000, CompletionTokens: i64(10), GenerationDurationMs: f64(0)}},
		},
		{
			name:  "NaN timing is missing timing",
			steps: []transcript.Step{{DurationMs: 1000, CompletionTokens: i64(10), GenerationDurationMs: f64(math.NaN())}},
		},
		{
			name:  "timing so small the rate is infinite",
			steps: []transcript.Step{{DurationMs: 1, CompletionTokens: i64(10), GenerationDurationMs: f64(5e-324)}},
		},
		{
			name:  "no output at all",
			steps: []transcript.Step{{DurationMs: 1000, CompletionTokens: i64(0), GenerationDurationMs: f64(10)}},
		},
		{name: "no steps"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := throughput(tc.steps)
			if ok != tc.wantOK {
				t.Fatalf("Throughput ok = %v (rate %v), want %v", ok, got, tc.wantOK)
			}
			if math.Round(got*10)/10 != tc.want {
				t.Errorf("Throughput = %v, want %.1f", got, tc.want)
			}
		})
	}
}

func TestSum(t *testing.T) {
	t.Parallel()
	steps := []transcript.Step{
		{DurationMs: 1000, PromptTokens: i64(1000), CompletionTokens: i64(100), CacheReadTokens: i64(800),
			CostUSD: f64(0.02), GenerationDurationMs: f64(500)},
		{DurationMs: 500, PromptTokens: i64(1200), CompletionTokens: i64(0), TotalTokens: i64(1250)},
		{DurationMs: 250, TotalTokens: i64(42)},
		{DurationMs: 250},
	}
	want := Totals{
		Steps: 4, DurationMs: 2000,
		PromptTokens: 2200, CompletionTokens: 100, CacheReadTokens: 800,
		TotalTokens: 1100 + 1250 + 42,
		HasSplit:    true, HasTotalOnly: true, HasCache: true,
		HasCost: true, CostUSD: 0.02,
		GenerationMs: 500, Untimed: true,
	}
	if got := Sum(steps); got != want {
		t.Errorf("Sum =\n%+v, want\n%+v", got, want)
	}
	if got := Sum(nil); got != (Totals{}) {
		t.Errorf("Sum(nil) = %+v, want the zero Totals", got)
	}
}

// Session totals are built by adding turn (and child agent) totals, so Add
// must agree with summing all the steps at once.
func TestAddMatchesSumOfAllSteps(t *testing.T) {
	t.Parallel()
	a := []transcript.Step{
		{DurationMs: 1000, PromptTokens: i64(10), CompletionTokens: i64(100), GenerationDurationMs: f64(1000), CostUSD: f64(0.5)},
		{DurationMs: 300, CacheReadTokens: i64(7)},
	}
	b := []transcript.Step{
		{DurationMs: 700, TotalTokens: i64(33)},
		{DurationMs: 900, CompletionTokens: i64(300), TokensPerSecond: f64(100)},
	}
	all := append(append([]transcript.Step(nil), a...), b...)
	if got, want := Sum(a).Add(Sum(b)), Sum(all); got != want {
		t.Errorf("Sum(a).Add(Sum(b)) =\n%+v, want\n%+v", got, want)
	}
	if got := (Totals{}).Add(Sum(a)); got != Sum(a) {
		t.Errorf("zero Totals is not the identity of Add: %+v", got)
	}
	// An untimed child makes the session rate unknown too.
	timed := Sum(a[:1])
	if _, ok := timed.TokPerSec(); !ok {
		t.Fatal("a timed turn has no rate")
	}
	if _, ok := timed.Add(Sum([]transcript.Step{{CompletionTokens: i64(5)}})).TokPerSec(); ok {
		t.Error("adding an untimed child kept a session rate")
	}
}
