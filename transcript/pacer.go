package transcript

import (
	"time"
	"unicode/utf8"
)

// Pacing says how fast a stream writer reveals accepted text to readers.
// Pacing only moves a cursor over text the document already holds: it never
// delays acceptance, and what a save sees does not depend on it.
type Pacing struct {
	// Tick is the time between reveals. Zero turns pacing off: accepted
	// text is visible at once.
	Tick time.Duration
	// MinRate is the slowest reveal, in bytes per second.
	MinRate float64
	// CatchUp bounds the lag: the reveal speeds up so that a backlog is
	// shown in about this long, however much text arrived at once.
	CatchUp time.Duration
}

// DefaultPacing reveals at least 300 bytes a second, about thirty times a
// second, and never lags much more than a third of a second behind the
// provider.
var DefaultPacing = Pacing{Tick: 33 * time.Millisecond, MinRate: 300, CatchUp: 350 * time.Millisecond}

func (p Pacing) enabled() bool { return p.Tick > 0 }

// pacer chooses how much of a growing text is visible. It holds only a
// cursor and timing state; the text itself is passed in on every call and
// read in place, so a tick costs the same however long the text is and
// copies nothing.
//
// A pacer is not safe for concurrent use; its owner serializes calls.
type pacer struct {
	cfg    Pacing
	cursor int
	last   time.Time
	owed   float64 // fractional bytes earned but not yet revealed
}

// newPacer returns a pacer with its cursor at the start of the text.
func newPacer(cfg Pacing) *pacer { return &pacer{cfg: cfg} }

// Cursor is the byte length of the visible prefix.
func (p *pacer) Cursor() int { return p.cursor }

// Wake starts the clock: time before now does not count toward the reveal.
// Call it when text arrives while the pacer is caught up, so that idle time
// is not paid out as one burst.
func (p *pacer) Wake(now time.Time) {
	p.last = now
	p.owed = 0
}

// JumpTo moves the cursor forward to n (never back), for a flush that
// revealed text without the pacer.
func (p *pacer) JumpTo(n int) {
	if n > p.cursor {
		p.cursor = n
	}
}

// Advance moves the cursor for the time passed since the last call and
// returns it. The cursor never splits a UTF-8 sequence and never passes
// len(src).
func (p *pacer) Advance(src string, now time.Time) int {
	if p.last.IsZero() {
		p.last = now
	}
	dt := max(now.Sub(p.last).Seconds(), 0)
	p.last = now
	backlog := len(src) - p.cursor
	if backlog <= 0 {
		p.owed = 0
		return p.cursor
	}
	rate := p.cfg.MinRate
	if c := p.cfg.CatchUp.Seconds(); c > 0 {
		rate = max(rate, float64(backlog)/c)
	}
	p.owed += rate * dt
	step := int(p.owed)
	if step <= 0 {
		return p.cursor
	}
	p.owed -= float64(step)
	n := min(p.cursor+step, len(src))
	for n < len(src) && !utf8.RuneStart(src[n]) {
		n++
	}
	p.cursor = n
	if n == len(src) {
		p.owed = 0
	}
	return n
}
