package history

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"time"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// Log is one conversation's log opened for writing. It holds the log's lock
// from Open to Close and remembers what is on disk (the saved document, the
// number of saved messages, the file size), so a save appends only what is
// new without reading or hashing what was saved before.
type Log struct {
	m      Medium // where the log lives, with its writer lease (store.go)
	id     string // the conversation ID a log without one in its header takes
	now    func() time.Time
	closed bool

	loaded     bool
	exists     bool
	header     Header
	size       int64
	terminated bool
	doc        transcript.Document      // the last document saved or loaded
	base       int                      // doc.Elided(): entries on disk before doc's first (LoadTail)
	saved      int                      // how many of doc's leading entries the log holds as settled
	tail       []transcript.Fingerprint // the entries after them, held by the newest ui-open
	uiOnDisk   bool                     // false while the document is derived
	reserved   map[string]struct{}
	msgs       []message.Message
	head       string    // the branch saves go to; its records are wrapped in on-branch unless it is Main
	branches   int       // how many branches the log has (main included), for the summary file
	list       listState // what a listing of the file shows beyond doc and msgs, for the summary file
}

// Option configures Open.
type Option func(*Log)

// WithClock sets the clock that stamps records' "at" (default time.Now).
func WithClock(now func() time.Time) Option { return func(l *Log) { l.now = now } }

// Open takes the log's lock, creating its folder (0700) if needed. The log
// file itself is created by the first Save. A second writer gets a
// *LockedError naming this process.
func Open(path string, opts ...Option) (*Log, error) {
	m, err := openFile(path)
	if err != nil {
		return nil, err
	}
	return OpenMedium(m, idFromPath(path), opts...), nil
}

var defaultNow = time.Now

// Lock takes path's writer lock without opening a log: for a caller that
// must exclude every writer while it does something else to the file (the
// server deletes a conversation under it) or that uses the lock only to
// mark a folder as in use by a live process. It returns the release func,
// or a *LockedError while another holder has it.
func Lock(path string) (release func() error, err error) {
	release, _, err = acquire(path)
	return release, err
}

// TookOverFrom returns the process ID of a writer that died holding this
// log (its lock file was left behind and Open took it over), or 0. Callers
// tell the user, since that writer's last save may be incomplete.
func (l *Log) TookOverFrom() int { return l.m.TookOverFrom() }

// Path returns where the log lives: its file path, or its store's name for
// it (Medium.Name).
func (l *Log) Path() string { return l.m.Name() }

// Close releases the lock and removes its file. It does not write to the
// log.
func (l *Log) Close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	return l.m.Close()
}

// Load reads the log and makes it the base of the next Save. A log that does
// not exist yet loads as an empty version 3 conversation.
func (l *Log) Load() (*Conversation, error) {
	if l.closed {
		return nil, ErrClosed
	}
	st, _, err := l.read(false)
	if err != nil {
		return nil, err
	}
	if err := l.settleInterrupted(st); err != nil {
		return nil, err
	}
	return st.conv, nil
}

// LoadTail is Load for a writer that needs only the end of the document,
// such as an engine about to take a turn. The Document holds only the last
// n entries of each branch (more when the provisional tail is longer);
// Document.Elided says how many come before them. Messages, Title, Head,
// Problems and the branch list are as Load gives them.
//
// On a file log whose page index matches it, whose main document is
// written as UI records and which has at most a few problems, the read
// goes through the index and costs the tail: each branch's messages since
// its last rewrite and window of entries (tailindex.go). A CopyMedium's
// log is read the same way through its local copy's index. Otherwise
// every record is read and
// checked as Load does. The two give the same result.
//
// The next Save may pass a document that starts where this one does (one
// that grew from it) or a whole one; the entries left out stay on disk as
// they are.
//
// widen, when not nil, may start the window earlier, at an entry the
// caller needs (an engine needs the turns its messages pair with).
func (l *Log) LoadTail(n int, widen *TailStart) (*Conversation, error) {
	if l.closed {
		return nil, ErrClosed
	}
	st, err := l.tailFromIndex(max(n, 1), widen)
	if err != nil {
		st, _, err = l.readWith(func(data []byte) (*reader, error) { return parseTail(data, max(n, 1), widen) })
	}
	if err != nil {
		return nil, err
	}
	if err := l.settleInterrupted(st); err != nil {
		return nil, err
	}
	return st.conv, nil
}

// InterruptedNotice is the notice a writer adds under a streamed answer that
// its previous writer never finished (it was killed mid-stream).
const InterruptedNotice = "interrupted: folio stopped while this was being written; the answer is kept as far as it got and was not restarted"

