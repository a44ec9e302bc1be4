// Package transcript holds the facts of a conversation: entries, their sealed
// content union, the immutable source document, ID minting, and the store that
// publishes snapshots of the document together with its live state.
//
// The package does no I/O and knows nothing of terminals or HTML. Every view of
// a conversation (fullscreen, classic, web) and the history log read the same
// facts from here.
//
// # Encoding
//
// DecodeEntry reads an entry strictly: unknown members, repeated names and
// invalid values are errors that name their JSON pointer. Scanner reads the
// entries of a stored record in one pass, without reflection, for the shapes
// folio writes; it gives up on anything else, and whatever it accepts
// DecodeEntry accepts with the same facts (a differential fuzz test holds it
// to that). NewCheckedDocument builds a document from entries a reader has
// already checked, without checking them again.
//
// # Documents
//
// A Document is an immutable, ordered list of entries. Entries after the
// first open one form a short tail; everything before it is a settled prefix
// kept in storage shared by the whole lineage of documents, so appending or
// settling costs the same at ten entries as at a hundred thousand, and an
// older document never sees what a newer one appended. Changing an earlier
// fact (Document.Replace) copies the prefix once and leaves the old document
// as it was; fingerprints and render caches rely on settled facts never
// changing in place.
//
// # Store, snapshots and generations
//
// The Store is the only writer. Every write through a lease is a transaction
// (Lease.Do) on a private copy of the state, and installing a new document
// is one too; when it succeeds the store publishes one
// Snapshot holding the document, the generation and the Live state together,
// so no reader ever sees a document from one write with live state from
// another. Publishing allocates one small value and copies no entries.
// Subscribers receive snapshots through a one-slot channel that always holds
// the newest: a burst of writes reaches a slow reader as one snapshot, and
// the last state is never dropped.
//
// The generation is the lifetime of a mounted view, separate from the
// document's ID. Store.Replace, Store.Clear and Store.Hydrate start a new
// generation even when they install the same document and IDs again;
// appends, updates, settlement and live-state changes keep it. A new
// generation starts its live state over (activity, prompt context, retry,
// expanded detail, reveal cursors, child regions) and keeps the model;
// Clear and Hydrate also zero the session totals, and Hydrate settles
// entries that were open when saved, because a resumed conversation is
// settled history.
//
// # Leases
//
// Producers never write to the store directly. Each takes a Lease, bound to
// the generation current when it was taken: a stream writer, a tool run, the
// turn loop closing a turn, a timer (Lease.AfterFunc). Starting a new
// generation is one transaction that retires every lease at once: their
// pending timers are stopped, a timer callback already on its way checks the
// lease and does nothing, and every later write through an old lease returns
// ErrLeaseRetired without touching anything. The check happens under the
// store's lock in the same transaction as the write, so there is no window in
// which late work from one conversation can land in the next, even when the
// next reuses the same entry IDs.
//
// # Streaming and pacing
//
// A StreamWriter turns provider deltas into entries. A step's answer is
// opened with its first accepted text and keeps that ID until it settles in
// place; reasoning gets one entry per model step. Accepted text goes into
// the document immediately: a save mid-stream includes it. Each open entry
// keeps an append-only byte buffer and the entry's text is a string over its
// prefix (see streamBuf for why that is safe), so a delta costs an amortized
// O(1) append plus a document update that copies only the open tail.
//
// How much of that text a reader sees is a separate, live-only matter. A
// pacer holds a cursor and timing state and reads the source text in place on
// each tick; it reveals at least Pacing.MinRate bytes a second and speeds up
// so a backlog never lags much more than Pacing.CatchUp. Its cursor is
// published in Live (Live.Revealed, Live.Visible); it never moves backward,
// never splits a UTF-8 sequence, and goes idle when caught up. Ticks run on
// lease timers, so a reveal queued for a replaced document never runs.
// Settlement reveals the rest.
//
// # Children
//
// A sub-agent writes through a ChildWriter, which owns one region of the live
// state: its own feed document, activity, model and prompt context. It has no
// handle on the main document or the main footer, so nothing a child does
// (start, flush, reset, complete) can settle the main answer or change the
// main activity, model, prompt context, retry state or expanded detail. Its
// usage is added to the session totals as well as to its own region.
//
// # IDs
//
// The store mints IDs from an IDSource: a random per-instance prefix and a
// counter. Hydrated entries keep their IDs. Every ID the store did not mint
// (a hydrated or replaced document, an entry appended with its own ID) moves
// the counter past it when it is in the same namespace, so a minted ID never
// repeats a saved one and minting needs no lookup in the document.
//
// # Concurrency
//
// Entry, Content, Document and Snapshot values are immutable once built and
// safe to share between goroutines. The Store, Lease, StreamWriter and
// ChildWriter methods are safe for concurrent use; the function given to
// Lease.Do runs under the store's lock and must not call back into them. A
// pacer is not safe for concurrent use; its writer serializes it.
package transcript
