// Package plugin hosts out-of-process tools: an executable plus a manifest,
// spoken to in JSON-RPC 2.0 over the process's stdin and stdout, one message
// per line. For each call folio starts the executable, writes one tools/call
// request, applies the presentation/replace and presentation/replaceArtifact
// notifications it prints through the invocation's handles (so every host
// rule applies to them), and takes the response to the request as the result,
// which must come last.
//
// A plugin cannot harm the conversation: oversized or malformed lines,
// updates for other calls, legacy placement, messages after the result and a
// crash are each counted as bounded diagnostics on the invocation and in the
// host's metrics, and never stop the engine. What a plugin prints on stderr is
// counted, not kept, since it may hold secrets.
//
// Concurrency: a Plugin is safe for concurrent use; each call runs its own
// process.
package plugin
