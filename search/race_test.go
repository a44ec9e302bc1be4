//go:build race

package search

// raceEnabled: the race detector slows the translated SQLite many times
// over, so the crash test uses a smaller corpus under it.
const raceEnabled = true
