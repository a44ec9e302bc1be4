// Package provider is folio's boundary to language models. It owns the one
// interface every model client implements (Provider and its pull-based
// Stream of Events), the classified error every client returns (*Error with a
// Class), the retry policy (Backoff, a pure function), model context windows,
// the idle watchdog for HTTP streams, and configuration: flags, environment
// and the data folder's config.json resolved by Load into a Config and a
// constructed Provider.
//
// Clients live in subpackages: openai (any OpenAI-compatible Chat
// Completions server), anthropic (the Messages API) and demo (offline and
// deterministic, the default). Subpackages register their constructor with
// Register in init; import provider/builtin to link all three.
//
// Concurrency: a Provider is safe for concurrent use; each call to Stream
// starts an independent request. A Stream belongs to one goroutine: call Next
// and Close from the goroutine that consumes it. To abandon a Stream that is
// blocked in Next, cancel the context given to Stream; Next then returns an
// *Error of class cancelled. The package-level registry is written only from
// init functions and read afterwards.
package provider
