// Package pager owns the snapshots that let folio serve a conversation of
// any length in bounded, byte-budgeted pages.
//
// FromLog copies nothing: a snapshot is the log's open file plus a branch's
// document from the log's page index (history.OpenIndex), which says where
// each entry's stored JSON is and which display group it is in. It learns
// the groups from the end backwards as pages ask for them, so the first
// page costs the index frames of that page's entries and one ReadAt per run
// of nearby entries. The first page asked for by an entry ID before those
// finds the entry through the index's ID table (on main's document;
// elsewhere it reads the document's whole index once) and learns the
// groups around that entry's index frame instead of from the end, so a
// page before, after or around the anchor costs its own entries' frames
// wherever the anchor is. A page's bytes are each
// group's framing around its entries' stored bytes, never re-encoded. A
// rewrite of the log replaces the file by rename, so the open file keeps
// the bytes the snapshot points at.
//
// Build, for a log whose entries are not stored as version 3 JSON (version
// 2, or derived from model messages), captures a branch once, in one
// linear pass over its entries: it cuts the entries into display groups,
// writes each group's encoded JSON to an immutable temporary file, and
// keeps only a small index in memory (entry ID hash → group, group → byte
// offset and length). Page reads then read exactly the bytes of the groups
// they return, with one ReadAt, and never scan or parse the file. Graph
// annotations (compaction coverage, spawn and attach links) are resolved
// during the same pass only when the captured entries have any; otherwise
// that work is skipped and pages are identical. Both kinds frame groups
// the same way (frame.go), so their pages agree byte for byte.
//
// The page frame is this package's alone: the page index records where
// each entry is, its size and its turn (a display group is a turn), and
// the bytes a group or a run of groups takes on a page are worked out
// here from those (spanBytes), so a change to the frame changes no file
// on disk.
//
// A Snapshot is reference counted: the last Release closes its files (and
// deletes Build's temporary file) at once. An LRU holds one connection's
// snapshots and releases those it evicts.
//
// Concurrency: a Snapshot is immutable once made and its methods are safe
// for concurrent use (a log-backed one picks a page's groups under a lock
// and reads the log outside it); Page calls racing the final Release get
// ErrReleased. An LRU is safe for concurrent use.
package pager
