// Package server is folio's web server: the HTTP resources and the WebSocket
// protocol (version 4, see docs/protocol.md) through which the web app reads
// and changes conversations.
//
// It owns, per connection, an LRU of snapshots (package server/pager) that
// serve byte-budgeted pages of any conversation without loading it, each
// the log's open file plus its page index as of a length (capture.go); per
// open conversation, one conversation value (conversation.go) fed by one
// producer at a time: a follower that reads only the bytes other processes
// append to its log, or the server's own engine while it holds the log.
// Commands go to an Engine, which is their only authority: it makes them
// idempotent and keeps their receipts; the server keeps none. With
// Options.Turns the server runs real turns itself: one engine.Engine per
// conversation, part of it, opened on its first command, holding the log's
// writer lock while open, and publishing what its store writes as live
// events (docs/architecture.md, "The server", names each part). The queue, the running
// turn and the approvals are read from that store's live state, as the
// terminal reads them. Conversations with branches are captured and
// followed at their selected head; edit and select-branch switch it
// through the engine.
//
// Concurrency: a Server is safe for concurrent use. Each WebSocket
// connection has one reading goroutine and one writing goroutine; snapshot
// captures run on their own goroutines, one at a time per conversation.
// Each conversation is guarded by its one mutex, so conversations never
// wait on each other; the engine's saves never run under it. Publish may
// be called from any goroutine. Each open engine has one publishing
// goroutine and one goroutine that owns its log; its turns run on the
// engine's own goroutines.
package server
