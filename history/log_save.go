package history

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// SaveEntries is Save for callers without a transcript.Document: it builds
// one from entries, rejecting repeated IDs (ErrDuplicateID) and invalid
// entries before the log is created or touched.
func (l *Log) SaveEntries(entries []transcript.Entry, msgs []message.Message) error {
	if err := l.ensureLoaded(); err != nil {
		return err
	}
	seen := make(map[string]int, len(entries))
	for i, e := range entries {
		if j, dup := seen[e.ID]; dup {
			return fmt.Errorf("%w %q (entries %d and %d)", ErrDuplicateID, e.ID, j, i)
		}
		seen[e.ID] = i
	}
	id := l.header.ConversationID
	doc, err := transcript.NewDocument(id, entries)
	if err != nil {
		return err
	}
	return l.Save(doc, msgs)
}

// Save makes the log hold doc and msgs, appending as little as it can:
//
//   - When the saved settled entries are an unchanged prefix of doc
//     (compared by fingerprint, every one of them), only the newly settled
//     entries are appended as one ui-append batch. Otherwise one
//     ui-transcript snapshot of doc's settled entries supersedes the old
//     presentation.
//   - Entries from the first open one on (a streaming answer, a running
//     tool) are written provisionally, as one ui-open record that the next
//     UI record supersedes. Streaming more text costs a small ui-open, not
//     a snapshot, and a crash keeps the accepted partial text.
//   - Every entry is written as its durable view (transcript.Entry.Durable):
//     an open tool's argument draft and ephemeral items stay in memory.
//   - Likewise new messages are appended; a message list that no longer
//     starts with the saved one is written after a rewrite record. The
//     saved list includes the failure messages the last read added for
//     an older log (failmsg.go): appending after them writes only the new
//     messages, and a rewrite writes them as ordinary messages.
//   - An unchanged save writes nothing.
//
// Everything is validated and encoded before the file is touched. The new
// records go out in one write followed by fsync, and Save returns only after
// both; a crash in between leaves complete records and at most one torn last
// line, which readers ignore. A version 2 log is upgraded first. Saved
// entries and messages must not be mutated afterwards: a save compares
// against them.
func (l *Log) Save(doc transcript.Document, msgs []message.Message) error {
	if err := l.ensureLoaded(); err != nil {
		return err
	}
	for i, m := range msgs {
		if err := m.Validate(); err != nil {
			return fmt.Errorf("%w %d: %v", ErrInvalidMessage, i, err)
		}
	}
	if err := l.rebase(doc.Elided()); err != nil {
		return err
	}
	at := l.now()
	var buf []byte

	// Model-facing messages first: they are what a resumed turn needs most.
	rewrote := false
	if samePrefixMsgs(l.msgs, msgs) {
		for _, m := range msgs[len(l.msgs):] {
			var err error
			if buf, err = appendMessageRecord(buf, at, m); err != nil {
				return fmt.Errorf("%w: %v", ErrInvalidMessage, err)
			}
		}
	} else {
		rewrote = true
		buf = appendRewriteRecord(buf, at)
		for _, m := range msgs {
			var err error
			if buf, err = appendMessageRecord(buf, at, m); err != nil {
				return fmt.Errorf("%w: %v", ErrInvalidMessage, err)
			}
		}
	}

	n, settled, total := l.saved, doc.Settled(), doc.Len()
	prefixSame := settled >= n && doc.SamePrefix(l.doc, n)
	tailSame := total-settled == len(l.tail)
	for i := settled; tailSame && i < total; i++ {
		tailSame = durablePrint(doc, i) == l.tail[i-settled]
	}
	// A log whose tail came from ui-open reads those entries as settled; a
	// caller that continues from the loaded document hands them back
	// settled. Either way, what the log holds is unchanged.
	held := total == n+len(l.tail) && doc.SamePrefix(l.doc, n)
	for i := n; held && i < total; i++ {
		held = durablePrint(doc, i) == l.tail[i-n]
	}
	snapshot, wroteUI := false, false
	var tail []transcript.Fingerprint
	switch {
	case held:
		settled, tail = n, l.tail
	case prefixSame && !l.usesReserved(doc, n, total):
		from := n
		if !l.uiOnDisk {
			from = 0 // derived entries were never written
		}
		if settled > n || (from < settled && total > settled) {
			var err error
			buf, err = appendUIRecord(buf, TypeUIAppend, at, entriesFrom(doc, from, settled))
			if err != nil {
				return err
			}
			wroteUI = true
		}
	default:
		snapshot, wroteUI = true, true
		entries := entriesFrom(doc, 0, settled)
		if l.base > 0 {
			// A snapshot holds the whole document: the entries doc
			// leaves out come from the log.
			prefix, err := l.elided()
			if err != nil {
				return err
			}
			entries = concat(slices.Values(prefix), entries)
		}
		var err error
		buf, err = appendUIRecord(buf, TypeUITranscript, at, entries)
		if err != nil {
			return err
		}
	}
	if !held {
		// Any UI record supersedes the provisional tail on disk, so after
		// one it is written again; otherwise only when it changed.
		if total > settled && (wroteUI || !tailSame) {
			var err error
			buf, err = appendUIRecord(buf, TypeUIOpen, at, entriesFrom(doc, settled, total))
			if err != nil {
				return err
			}
			wroteUI = true
		} else if total == settled && len(l.tail) > 0 && !wroteUI {
			buf = append(appendRecordStart(buf, TypeUIOpen, at), `,"entries":[]}`+"\n"...)
			wroteUI = true
		}
		for i := settled; i < total; i++ {
			tail = append(tail, durablePrint(doc, i))
		}
	}
	if len(buf) == 0 {
		return nil
	}
	if l.head != Main {
		buf = wrapOnBranch(buf, at, l.head)
	}
	if err := l.write(buf); err != nil {
		return err
	}
	// An upgrade on the way read the log whole; what it holds is still
	// the entries doc leaves out, then doc's.
	l.doc, l.base, l.saved, l.tail, l.msgs = doc, doc.Elided(), settled, tail, msgs
	if rewrote {
		// The list went out whole: the failures a read added are in the
		// log now, as the messages they are.
		l.synth = nil
	}
	if wroteUI {
		l.uiOnDisk = true
	}
	if snapshot {
		clear(l.reserved)
	}
	l.noteRecord(at, false, "")
	l.storeSummary()
	return nil
}

