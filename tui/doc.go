// Package tui owns folio's terminal views: the painters that turn
// transcript facts into styled lines, the render cache, the fullscreen
// viewport and the classic (inline) projection. It reads documents and never
// writes facts; every line it shows is derived from a transcript.Document.
//
// # Painters
//
// A Painter paints a Run (consecutive entries shown together) at a width.
// Output is a pure function of the entries, the width, the expanded flags
// and the painter's configuration (Theme, adapter Registry, time zone, and
// whether it paints for the classic view), and every line fits the width.
// One painter per content kind:
//
//   - user: "› " and the text, wrapped; steering input: "↳ " in italics.
//   - agent: markdown through Glamour, one block at a time (blocks as cut
//     by StableEnd), joined by one blank line. Rendering block by block is
//     what lets a streaming answer and its settled form paint identically.
//     Code is highlighted by Glamour. Math is shown as readable TeX source
//     in code style, without delimiters and with common commands as
//     symbols: \(d_t\) reads d_t, \(a \le b\) reads a ≤ b (see math.go).
//   - reasoning: reasoning entries that follow one another (model steps
//     with nothing shown between them) fold into one summary line ("▸
//     Thought for 3.5s · 2 steps"); each entry keeps its ID and its place,
//     and expanding one shows that step's text under the summary.
//   - tool: a receipt line (status glyph, tool, summary, duration). Short
//     receipts of consecutive tools are packed several to a row when they
//     fit the width. A retained presentation is drawn by the Adapter
//     registered for its schema and version (built in: SchemaShell and
//     SchemaDiff); without one, a bounded line of host metadata (schema,
//     version, revision, sizes) is shown. Payload JSON is never printed.
//     Expanding shows arguments, detail, output and diff.
//   - notice (glyph and color by tone; audience "classic" only in the
//     classic view), report (fields aligned, items, meters as bars, text,
//     groups indented, gaps), failure (headline; detail, reason and retry
//     on expand), turn receipt (receipt.Line; per-step lines on expand),
//     stopped summary, header, compaction (summary on expand), expanded.
//
// Theme picks a dark or light palette and the terminal's color profile:
// painters style in full color and lines are downsampled once, before they
// are cached, so NO_COLOR keeps attributes without colors and TERM=dumb
// gets plain text.
//
// # Render cache
//
// Cache keys a painted run by its entries' fingerprints, the width, the
// expanded flags and the painter's theme and view. Settled facts never
// change, so a key names its lines forever. Lines live in an LRU bounded by
// line count; heights are kept separately. An open answer is painted from
// a per-ID stream state: the lines of its stable prefix grow as blocks
// complete, and only the unstable tail is rendered per frame. On
// settlement that state becomes the cached lines of the settled fact.
//
// # Viewport
//
// Viewport is the fullscreen transcript pane, a Bubble Tea component. Its
// position is an anchor: the ID of the first entry of the run at the top of
// the window and a line offset into that run. Appends, settlement and
// resizes keep the anchor, so the text being read does not move; resizing
// reflows from the source at the new width. While following, the window is
// computed from the bottom. The generation given with each document is
// part of the viewport's identity: a new one starts at the live edge with a
// fresh unseen baseline, nothing expanded and no stream state. Scrolled
// away from the live edge, appended entries raise an unseen count shown as
// "N new ↓"; End jumps back. PgUp/PgDn, Home/End, arrows and the mouse
// wheel scroll; ctrl+o expands the last expandable entry in view.
//
// A frame resolves the anchor with Document.Index (constant time), then
// walks runs outward from it only as far as the window reaches, painting or
// measuring just those runs. Nothing sums the heights of the whole
// document, so frame cost does not grow with the conversation.
//
// # Classic
//
// Classic is the inline view's projection. It keeps cursors, not text: the
// first entry not yet printed and how many bytes of a streaming answer's
// markdown are printed. Each Sync returns lines to print into scrollback
// (each exactly once) and the live region to redraw; Inline writes frames
// to a terminal, redrawing from the first changed live line. Unmounted,
// Classic does no work.
//
// # Tests
//
// The terminal oracle (oracle_test.go) feeds painted frames, the classic
// writer's bytes, or a real Bubble Tea program's output into the
// github.com/charmbracelet/x/vt emulator at a fixed size and compares the
// grid, text plus a color class and boldness per cell, with
// testdata/*.golden; go test ./tui -update rewrites them.
//
// # Concurrency
//
// Painter and Registry are safe for concurrent use. Cache, Viewport,
// Classic and Inline belong to one goroutine, the Bubble Tea update loop
// of the view that owns them.
package tui
