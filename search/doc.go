// Package search finds words across every conversation of a data folder
// and says where each hit is: which conversation, which entry, a snippet
// with the matched words marked.
//
// The index is derived data. Index keeps it beside the logs in
// <data>/search/index.db, an SQLite database with an FTS5 table (through the
// pure-Go driver modernc.org/sqlite, so no cgo); PGIndex keeps it in the
// PostgreSQL store that holds the logs (hashes of the words under a GIN
// index). Both
// are a Searcher, fill the same rows the same way and answer the same
// queries. The index holds, for each
// conversation, the text a person sees of its head branch: prompts,
// answers, reasoning, tool calls with their retained presentations' text,
// notices, failures, compaction summaries and the title. It is filled only
// from what package history's Scanner reads out of a log, so drafts and
// ephemeral presentation values, which the log never holds, never reach
// it. For every conversation it records how far it has read (the log's
// inode and size, and its head), so catching up reads only what was
// appended; a log that was rewritten (compaction, upgrade) or that shrank
// is read again from its start, and a record that replaced the head's
// document (a superseding snapshot, a branch switch) replaces that
// conversation's rows. Only the head branch is searchable: entries of the
// branches a conversation left are not returned until it switches back.
//
// A process that writes logs opens them with Follow's option, so after
// every save a goroutine of the data folder's follower updates the index
// from where it stopped, without the save waiting for it (see follow.go).
//
// The index is never trusted over the logs: a missing, damaged or older
// index is deleted and rebuilt, and `folio log reindex` rebuilds it on
// demand. Each conversation's rows and its position change in one SQLite
// transaction, so a process killed while indexing leaves the index as it
// was before that conversation or after it, never between.
//
// Queries are parsed here (ParseQuery) into FTS5's syntax; user text never
// reaches FTS5's MATCH unquoted. See docs/search.md for the language.
//
// Concurrency: an *Index is safe for concurrent use by many goroutines.
// Searches run in parallel; catching up is serialized within a process by a
// mutex and across processes by SQLite's write lock (each conversation is
// one immediate transaction), so several processes (folio serve, a
// terminal, folio log search) may share one index.
package search
