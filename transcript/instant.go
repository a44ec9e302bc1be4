package transcript

import (
	"fmt"
	"time"
)

// ParseInstant parses an ISO-8601 instant that names its offset
// ("2026-01-01T00:00:00.000Z", "2026-01-01T01:00:00+01:00").
func ParseInstant(s string) (time.Time, error) {
	if t, ok := parseCanonicalInstant(s); ok {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an ISO-8601 instant with an offset", s)
	}
	return t, nil
}

// parseCanonicalInstant reads the form folio writes, UTC with milliseconds
// ("2026-01-01T00:00:00.000Z"), without time.Parse's generality. It gives
// the same time as time.Parse, and false for anything else.
func parseCanonicalInstant(s string) (time.Time, bool) {
	if len(s) != 24 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
		s[16] != ':' || s[19] != '.' || s[23] != 'Z' {
		return time.Time{}, false
	}
	n := func(i, j int) int {
		v := 0
		for ; i < j; i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	y, mo, d, h, mi, sec, ms := n(0, 4), n(5, 7), n(8, 10), n(11, 13), n(14, 16), n(17, 19), n(20, 23)
	if y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 || ms < 0 {
		return time.Time{}, false
	}
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[mo-1]
	if mo == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 29
	}
	if d > days {
		return time.Time{}, false
	}
	unix := daysFromCivil(y, mo, d)*86400 + int64(h*3600+mi*60+sec)
	return time.Unix(unix, int64(ms)*int64(time.Millisecond)).UTC(), true
}

// daysFromCivil is the number of days from 1970-01-01 to a valid date of
// the proleptic Gregorian calendar, counted in 400-year eras of 146,097
// days from a year that starts in March, so the leap day comes last
// (Howard Hinnant's days_from_civil). It spares time.Date's
// normalisation, which a checked date does not need.
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400                     // [0, 399]
	doy := (153*((m+9)%12)+2)/5 + d - 1    // [0, 365]
	doe := yoe*365 + yoe/4 - yoe/100 + doy // [0, 146096]
	return int64(era)*146097 + int64(doe) - 719468
}

// AppendInstant appends t in folio's canonical instant form: RFC 3339 in t's
// own offset, with milliseconds, or with nanoseconds when t has sub-millisecond
// precision, so no precision is lost in a round trip.
func AppendInstant(dst []byte, t time.Time) []byte {
	if t.Nanosecond()%int(time.Millisecond) == 0 {
		return t.AppendFormat(dst, "2006-01-02T15:04:05.000Z07:00")
	}
	return t.AppendFormat(dst, time.RFC3339Nano)
}

// asFieldError turns a json v2 error into a FieldError that keeps the JSON
