// Package pgstore keeps folio's conversation logs in PostgreSQL, as a
// history.Store: the same records the data folder holds, byte for byte, one
// row per record in per-conversation order, so history's one reader and
// writer apply every rule of the log format on either back end.
//
// Open connects, and brings the schema up to date with versioned
// migrations run under an advisory lock, so several replicas may start at
// once. A conversation's writer lease is a session advisory lock held on a
// connection of its own, and every write of that writer goes through that
// same connection: a writer whose connection died (its process was killed,
// or the server ended the session) can write nothing more, and its lease
// is free for the next writer. Each append is one transaction that also
// NOTIFYs AppendsChannel with the conversation and its new sequence
// number; Follow reads what came after a sequence a reader last saw, and a
// Mirror keeps a replica's local copies of the logs current with both.
// Attachments and artifacts are bytea rows by conversation and digest
// (blob.go), written through the pool without the lease, so a replica that
// does not own a conversation stores what it received.
//
// Concurrency: a *Store is safe for concurrent use; a Medium it hands out
// is used by one goroutine at a time, as history.Log requires.
package pgstore
