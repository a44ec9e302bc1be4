// Package pager owns the disk-backed snapshots that let folio serve a
// conversation of any length in bounded, byte-budgeted pages.
//
// Build captures a branch once, in one linear pass over its entries: it cuts
// the entries into display groups, writes each group's already-encoded JSON
// to an immutable temporary file, and keeps only a small index in memory
// (entry ID hash → group, group → byte offset and length). Page reads then
// read exactly the bytes of the groups they return, with one ReadAt, and never
// scan or parse the file. Graph annotations (compaction coverage, spawn and
// attach links) are resolved during the same pass only when the captured
// entries have any; otherwise that work is skipped and pages are identical.
//
// A Snapshot is reference counted: the last Release closes and deletes its
// file at once. An LRU holds one connection's snapshots and releases those it
// evicts.
//
// Concurrency: a Snapshot is immutable after Build and its methods are safe
// for concurrent use; Page calls racing the final Release get ErrReleased.
// An LRU is safe for concurrent use.
package pager
