package provider

import "time"

// Clock is the time source of the idle watchdog. Tests that cannot use
// testing/synctest (a real loopback server is outside any bubble) inject a
// manual clock, see providertest.Clock.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed, unless the
	// returned Timer is stopped first.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a stoppable, resettable timer, as *time.Timer is.
type Timer interface {
	Reset(d time.Duration) bool
	Stop() bool
}

// SystemClock is the real clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// AfterFunc wraps time.AfterFunc.
func (SystemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
