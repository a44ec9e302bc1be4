package receipt

import (
	"math"
	"strconv"
	"time"

	"github.com/foliodev/folio/transcript"
)

const sep = " · "

// Line formats the closing receipt line of a turn, for example
// "30.0s · 2 steps · 0 in → 1k out · 100.0 tok/s · $0.01 · 07:28 am". loc is
// the time zone for the finish time (nil means time.Local). Parts whose facts
// are missing are left out rather than estimated.
func Line(r transcript.TurnReceipt, loc *time.Location) string {
	t := Sum(r.Steps)
	b := make([]byte, 0, 96)
	b = appendDuration(b, t.DurationMs)
	if t.Steps > 1 {
		b = append(b, sep...)
		b = strconv.AppendInt(b, int64(t.Steps), 10)
		b = append(b, " steps"...)
	}
	b = appendUsage(b, &t, false)
	b = appendRate(b, &t)
	if t.HasCost {
		b = append(b, sep...)
		b = appendCost(b, t.CostUSD)
	}
	if r.FinishedAt != nil {
		b = append(b, sep...)
		b = appendClock(b, *r.FinishedAt, loc)
	}
	return string(b)
}

// StepLine formats one step of the per-step breakdown, n counting from 1:
// "step 1 · 4.1s · 17k in → 101 out (79% cached) · 35.7 tok/s · $0.01".
// A step that measured its time to first token shows it after the duration:
// "step 1 · 4.1s · ttft 0.4s · 17k in → 101 out …". The turn's Line never
// does: the wait for the first token is a per-request fact, and a sum of
// them over steps would mean nothing. An invalid value (negative, NaN,
// infinite) is left out, as an unmeasured one is.
func StepLine(n int, s transcript.Step) string {
	t := Sum([]transcript.Step{s})
	b := make([]byte, 0, 96)
	b = append(b, "step "...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, sep...)
	b = appendDuration(b, t.DurationMs)
	if f := s.TimeToFirstTokenMs; f != nil && validAmount(*f) {
		b = append(b, sep+"ttft "...)
		b = appendDuration(b, *f)
	}
	b = appendUsage(b, &t, true)
	b = appendRate(b, &t)
	if t.HasCost {
		b = append(b, sep...)
		b = appendCost(b, t.CostUSD)
	}
	return string(b)
}

// appendUsage writes the token part, if any step reported tokens.
func appendUsage(b []byte, t *Totals, cached bool) []byte {
	switch {
	case t.HasSplit && !t.HasTotalOnly:
		b = append(b, sep...)
		b = appendCount(b, t.PromptTokens)
		b = append(b, " in → "...)
		b = appendCount(b, t.CompletionTokens)
		b = append(b, " out"...)
		if cached && t.HasCache && t.PromptTokens > 0 {
			b = append(b, " ("...)
			b = strconv.AppendInt(b, cachedPercent(t.CacheReadTokens, t.PromptTokens), 10)
			b = append(b, "% cached)"...)
		}
	case t.HasSplit || t.HasTotalOnly:
		b = append(b, sep...)
		b = appendCount(b, t.TotalTokens)
		b = append(b, " tok"...)
	}
	return b
}

func appendRate(b []byte, t *Totals) []byte {
	rate, ok := t.TokPerSec()
	if !ok {
		return b
	}
	b = append(b, sep...)
	b = strconv.AppendFloat(b, rate, 'f', 1, 64)
	return append(b, " tok/s"...)
}

// cachedPercent rounds cache/prompt to a whole percent, keeping 100 for a
// fully cached prompt and capping over-reports at 100.
func cachedPercent(cache, prompt int64) int64 {
	if cache >= prompt {
		return 100
	}
	if cache <= 0 {
		return 0
	}
	p := int64(math.Round(float64(cache) / float64(prompt) * 100))
	return min(p, 99)
}
