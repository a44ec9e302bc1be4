package history

// event names a step of the log's and the index's upkeep whose count tells
// one path from another (an extension from a rebuild, a light resume from
// a full one) where the result alone would be the same.
type event uint8

const (
	evRebuild     event = iota // a full-pass rebuild of a page index
	evCompaction               // a writer rewrote its index to drop superseded commits
	evLightResume              // a writer's index goroutine resumed without reading every ID back (resumeLight)
	evFullResume               // ... and then met a record only a full resume can judge
	evLightExtend              // a reader extended an index from a resumeLight Scanner
	evIndexTail                // a tail read the page index answered
	evWholeRead                // a writer read a whole log
	evSpilled                  // a rebuild wrote the index as it went, not held in memory
)

// observe is told of each event. It is nil in a program; the package's
// tests set it (export_test.go) before anything runs, to count events, so
// production code carries no counters.
var observe func(event)

func observed(e event) {
	if observe != nil {
		observe(e)
	}
}
