package receipt

import (
	"time"

	"github.com/foliodev/folio/transcript"
)

// clockText is the finish time Line shows: epoch milliseconds as a 12-hour
// time in loc ("07:28 am"); a nil loc means time.Local.
func clockText(epochMs int64, loc *time.Location) string {
	return string(appendClock(nil, epochMs, loc))
}

// throughput is total completion tokens over total generation time; ok is
// false when any output-bearing step lacks timing. It is deliberately not
// the mean of per-step rates: a short fast step must not weigh as much as a
// long slow one.
func throughput(steps []transcript.Step) (tokPerSec float64, ok bool) {
	return Sum(steps).TokPerSec()
}
