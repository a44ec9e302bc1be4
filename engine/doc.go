// Package engine is folio's turn loop. It turns user input, provider streams
// and tool calls into facts in a transcript.Store and model-facing messages
// in the history log, and it is what the terminal UI and the server drive.
//
// A turn is: the user entry, then model steps until the model finishes. Each
// step streams its reasoning and answer into entries of their own (one per
// response, keeping its ID from the first token through settlement), opens
// one tool entry per tool call as soon as the model starts it (argument
// fragments go to the invocation's draft and nowhere else), runs the calls
// with their complete, validated arguments through the toolview host, feeds
// the results back, and finally appends a turn receipt with the measured
// time and the provider's usage for each step.
//
// Around that loop the engine owns approvals (shell, write_file and
// edit_file wait for a decision unless allowed), the queue of commands with
// client command IDs (delivery is idempotent), steering (a running text or
// reasoning response is interrupted and the instruction applied before the
// next request; tool-argument streams and running tools reach their safe
// point first), stop, failures (the partial reply stays, one failure entry
// is saved before the failure is announced), bounded retries with the
// classified backoff, the loop guard, compaction near the context window,
// resume and child agents for the task tool.
//
// Concurrency: an Engine runs turns one at a time on a goroutine of its own,
// started by New and ended by Close. Its exported methods are safe for
// concurrent use from any goroutine; they never block on a running turn,
// except Wait, which is meant to. Everything a view shows reaches it through
// the store's snapshots, including the engine's command queue, pending
// steers and approvals (transcript.Live.Queue, Steers and Approvals), which
// it publishes whenever they change, together with the running turn
// (transcript.Live.Turn). Changed signals when they move.
package engine
