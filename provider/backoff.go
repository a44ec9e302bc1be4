package provider

import "time"

// Backoff is the retry policy for retryable provider errors: exponential
// delays with jitter, a bounded number of retries, and the provider's
// Retry-After honoured. It is a pure value; the caller does the waiting, so
// the policy is testable without sleeping.
type Backoff struct {
	// Base is the delay before the first retry (before jitter).
	Base time.Duration
	// Max caps any computed delay.
	Max time.Duration
	// Retries is how many retries are allowed after the first attempt.
	Retries int
	// MaxRetryAfter is the longest Retry-After folio waits for; a provider
	// asking for more ends the retries, since the user is better told.
	MaxRetryAfter time.Duration
}

// DefaultBackoff is the policy the engine uses unless configured otherwise:
// about 1s, 2s, 4s, 8s between at most four retries.
var DefaultBackoff = Backoff{Base: time.Second, Max: 30 * time.Second, Retries: 4, MaxRetryAfter: 2 * time.Minute}

// Delay returns how long to wait before retry number retry (1 for the first
// retry) after err, and whether to retry at all. jitter is a number in
// [0, 1) from the caller's random source: the delay is drawn from the upper
// half of the exponential step ("equal jitter"), so concurrent clients spread
// out but never retry immediately. A Retry-After from the provider replaces
// the computed delay when it is longer.
func (b Backoff) Delay(retry int, err error, jitter float64) (time.Duration, bool) {
	pe := AsError(err)
	if pe == nil || !pe.Retryable() || retry < 1 || retry > b.Retries {
		return 0, false
	}
	if jitter < 0 || jitter >= 1 {
		jitter = 0
	}
	d := b.Base
	for i := 1; i < retry && d < b.Max; i++ {
		d *= 2
	}
	if b.Max > 0 && d > b.Max {
		d = b.Max
	}
	d = d/2 + time.Duration(jitter*float64(d/2))
	if pe.RetryAfter > 0 {
		if b.MaxRetryAfter > 0 && pe.RetryAfter > b.MaxRetryAfter {
			return 0, false
		}
		if pe.RetryAfter > d {
			d = pe.RetryAfter
		}
	}
	return d, true
}