// settleInterrupted: a log whose document ends in a ui-open tail nothing
// superseded was left by a writer that died mid-stream. The new writer (it
// holds the lock, so that writer is gone) settles the partial entries as
// they are, with a notice saying so, in one ui-append: every reader then
// shows them as history, and no stream or approval is restarted.
func (l *Log) settleInterrupted(st *reader) error {
	c := st.conv
	if c.Derived || st.settledLen >= c.Document.Len() {
		return nil
	}
	// Appended to the document as read, so one that LoadTail cut keeps its
	// count of the entries before it.
	doc, err := c.Document.Append(transcript.Entry{
		ID:        transcript.NewIDSource().Next(),
		Content:   transcript.Notice{Text: InterruptedNotice, Tone: transcript.ToneWarn},
		Timestamp: l.now().UTC(),
	})
	if err != nil {
		return err
	}
	if err := l.Save(doc, c.Messages); err != nil {
		return fmt.Errorf("settle the interrupted answer: %w", err)
	}
	c.Document, c.Interrupted = doc, true
	return nil
}

// read loads the file and resets the writer's view of it. It returns nil
// data when the log does not exist yet.
func (l *Log) read(track bool) (*reader, []byte, error) {
	if fm, ok := l.m.(*fileMedium); ok {
		return l.readWith(func(data []byte) (*reader, error) { return parseIndexing(fm.path, data, track) })
	}
	return l.readWith(func(data []byte) (*reader, error) { return parse(data, track) })
}

// flushIndex waits for a file log's page index to catch up with what was
// written (tests).
func (l *Log) flushIndex() {
	if fm, ok := l.m.(*fileMedium); ok && fm.ixw != nil {
		fm.ixw.flush()
	}
}

// readWith is read with the parse given.
func (l *Log) readWith(parse func([]byte) (*reader, error)) (*reader, []byte, error) {
	observed(evWholeRead)
	data, err := l.m.Read()
	if errors.Is(err, fs.ErrNotExist) {
		l.reset()
		doc, _ := transcript.NewDocument(l.header.ConversationID, nil)
		l.doc, l.base, l.saved, l.tail = doc, 0, 0, nil
		c := &Conversation{Header: l.header, Document: doc, Head: Main, Branches: []Branch{{ID: Main}}}
		return &reader{parsed: parsed{conv: c}}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	st, err := parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", l.m.Name(), err)
	}
	l.adopt(st, int64(len(data)))
	return st, data, nil
}

// tailFromIndex is LoadTail's read through the page index of a file log,
// or of the local copy a CopyMedium keeps (tailindex.go); an error says to
// read the log instead.
func (l *Log) tailFromIndex(n int, widen *TailStart) (*reader, error) {
	var st *reader
	var err error
	switch m := l.m.(type) {
	case *fileMedium:
		m.settleIndex()
		if st, err = tailFromIndex(m.path, n, widen); err == nil {
			m.size = int64(st.size)
		}
	case CopyMedium:
		err = m.ReadCopy(func(path string, size int64) error {
			r, err := tailFromIndex(path, n, widen)
			if err == nil && int64(r.size) != size {
				// The copy is not the log the medium holds.
				err = fmt.Errorf("%w: the copy has %d bytes, the log %d", errNoIndexTail, r.size, size)
			}
			st = r
			return err
		})
	default:
		return nil, errNoIndexTail // PostgreSQL without a local copy keeps no page index
	}
	if err != nil {
		slog.Debug("history: reading the log for its tail", "log", l.m.Name(), "reason", err)
		return nil, err
	}
	l.adopt(st, int64(st.size))
	return st, nil
}

// adopt makes what a read of the log's size bytes gave the writer's view
// of it.
func (l *Log) adopt(st *reader, size int64) {
	if st.conv.Header.ConversationID == "" {
		st.conv.Header.ConversationID = l.id
	}
	l.loaded, l.exists = true, true
	l.header = st.conv.Header
	l.size = size
	l.terminated = st.terminated
	l.doc, l.base, l.saved = st.conv.Document, st.conv.Document.Elided(), st.settledLen
	l.tail = nil
	for i := st.settledLen; i < st.conv.Document.Len(); i++ {
		l.tail = append(l.tail, st.conv.Document.Fingerprint(i))
	}
	l.uiOnDisk = st.uiLines > 0
	l.reserved = st.reserved
	l.msgs = st.conv.Messages
	l.head, l.branches = st.conv.Head, len(st.conv.Branches)
	l.list = listState{title: st.conv.Title, problems: len(st.conv.Problems), lastAt: st.lastAt, metaTime: st.metaTime}
	// Having read the whole log, refresh its summary: a log last written by
	// another program lists cheaply again from here on.
	l.m.Noted(summaryOfConv(st.conv))
}

func (l *Log) reset() {
	l.loaded, l.exists = true, false
	l.header = Header{Version: Version, ConversationID: l.id}
	l.size, l.terminated, l.uiOnDisk = 0, true, false
	l.reserved = map[string]struct{}{}
	l.msgs = nil
	l.head, l.branches = Main, 1
	l.list = listState{}
}

func (l *Log) ensureLoaded() error {
	if l.closed {
		return ErrClosed
	}
	if l.loaded {
		return nil
	}
	_, _, err := l.read(false)
	return err
}

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
//     starts with the saved one is written after a rewrite record.
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
	if samePrefixMsgs(l.msgs, msgs) {
		for _, m := range msgs[len(l.msgs):] {
			var err error
			if buf, err = appendMessageRecord(buf, at, m); err != nil {
				return fmt.Errorf("%w: %v", ErrInvalidMessage, err)
			}
		}
	} else {
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
