// Package transcript holds the facts of a conversation: entries, their sealed
// content union, the immutable source document, ID minting, and the store that
// publishes snapshots of the document together with its live state.
//
// The package does no I/O and knows nothing of terminals or HTML. Every view of
// a conversation (fullscreen, classic, web) and the history log read the same
// facts from here.
//
// Concurrency: Entry, Content and Document values are immutable once built and
// safe to share between goroutines. The Store is the single writer; its methods
// are safe for concurrent use and it hands out snapshots that never change.
package transcript
