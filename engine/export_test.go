package engine

import "github.com/foliodev/folio/provider"

// Test seams: the engine's tests set what a program leaves at its default.

// WithBackoff sets the retry policy (default provider.DefaultBackoff), so
// a test retries at once or counts its waits.
func WithBackoff(b provider.Backoff) Option { return func(e *Engine) { e.backoff = b } }

// WithMaxSteps bounds the model steps of one turn (default 50), so a test
// reaches the bound in a few steps.
func WithMaxSteps(n int) Option { return func(e *Engine) { e.maxSteps = n } }

// WithJitter sets the random source for backoff jitter, so a test's
// waits are exact.
func WithJitter(f func() float64) Option { return func(e *Engine) { e.jitter = f } }

// TailEntries is how many entries at the end of a document Open loads, so
// a test can build a conversation longer than that window.
const TailEntries = tailEntries
