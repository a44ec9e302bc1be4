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
//     by stableEnd), joined by one blank line. Rendering block by block is
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
//     registered for its schema and version (built in: the values of
//     packages toolschema and mcpschema); without one, a bounded line of
//     host metadata (schema, version, revision, sizes) is shown. Payload JSON is never printed.
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
// their bytes (2 MiB); heights are kept separately, bounded in count. An
// open answer is painted from a per-ID stream state: the lines of its
// stable prefix grow as blocks complete, and only the unstable tail is
// rendered per frame. On settlement that state becomes the cached lines of
// the settled fact.
//
// # The fullscreen view
//
// The viewport (viewport.go) is the fullscreen transcript pane, a Bubble Tea component. Its
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
// # The chat program
//
// App is what `folio` and `folio chat` run (Chat starts it): the
// transcript, then the chrome under it — running child agents, each in a
// region of its own; drafts that are not in the transcript yet (queued,
// a steer waiting for the next step, a draft a stop refused, an uncertain
// delivery); a rule; the inline approval prompt or the editor; the footer;
// and a standing notice such as the demo model's hint.
//
// Data flows one way. The engine writes the store; App subscribes to its
// coalesced snapshots and hands the document and its Generation to the
// viewport (fullscreen) or to Classic.Sync (classic). Everything else it
// shows comes from the same snapshot's Live: the footer's facts, the queue
// and pending steers (Live.Queue, Live.Steers), the approvals
// (Live.Approvals). What the person types goes to the engine through an
// engine.Outbox, which gives every draft its command ID once, so no retry
// or double key press makes a second turn; the outbox mirrors what only it
// knows (sending, uncertain, drafts that came back) into the store
// (Outbox.Mirror), so those rows come from the snapshot too. A draft that
// came back is taken back with ctrl+r (sent again under a new command ID)
// or ctrl+x (dropped), and App then calls Engine.Dismiss so the old ID
// leaves the live state. App never writes an entry and keeps no transcript
// of its own.
//
// Pacing: the chat's store paces streamed text. An open entry in the
// document holds every byte accepted so far; the views paint only the
// prefix the pacer revealed (Live.Revealed), because App hands them the
// document with each such entry cut to that prefix (visibleDocument; only
// the open tail is looked at). The cut only grows, so classic promotion
// stays valid, and settlement shows the whole text under the same ID.
// `folio run` prints as text arrives and does not pace.
//
// The footer shows the main agent only: activity (thinking, streaming,
// running a tool, awaiting approval, retrying in Ns), model, prompt
// context, and the session totals, which include child agents' usage.
//
// Keys: enter sends (queued behind a running turn); shift+enter, alt+enter
// or ctrl+j add a line; tab or ctrl+s steers the running turn; esc stops
// it; up and down recall earlier prompts (Options.History) while the
// cursor is on the editor's first or last line; a waiting tool call is
// answered only after ctrl+g moves the keyboard to its prompt (y once, a
// then a or enter for the session, n deny; typing otherwise stays a draft,
// see approval.go); ctrl+r sends a draft a stop refused,
// ctrl+x drops it; ctrl+y copies the latest answer's markdown source with
// OSC 52 (in the classic view written straight to the terminal), so no
// wrapping of ours reaches the clipboard; pgup/pgdn, shift+arrows and
// ctrl+home/end scroll, and the wheel too with Options.Mouse; ctrl+o
// expands; ctrl+c clears the editor, then quits.
//
// Typing "/" shows the menu of slash commands under the editor (commands.go);
// up/down choose, tab completes, enter runs. /help and /model open an
// overlay, and /resume the picker: in the fullscreen view they take the
// transcript's place, in the classic view the live region's, so they are
// seen and leave nothing in scrollback. While the conversation is empty
// the first screen (Options.Welcome) names the model, the folder and the
// data folder, with three tips; the classic view prints it into scrollback
// once.
//
// The mouse is left to the terminal unless Options.Mouse is set, so text
// can be selected as anywhere else.
//
// The fullscreen view is a Bubble Tea program on the alternate screen. In
// the classic view Bubble Tea only reads keys: App writes its frames itself
// through Inline, from the update loop, so lines printed into scrollback and
// redraws of the live region leave in one ordered stream, and a resize
// (SIGWINCH) redraws the live region at the new width while scrollback
// keeps what was printed once.
//
// Redraws erase the live region without an erase-below from the first
// column (see eraseDown): tmux copies the whole screen into its scrollback
// when the screen is erased from its top-left corner, so a live region that
// starts on the top row (a fresh pane, or one the region fills after a
// resize) used to leave a copy of the old editor and footer in tmux's
// scrollback at every redraw. TestChatClassicInTmux (internal/cli) checks
// the scrollback after width changes.
//
// Known gap: a live region taller than the screen can hold after the
// terminal narrows. A rewrapping terminal (tmux, kitty) reflows the old
// rows when the width shrinks; if the live region's rows at the new width
// (Inline.rows) exceed the screen height, the terminal pushes the top ones
// into its scrollback, where no cursor motion reaches, and they stay there
// as stale lines above the redrawn region. The live region is bounded by
// the screen height, so it happens when the region was already nearly a
// screen tall: in practice while a reasoning step is still open, because
// Classic.Sync prints nothing after an open run and the whole answer of
// that step waits in the live region. Keeping the whole live region under
// half the screen would make any narrowing to at least half the width
// safe, at the cost of showing less of a held answer; letting Classic
// print an open reasoning run once the answer after it has started would
// remove the common case.
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
// Painter and Registry are safe for concurrent use. The render cache, the
// viewport, Classic, Inline and App belong to one goroutine, the Bubble Tea update
// loop of the view that owns them; App's subscriptions deliver to that loop
// as messages.
package tui