// rebase makes the writer's view of the document start where a document
// that leaves out its first k entries starts, so Save compares and appends
// relative to it. The entries left out must be settled on disk.
func (l *Log) rebase(k int) error {
	if k == l.base {
		return nil
	}
	if k > l.base && k-l.base <= l.saved {
		// The holder dropped more of the document's start (an engine
		// keeping a live session's end): the entries it dropped are the
		// first of those saved, so the window moves on without a read.
		drop := k - l.base
		l.doc = transcript.NewCheckedWindow(l.doc.ID(), k, l.doc.FirstID(), l.doc.Entries()[drop:])
		l.base, l.saved = k, l.saved-drop
		return nil
	}
	if l.base != 0 && l.exists {
		if _, _, err := l.read(false); err != nil { // whole again
			return err
		}
	}
	if k == 0 {
		return nil
	}
	if k > l.saved {
		return fmt.Errorf("%w: it leaves out %d entries, the log holds %d settled", ErrElided, k, l.saved)
	}
	l.doc = transcript.NewCheckedWindow(l.doc.ID(), k, l.doc.FirstID(), l.doc.Entries()[k:])
	l.base, l.saved = k, l.saved-k
	return nil
}

// elided reads the head's first l.base entries from the log.
func (l *Log) elided() ([]transcript.Entry, error) {
	data, err := l.m.Read()
	if err != nil {
		return nil, err
	}
	st, err := parse(data, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.m.Name(), err)
	}
	d := st.conv.Document
	if d.Len() < l.base {
		return nil, fmt.Errorf("%w: the log holds %d entries, not the %d left out", ErrElided, d.Len(), l.base)
	}
	return d.Entries()[:l.base], nil
}

