package engine

import (
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// keepEntries is how many entries at the end of the document the store
// keeps after a trim (WithDocumentWindow): the store holds between
// keepEntries and twice that many, however long the session runs. Every
// entry the engine reads back is among them: the last user entry (a
// retry's), an answer being settled, the last failure. Views page
// anything earlier from the log.
const keepEntries = 256

// WithDocumentWindow bounds the document the engine keeps in its store in a
// long session: once it holds 2n entries, the settled ones before its last
// n (and before a turn's start, where one lies among them) are dropped
// from the store as soon as a save has put them in the log. The document's
// Elided counts them; the log holds them, and a view reads them through
// history's page index. n < 0 keeps every entry; 0 is the default, 256.
//
// Without a saver nothing is dropped: the store is then the only place the
// entries are.
func WithDocumentWindow(n int) Option { return func(e *Engine) { e.keep = n } }

// keepWindow is the engine's window in entries, or 0 when it keeps every
// entry.
func (e *Engine) keepWindow() int {
	switch {
	case e.keep < 0:
		return 0
	case e.keep == 0:
		return keepEntries
	}
	return e.keep
}

// trimSaved drops from the store the entries that saved, a document the
// saver just wrote, holds settled, when the store's document has grown to
// twice the window. The cut keeps the last window entries at least and
// falls on a user entry when one is there to fall on, so the store keeps
// whole turns and the turn that runs keeps its start.
func (e *Engine) trimSaved(reg *region, saved transcript.Document) {
	keep := e.keepWindow()
	if keep == 0 {
		return
	}
	_ = reg.lease.Do(func(tx *transcript.Tx) error {
		d := tx.Document()
		if d.Len() < 2*keep || d.ID() != saved.ID() {
			return nil
		}
		// Entries up to onDisk (counted over the whole conversation) are
		// settled in the log; the store may have grown past the saved
		// document since.
		onDisk := saved.Elided() + saved.Settled() - d.Elided()
		most := min(d.Len()-keep, d.Settled(), onDisk)
		cut := most
		for i := most; i > 0; i-- {
			if d.At(i).Content.Kind() == transcript.KindUser {
				cut = i
				break
			}
		}
		if cut <= 0 {
			return nil
		}
		return tx.Trim(cut)
	})
}

// msgTokens is the estimate of one message's tokens: a token per four
// bytes of its text and calls.
func msgTokens(m message.Message) int64 {
	n := int64(len(m.Content)+len(m.ToolCalls)*64) / 4
	for _, c := range m.ToolCalls {
		n += int64(len(c.Arguments)) / 4
	}
	return n
}

// estimated brings the running estimate of e.msgs up to date and returns
// the estimate of their first n; e.mu is held. It counts each message once
// for as long as the list only grows, so a step's estimate costs the
// messages added since the last one, not the conversation since its last
// compaction.
func (e *Engine) estimated(n int) int64 {
	if e.estN > len(e.msgs) || (e.estN > 0 && &e.estOf[0] != &e.msgs[0]) {
		e.estN, e.estSums = 0, e.estSums[:0]
	}
	e.estOf = e.msgs
	for ; e.estN < len(e.msgs); e.estN++ {
		prev := int64(0)
		if k := len(e.estSums); k > 0 {
			prev = e.estSums[k-1]
		}
		e.estSums = append(e.estSums, prev+msgTokens(e.msgs[e.estN]))
	}
	if n == 0 {
		return 0
	}
	return e.estSums[n-1]
}
