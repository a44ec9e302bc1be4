package receipt

import (
	"math"

	"github.com/foliodev/folio/transcript"
)

// Totals is the sum of a set of steps. Its zero value is the sum of no steps,
// and Add combines two sums, so session totals (a parent turn plus its child
// agents) are built the same way as a single turn's.
type Totals struct {
	// Steps is how many model steps were summed.
	Steps int
	// DurationMs is the sum of the steps' durations.
	DurationMs float64

	// PromptTokens, CompletionTokens and CacheReadTokens sum the counts the
	// steps reported; a step that did not report one contributes zero.
	PromptTokens     int64
	CompletionTokens int64
	CacheReadTokens  int64
	// TotalTokens sums each step's totalTokens, or its prompt plus completion
	// when it reported no total.
	TotalTokens int64

	// HasSplit is set when some step reported prompt or completion tokens.
	HasSplit bool
	// HasTotalOnly is set when some step reported totalTokens but neither
	// prompt nor completion, so an in/out split would undercount.
	HasTotalOnly bool
	// HasCache is set when some step reported cacheReadTokens.
	HasCache bool
	// HasCost is set when some step reported a cost; CostUSD sums those.
	HasCost bool
	CostUSD float64

	// GenerationMs is the decode time of the output-bearing steps.
	GenerationMs float64
	// Untimed is set when a step produced output, or may have, without its
	// own generation timing. Throughput is then unknown.
	Untimed bool
}

// Sum adds up a turn's steps. It is also what session totals are built from.
func Sum(steps []transcript.Step) Totals {
	var t Totals
	for i := range steps {
		t.addStep(&steps[i])
	}
	return t
}

// Add returns the sum of t and u.
func (t Totals) Add(u Totals) Totals {
	t.Steps += u.Steps
	t.DurationMs += u.DurationMs
	t.PromptTokens += u.PromptTokens
	t.CompletionTokens += u.CompletionTokens
	t.CacheReadTokens += u.CacheReadTokens
	t.TotalTokens += u.TotalTokens
	t.HasSplit = t.HasSplit || u.HasSplit
	t.HasTotalOnly = t.HasTotalOnly || u.HasTotalOnly
	t.HasCache = t.HasCache || u.HasCache
	t.HasCost = t.HasCost || u.HasCost
	t.CostUSD += u.CostUSD
	t.GenerationMs += u.GenerationMs
	t.Untimed = t.Untimed || u.Untimed
	return t
}

func (t *Totals) addStep(s *transcript.Step) {
	t.Steps++
	t.DurationMs += s.DurationMs
	var prompt, completion int64
	if s.PromptTokens != nil {
		prompt = *s.PromptTokens
	}
	if s.CompletionTokens != nil {
		completion = *s.CompletionTokens
	}
	split := s.PromptTokens != nil || s.CompletionTokens != nil
	t.PromptTokens += prompt
	t.CompletionTokens += completion
	switch {
	case s.TotalTokens != nil:
		t.TotalTokens += *s.TotalTokens
		t.HasTotalOnly = t.HasTotalOnly || !split
	default:
		t.TotalTokens += prompt + completion
	}
	t.HasSplit = t.HasSplit || split
	if s.CacheReadTokens != nil {
		t.CacheReadTokens += *s.CacheReadTokens
		t.HasCache = true
	}
	if s.CostUSD != nil {
		t.CostUSD += *s.CostUSD
		t.HasCost = true
	}

	switch {
	case s.CompletionTokens == nil:
		// Unknown output: the step may have decoded tokens we cannot count.
		t.Untimed = true
	case completion <= 0:
		// No output, so nothing to time; its duration is tool or wait time.
	default:
		if ms, ok := generationMs(s, completion); ok {
			t.GenerationMs += ms
		} else {
			t.Untimed = true
		}
	}
}

// generationMs is a step's decode time: its measured generation duration, or
// its completion tokens over its reported rate when only the rate is known.
func generationMs(s *transcript.Step, completion int64) (float64, bool) {
	if g := s.GenerationDurationMs; g != nil && *g > 0 && validAmount(*g) {
		return *g, true
	}
	if r := s.TokensPerSecond; r != nil && *r > 0 && validAmount(*r) {
		return float64(completion) / *r * 1000, true
	}
	return 0, false
}

// TokPerSec is total completion tokens over total decode time. ok is false
// when there was no output or some output-bearing step lacked timing; the
// caller then shows no rate at all rather than one built from wall-clock time.
func (t Totals) TokPerSec() (tokPerSec float64, ok bool) {
	if t.Untimed || t.CompletionTokens <= 0 || !(t.GenerationMs > 0) {
		return 0, false
	}
	rate := float64(t.CompletionTokens) / (t.GenerationMs / 1000)
	if math.IsInf(rate, 0) || math.IsNaN(rate) {
		return 0, false
	}
	return rate, true
}
