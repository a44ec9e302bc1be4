package receipt

import (
	"math"
	"strconv"
	"time"
)

// Duration formats milliseconds: under a minute "%.1fs", otherwise "Xm YYs".
func Duration(ms float64) string {
	return string(appendDuration(nil, ms))
}

func appendDuration(b []byte, ms float64) []byte {
	if !validAmount(ms) {
		return append(b, "?s"...)
	}
	// Round to what "%.1fs" would show before choosing the form, so a value
	// such as 59 960 ms becomes a minute instead of "60.0s".
	if tenths := math.Round(ms / 100); tenths < 600 {
		b = strconv.AppendFloat(b, tenths/10, 'f', 1, 64)
		return append(b, 's')
	}
	secs := math.Round(ms / 1000)
	// Mod stays in [0, 60) even where secs is too large for exact division.
	rest := math.Mod(secs, 60)
	mins := (secs - rest) / 60
	b = strconv.AppendFloat(b, mins, 'f', 0, 64)
	b = append(b, "m "...)
	if rest < 10 {
		b = append(b, '0')
	}
	b = strconv.AppendFloat(b, rest, 'f', 0, 64)
	return append(b, 's')
}

// Count formats a token count compactly: 48000 → "48k", 1000 → "1k", 315 →
// "315", 1500 → "1.5k", 1_250_000 → "1.3M".
func Count(n int64) string {
	return string(appendCount(nil, n))
}

var countUnits = [...]struct {
	size   float64
	suffix byte
}{{1e3, 'k'}, {1e6, 'M'}, {1e9, 'B'}, {1e12, 'T'}}

func appendCount(b []byte, n int64) []byte {
	if n > -1000 && n < 1000 {
		return strconv.AppendInt(b, n, 10)
	}
	// Negative counts never come from a stored receipt, but sums can be built
	// by callers; working on the float magnitude avoids negating MinInt64.
	f := float64(n)
	if f < 0 {
		b = append(b, '-')
		f = -f
	}
	for i, u := range countUnits {
		v := f / u.size
		if tenths := math.Round(v * 10); tenths < 100 {
			b = strconv.AppendFloat(b, tenths/10, 'f', 1, 64)
			if b[len(b)-1] == '0' { // "1.0k" reads better as "1k"
				b = b[:len(b)-2]
			}
			return append(b, u.suffix)
		}
		if whole := math.Round(v); whole < 1000 || i == len(countUnits)-1 {
			b = strconv.AppendFloat(b, whole, 'f', 0, 64)
			return append(b, u.suffix)
		}
	}
	panic("unreachable: the last unit always returns")
}

// Cost formats US dollars: 0 → "$0.00", below $0.0001 → "<$0.0001", below one
// cent → "$0.0042", otherwise "$1.27".
func Cost(usd float64) string {
	return string(appendCost(nil, usd))
}

func appendCost(b []byte, usd float64) []byte {
	switch {
	case !validAmount(usd):
		return append(b, "$?"...)
	case usd == 0:
		return append(b, "$0.00"...)
	case usd < 0.0001:
		return append(b, "<$0.0001"...)
	}
	b = append(b, '$')
	// Decide on the rounded value so 0.009996 reads "$0.01", not "$0.0100".
	if math.Round(usd*1e4) < 100 {
		return strconv.AppendFloat(b, usd, 'f', 4, 64)
	}
	return strconv.AppendFloat(b, usd, 'f', 2, 64)
}

func appendClock(b []byte, epochMs int64, loc *time.Location) []byte {
	if loc == nil {
		loc = time.Local
	}
	return time.UnixMilli(epochMs).In(loc).AppendFormat(b, "03:04 pm")
}

// validAmount reports whether v is a finite, non-negative number, the only
// kind the transcript codec accepts for durations, rates and costs.
func validAmount(v float64) bool {
	return v >= 0 && !math.IsInf(v, 1)
}