// concat yields the entries of a, then those of b.
func concat(a, b func(func(transcript.Entry) bool)) func(func(transcript.Entry) bool) {
	return func(yield func(transcript.Entry) bool) {
		for e := range a {
			if !yield(e) {
				return
			}
		}
		for e := range b {
			if !yield(e) {
				return
			}
		}
	}
}

// SetTitle records the conversation's title in a meta record.
func (l *Log) SetTitle(title string) error {
	if err := l.ensureLoaded(); err != nil {
		return err
	}
	at := l.now()
	if err := l.write(appendMetaRecord(nil, at, title, at)); err != nil {
		return err
	}
	l.noteRecord(at, true, title)
	l.storeSummary()
	return nil
}

// usesReserved reports whether an entry after the saved prefix takes an ID
// of a rejected batch; such a save is written as a snapshot, which readers
// accept because a snapshot starts the presentation afresh.
func (l *Log) usesReserved(doc transcript.Document, from, to int) bool {
	if len(l.reserved) == 0 {
		return false
	}
	for i := from; i < to; i++ {
		if _, ok := l.reserved[doc.At(i).ID]; ok {
			return true
		}
	}
	return false
}

// entriesFrom yields the durable view (transcript.Entry.Durable) of doc's
// entries from..to: every UI record Save writes goes through it, so an open
// tool's argument draft or ephemeral item, which the live views show, is
// never written, whichever save path caught the tool open.
func entriesFrom(doc transcript.Document, from, to int) func(func(transcript.Entry) bool) {
	return func(yield func(transcript.Entry) bool) {
		for i := from; i < to; i++ {
			e, _ := doc.At(i).Durable()
			if !yield(e) {
				return
			}
		}
	}
}

// durablePrint is the fingerprint of entry i as entriesFrom writes it, so
// the provisional tail is compared by what is on disk: a change to an
// ephemeral value alone writes no new ui-open.
func durablePrint(doc transcript.Document, i int) transcript.Fingerprint {
	if e, changed := doc.At(i).Durable(); changed {
		return transcript.FingerprintOf(e)
	}
	return doc.Fingerprint(i)
}

// write appends records, creating the log atomically if it does not exist
// and upgrading a version 2 log first.
func (l *Log) write(records []byte) error {
	if !l.exists {
		h := l.header
		h.Version = Version
		if h.StartedAt.IsZero() {
			h.StartedAt = l.now()
		}
		data := appendHeader(nil, h)
		data = append(data, records...)
		if err := l.m.Replace(data); err != nil {
			return err
		}
		l.exists, l.header, l.size, l.terminated = true, h, int64(len(data)), true
		l.wrote()
		return nil
	}
	if l.header.Version == 2 {
		if _, err := l.Upgrade(); err != nil {
			return err
		}
	}
	if !l.terminated {
		// Re-terminate a torn last line so it stays a line of its own.
		records = append([]byte{'\n'}, records...)
	}
	if err := l.m.Append(records); err != nil {
		return err
	}
	l.size += int64(len(records))
	l.terminated = true
	l.wrote()
	return nil
}

func samePrefixMsgs(old, cur []message.Message) bool {
	if len(cur) < len(old) {
		return false
	}
	if len(old) == 0 || &old[0] == &cur[0] {
		return true
	}
	for i := range old {
		if !equalMessage(old[i], cur[i]) {
			return false
		}
	}
	return true
}

func equalMessage(a, b message.Message) bool {
	if a.Role != b.Role || a.Content != b.Content || a.ToolCallID != b.ToolCallID || a.Name != b.Name ||
		a.IsError != b.IsError || a.Continuation != b.Continuation ||
		len(a.Reasoning) != len(b.Reasoning) || len(a.ToolCalls) != len(b.ToolCalls) {
		return false
	}
	for i := range a.Reasoning {
		if a.Reasoning[i] != b.Reasoning[i] {
			return false
		}
	}
	for i, c := range a.ToolCalls {
		d := b.ToolCalls[i]
		if c.ID != d.ID || c.Name != d.Name || !bytes.Equal(c.Arguments, d.Arguments) {
			return false
		}
	}
	return true
}
