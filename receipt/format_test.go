package receipt

import (
	"math"
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ms   float64
		want string
	}{
		{"zero", 0, "0.0s"},
		{"rounds down below half a tenth", 49, "0.0s"},
		{"rounds up at half a tenth", 50, "0.1s"},
		{"issue example 840 ms", 840, "0.8s"},
		{"seconds", 1200, "1.2s"},
		{"issue example 59940 ms", 59940, "59.9s"},
		{"just under the switch", 59949, "59.9s"},
		{"rounds to 60.0 so becomes a minute", 59950, "1m 00s"},
		{"issue example 59960 ms", 59960, "1m 00s"},
		{"exactly a minute", 60000, "1m 00s"},
		{"seconds are zero padded", 61499, "1m 01s"},
		{"seconds round half up", 61500, "1m 02s"},
		{"issue example 125000 ms", 125000, "2m 05s"},
		{"rounding carries into minutes", 119600, "2m 00s"},
		{"minutes do not roll into hours", 7_200_000, "120m 00s"},
		{"negative is not a duration", -1, "?s"},
		{"NaN is not a duration", math.NaN(), "?s"},
		{"infinity is not a duration", math.Inf(1), "?s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Duration(tc.ms); got != tc.want {
				t.Errorf("Duration(%v) = %q, want %q", tc.ms, got, tc.want)
			}
		})
	}
}

func TestCount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0"},
		{315, "315"},
		{999, "999"},
		{1000, "1k"},
		{1049, "1k"},
		{1500, "1.5k"},
		{9949, "9.9k"},
		{9950, "10k"}, // not "10.0k"
		{9960, "10k"},
		{17_312, "17k"},
		{48_000, "48k"},
		{999_499, "999k"},
		{999_500, "1M"}, // not "1000k"
		{1_000_000, "1M"},
		{1_250_000, "1.3M"},
		{12_400_000, "12M"},
		{2_000_000_000, "2B"},
		{3_400_000_000_000, "3.4T"},
		{math.MaxInt64, "9223372T"},
		{-5, "-5"},
		{-1500, "-1.5k"},
		{math.MinInt64, "-9223372T"},
	}
	for _, tc := range tests {
		if got := Count(tc.n); got != tc.want {
			t.Errorf("Count(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestCost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		usd  float64
		want string
	}{
		{0, "$0.00"},
		{0.00001, "<$0.0001"},
		{0.000099, "<$0.0001"},
		{0.0001, "$0.0001"},
		{0.0042, "$0.0042"},
		{0.0099, "$0.0099"},
		{0.009996, "$0.01"}, // not "$0.0100"
		{0.01, "$0.01"},
		{0.0123, "$0.01"},
		{1.266, "$1.27"},
		{1.27, "$1.27"},
		{1234.5, "$1234.50"},
		{-0.5, "$?"},
		{math.NaN(), "$?"},
		{math.Inf(1), "$?"},
	}
	for _, tc := range tests {
		if got := Cost(tc.usd); got != tc.want {
			t.Errorf("Cost(%v) = %q, want %q", tc.usd, got, tc.want)
		}
	}
}

func TestClock(t *testing.T) {
	t.Parallel()
	at := func(h, m int) int64 {
		return time.Date(2026, 11, 30, h, m, 41, 0, time.UTC).UnixMilli()
	}
	tests := []struct {
		name string
		ms   int64
		loc  *time.Location
		want string
	}{
		{"morning, hour zero padded", at(7, 28), time.UTC, "07:28 am"},
		{"noon is pm", at(12, 5), time.UTC, "12:05 pm"},
		{"midnight is 12 am", at(0, 5), time.UTC, "12:05 am"},
		{"evening", at(23, 59), time.UTC, "11:59 pm"},
		{"the zone decides the hour", at(7, 28), time.FixedZone("IST", 5*3600+1800), "12:58 pm"},
		{"the zone can change the day", at(2, 0), time.FixedZone("PST", -8*3600), "06:00 pm"},
	}
	for _, tc := range tests {
		if got := clockText(tc.ms, tc.loc); got != tc.want {
			t.Errorf("%s: Clock = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestClockNilLocationIsLocal(t *testing.T) {
	t.Parallel()
	ms := time.Date(2026, 11, 30, 7, 28, 0, 0, time.UTC).UnixMilli()
	if got, want := clockText(ms, nil), clockText(ms, time.Local); got != want {
		t.Errorf("clockText(nil) = %q, clockText(time.Local) = %q", got, want)
	}
}
