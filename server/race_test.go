//go:build race

package server

// raceEnabled shrinks the largest fixtures under the race detector, which
// slows JSON work about forty times; the full sizes run without it.
const raceEnabled = true
