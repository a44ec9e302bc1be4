package toolview

// Options only the tests set: a fake time source, and bounds small enough to
// reach in a test.

func withClock(c clock) Option           { return func(h *Host) { h.clock = c } }
func withRangeLimit(n int64) Option      { return func(h *Host) { h.rangeLimit = n } }
func withGeneration(g Generation) Option { return func(h *Host) { h.gen = g } }
func withKeepClosed(n int) Option        { return func(h *Host) { h.keepClosed = n } }
