// Package toolview is folio's tool-presentation host. It owns what a running
// tool may show: one stable primary item per invocation and any explicitly
// keyed supplemental items, each holding a single bounded current value that
// the tool replaces through a handle the host gives it.
//
// The host, not the tool, decides everything around that value: it binds the
// invocation and producer, checks the schema and version against the adapters
// the producer's manifest declares, enforces the encoded payload bound and the
// per-item cadence, assigns monotonic revisions, applies the retention policy
// (retained or ephemeral) and closes each invocation at one ordering boundary,
// after which every update is rejected. Closure yields a Record: outcome, fixed
// timing, the model-facing result and the retained checkpoint, which the engine
// writes to the transcript as a tool entry. Generic code here never looks
// inside a payload.
//
// The host does not depend on the transcript store. It reports item changes to
// subscribers and hands out Records at closure. The engine bridges changes
// into the invocation's open tool entry in the store and settles it with the
// Record, so every view, and every client that connects or reconnects, reads
// an invocation's current items from the document (the server's checkpoint
// carries open entries whole); the host keeps no second reconnect path.
//
// Concurrency: a Host and the handles it gives out are safe for concurrent
// use. Each invocation has its own lock, so invocations never wait on each
// other. Changes of one invocation reach subscribers in the order they
// happened, one at a time, and never while the host holds a lock, so a
// subscriber may call back into the host. Values handed to subscribers and
// in Records are immutable and may be shared.
package toolview
