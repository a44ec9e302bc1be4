// Package mcp connects folio to Model Context Protocol servers and serves
// folio's history as one.
//
// The client half reads the mcpServers section of config.json (Config),
// keeps one Manager per session that starts each server on first use,
// keeps it running, restarts it with backoff after a crash and stops it,
// with its whole process group, on Close. Each server tool becomes a
// tools.Tool named server__tool whose calls go through the presentation
// host: progress notifications replace the call's folio.mcp.progress value,
// and the final result's content blocks become its retained checkpoint
// (text inline or, past the result bound, in an artifact; images as
// artifacts; resource links as references). Protocol work is done by the
// official Go SDK; this package only maps it onto folio.
//
// The server half (Serve) exposes read-only history tools over stdio.
//
// Concurrency: a Manager and its tools are safe for concurrent use; calls to
// one server share its session, and a crash fails every call in flight on
// it. Config values are immutable after Parse.
package mcp
