package receipt

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/foliodev/folio/transcript"
)

// fuzzStep builds a step from raw values; bits of mask choose which optional
// fields are present, so the fuzzer explores missing facts as well as odd ones.
func fuzzStep(mask uint8, dur float64, prompt, completion, total, cache int64, cost, rate, gen float64) transcript.Step {
	s := transcript.Step{DurationMs: dur}
	if mask&1 != 0 {
		s.PromptTokens = &prompt
	}
	if mask&2 != 0 {
		s.CompletionTokens = &completion
	}
	if mask&4 != 0 {
		s.TotalTokens = &total
	}
	if mask&8 != 0 {
		s.CacheReadTokens = &cache
	}
	if mask&16 != 0 {
		s.CostUSD = &cost
	}
	if mask&32 != 0 {
		s.TokensPerSecond = &rate
	}
	if mask&64 != 0 {
		s.GenerationDurationMs = &gen
	}
	if mask&128 != 0 {
		ttft := dur - gen // any float, odd ones included
		s.TimeToFirstTokenMs = &ttft
	}
	return s
}

// FuzzLine checks that Line and StepLine never panic on arbitrary step values
// (including ones the codec would reject) and always produce a well-formed
// line: valid UTF-8, no empty parts, no NaN or Inf leaking out of a float,
// and tok/s present exactly when Throughput says it is known.
func FuzzLine(f *testing.F) {
	f.Add(uint8(0x7f), 1200.0, int64(900), int64(12), int64(912), int64(800), 0.0042, 35.7, 340.0,
		uint8(0x42), 20000.0, int64(0), int64(900), int64(0), int64(0), 0.0, 0.0, 9000.0, true, int64(1_764_487_680_000))
	f.Add(uint8(0x04), 100.0, int64(0), int64(0), int64(42), int64(0), 0.0, 0.0, 0.0,
		uint8(0x00), 0.0, int64(0), int64(0), int64(0), int64(0), 0.0, 0.0, 0.0, false, int64(0))
	f.Add(uint8(0x02), 59960.0, int64(-1), int64(-9_223_372_036_854_775_808), int64(1), int64(2), -1.0, -3.0, 0.0,
		uint8(0x7f), 1e308, int64(9_223_372_036_854_775_807), int64(9_223_372_036_854_775_807), int64(3), int64(1e12), 1e308, 5e-324, 5e-324, true, int64(-1))
	f.Add(uint8(0xff), 4100.0, int64(17000), int64(101), int64(17101), int64(13430), 0.0123, 35.7, 3700.0,
		uint8(0x80), 100.0, int64(0), int64(0), int64(0), int64(0), 0.0, 0.0, 200.0, false, int64(0))
	f.Fuzz(func(t *testing.T,
		m1 uint8, d1 float64, p1, c1, t1, k1 int64, cost1, rate1, gen1 float64,
		m2 uint8, d2 float64, p2, c2, t2, k2 int64, cost2, rate2, gen2 float64,
		finished bool, at int64,
	) {
		steps := []transcript.Step{
			fuzzStep(m1, d1, p1, c1, t1, k1, cost1, rate1, gen1),
			fuzzStep(m2, d2, p2, c2, t2, k2, cost2, rate2, gen2),
		}
		for n := 0; n <= len(steps); n++ {
			r := transcript.TurnReceipt{Steps: steps[:n]}
			if finished {
				r.FinishedAt = &at
			}
			line := Line(r, time.UTC)
			checkLine(t, line)
			_, ok := throughput(r.Steps)
			if has := hasPart(line, " tok/s"); has != ok {
				t.Errorf("Line %q shows tok/s = %v, Throughput ok = %v", line, has, ok)
			}
		}
		for i, s := range steps {
			checkLine(t, StepLine(i+1, s))
		}
	})
}

// hasPart reports whether some " · " part of line ends in suffix.
func hasPart(line, suffix string) bool {
	for _, p := range strings.Split(line, " · ") {
		if strings.HasSuffix(p, suffix) {
			return true
		}
	}
	return false
}

func checkLine(t *testing.T, line string) {
	t.Helper()
	if !utf8.ValidString(line) {
		t.Fatalf("invalid UTF-8: %q", line)
	}
	for _, bad := range []string{"NaN", "Inf", "\n"} {
		if strings.Contains(line, bad) {
			t.Fatalf("line contains %q: %q", bad, line)
		}
	}
	for i, p := range strings.Split(line, " · ") {
		if strings.TrimSpace(p) == "" || strings.TrimSpace(p) != p {
			t.Fatalf("part %d of %q is empty or padded", i, line)
		}
	}
}
