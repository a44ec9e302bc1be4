// Package receipt turns the statistics a turn recorded (transcript.TurnReceipt
// and its steps) into the short lines folio shows when a turn closes: total
// duration, step count, token usage, decode throughput, cost and the moment the
// turn finished. It also sums steps into Totals, which add up across turns
// into session totals (the store keeps its own running usage in
// transcript.Live).
//
// The package only formats facts; it never measures time or guesses values a
// provider did not report. In particular throughput is shown only when every
// step that produced output carries its own generation timing, and it is never
// derived from wall-clock turn time.
//
// Concurrency: every function is pure and safe to call from any goroutine.
// Totals is a plain value.
//
// Formatting decisions the issue left open, and why:
//
//   - Count keeps one decimal below ten of a unit and whole units from ten up
//     (1500 → "1.5k", 17_312 → "17k", 1_250_000 → "1.3M", 12_400_000 → "12M"),
//     rounding half away from zero. A value that rounds up to the next size is
//     shown in that size (9_960 → "10k", 999_500 → "1M"), so "10.0k" and
//     "1000k" never appear. Units are k, M, B and T.
//   - Duration rounds to tenths first and switches to minutes when that reaches
//     60.0 s, so 59.96 s reads "1m 00s" and never "60.0s". Minutes do not roll
//     into hours: 2 h reads "120m 00s".
//   - Cost uses four decimals below one cent, but a value that would read
//     "$0.0100" is shown as "$0.01".
//   - A step "bears output" when it reported completion tokens above zero. A
//     step whose completion count is unknown makes throughput unknowable, so
//     it omits tok/s too. A generation time or rate of zero counts as missing.
//   - The cached share is cacheReadTokens ÷ promptTokens, rounded, and never
//     reads 100% unless every prompt token was a cache read. The engine is
//     expected to report promptTokens including cache reads; a larger cache
//     count is capped at 100%.
//   - Token usage reads "{in} in → {out} out" when steps reported prompt or
//     completion counts (a missing side counts as zero). If any step reported
//     only a total, the line falls back to "{n} tok" over all steps, because a
//     split built from some of the steps would undercount.
//   - Values the transcript codec rejects (negative, NaN, infinite) cannot
//     reach a stored receipt; if a caller passes them anyway, durations and
//     costs render as "?s" and "$?" instead of a plausible-looking number.
package receipt
