// Package history owns folio's conversation log: one JSONL file per
// conversation holding the presentation entries of package transcript and the
// model-facing messages of package message, side by side and never mixed.
//
// A conversation is a tree of branches (Fork, SetHead): reading yields every
// branch's document and messages and the head's as the Conversation's, and
// Save writes to the head. A conversation that never branched is written
// exactly as before branches existed.
//
// It reads and writes log version 3, reads every log Jazz writes (version 3,
// and version 2 with its rendered text), lists and locates logs in folio's
// flat layout and in Jazz's conversations/<agentId>/ one, upgrades version 2
// logs in place, compacts
// superseded presentation snapshots, and takes the per-log lock that keeps a
// second writer out. The format is described in docs/log-format.md.
//
// A Log reads and writes through a Medium, which a Store hands out by
// conversation ID under the conversation's writer lease: Files is the data
// folder (a file, its sidecar lock and receipts file), and package
// store/pgstore keeps the same bytes in PostgreSQL. Open is a Log over one
// file. Import copies a log between stores unchanged, idempotently. A Store
// also keeps each conversation's attachments and artifacts (Blobs: by kind
// and name, with a sha256 digest, size-capped, deleted with the log), which
// CopyBlobs copies between stores.
//
// Beside each log it keeps a listing summary (<id>.jsonl.summary), a cache
// that List trusts only while the log's size, mtime and (on Linux) inode and
// change time are still the ones it records, and that nothing else reads;
// and a page index (<id>.jsonl.index, OpenIndex) saying where each entry of
// every branch's document is stored in the log, its size and which turn
// it is in (in the log's terms: how a page frames entries is the
// server's), which the writer extends as it appends and a reader trusts only
// while it matches the log, rebuilding it otherwise.
//
// Reading never guesses: a record that fails validation is reported with its
// line, record type, entry index and JSON pointer, and everything valid around
// it still applies. Each record is decoded once: the UI records and plain
// message records folio writes are scanned straight into their typed form
// (transcript.Scanner), their strings sharing one copy of the line;
// any other record, and every invalid one, goes to the strict decoder, which
// accepts exactly the same records with the same result and says what is
// wrong with the rest. Writing only appends, except for upgrade and compaction,
// which replace the file atomically.
//
// Concurrency: a *Log is owned by one goroutine at a time; its methods are not
// safe for concurrent use. Between processes, Open's lock admits one writer
// per log. Read and ReadFile take no lock and may run beside a writer: they
// see a prefix of complete records. List may run beside a writer too: a
// summary it catches half rewritten fails its checksum and is ignored.
package history
