// Package export writes a conversation log read by package history in
// formats other programs open (Write): a version 3 log that Jazz reads
// ("jazz"), a Markdown transcript for sharing ("markdown"), and one
// self-contained HTML file that shows the conversation as the web app does,
// offline (HTMLWriter, "html").
//
// Exporting never changes the log it reads. Everything folio keeps that
// Jazz's strict schema has no place for (folio's own content kinds, a tool
// entry's invocation and presentation, a step's time to first token) is
// mapped to the nearest kind Jazz knows — a notice, or the fields of a
// tool receipt — and reported in the returned Mapped list, never dropped
// without a word.
//
// Write is safe for concurrent use; calls share no state but the HTML
// bundle, read once from the embedded web/dist and never changed.
package export
