package toolview

import "time"

// clock is the host's time source. Tests inject one, or run the real clock
// inside testing/synctest, whose bubble fakes time for the time package.
type clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d and returns a function
	// that stops the timer (reporting whether it stopped it before it fired).
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}
