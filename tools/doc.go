// Package tools holds folio's built-in tools: shell, read_file, write_file,
// edit_file, list_files and task. Each tool receives only complete, validated
// arguments (argument drafts stay with the presentation host) and publishes
// what it shows through the invocation handle package toolview gives it: the
// shell a bounded, artifact-backed terminal checkpoint, the file writers a
// diff, the task tool a link to its child region. The readers publish
// nothing; their receipt says what they read. The payload shapes are the
// ones package tui's built-in adapters decode (see the Schema constants).
//
// The package knows nothing of the turn loop. The engine asks a Set for the
// specs it offers the model, for whether a tool needs approval, and runs a
// tool with toolview.Host.Run. The task tool reaches the engine only through
// the Spawner interface the engine implements.
//
// Concurrency: a Tool and a Set are immutable after construction and safe for
// concurrent use; each call of Run is independent.
package tools
