// Package plugin hosts out-of-process tools: an executable plus a manifest,
// spoken to in JSON-RPC 2.0 over the process's stdin and stdout, one message
// per line. For each call folio writes one tools/call request, applies the
// presentation/replace and presentation/replaceArtifact notifications the
// plugin prints for it through the invocation's handles (so every host rule
// applies to them), and takes the response to the request as the result,
// which must come last. A plugin written for the older placement protocol
// may publish presentation/contribute notifications instead, each carrying
// a legacy placement envelope that is projected onto the call's current
// items as toolview.ProjectLegacy projects a history's. By default each call starts the executable anew; a
// manifest with "persistent": true gets one process that serves every call
// (matched by request ID), is restarted after a crash with the calls in
// flight failing, is told of cancellations with tools/cancel, and is
// stopped with its process group by Close.
//
// A plugin cannot harm the conversation: oversized or malformed lines,
// updates for other calls, a placement member on a replace, messages after
// the result and a crash are each counted as bounded diagnostics on the invocation and in the
// host's metrics, and never stop the engine. What a plugin prints on stderr is
// counted, not kept, since it may hold secrets.
//
// Concurrency: a Plugin is safe for concurrent use. A per-call plugin runs
// each call in its own process; a persistent one multiplexes concurrent
// calls on its process, one reader goroutine routing its output.
package plugin
