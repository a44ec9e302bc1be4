package history

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
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
	// written, when set (OnWrite), is told after each write is durable.
	written func(id string)

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
	synth      []int     // indices in msgs of the messages the read added for failures (failmsg.go)
	head       string    // the branch saves go to; its records are wrapped in on-branch unless it is Main
	branches   int       // how many branches the log has (main included), for the summary file
	list       listState // what a listing of the file shows beyond doc and msgs, for the summary file
}

// Option configures Open.
type Option func(*Log)

// WithClock sets the clock that stamps records' "at" (default time.Now).
func WithClock(now func() time.Time) Option { return func(l *Log) { l.now = now } }

// OnWrite has f called with the conversation's ID after every write of the
// log is durable: a save, a title, a branch, an upgrade or a compaction.
// It is how derived data (package search's index) follows the log without
// this package knowing of it. f runs on the writing goroutine, so it must
// return at once (hand the work to another goroutine).
func OnWrite(f func(id string)) Option { return func(l *Log) { l.written = f } }

// wrote tells OnWrite's function of a durable write.
func (l *Log) wrote() {
	if l.written != nil {
		l.written(l.id)
	}
}

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
		st, _, err = l.readWith(func(data []byte) (*reader, error) { return parseTailWith(data, max(n, 1), widen, true) })
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
	if err == nil && !st.light {
		// A whole read: the rule reads the document as it is.
		err = st.conv.normalize(docSource{st.conv.Document})
	}
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
		if st, err = tailFromIndexWith(m.path, n, widen, true); err == nil {
			m.size = int64(st.size)
		}
	case CopyMedium:
		err = m.ReadCopy(func(path string, size int64) error {
			r, err := tailFromIndexWith(path, n, widen, true)
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
	l.msgs, l.synth = st.conv.Messages, st.conv.synth
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
	l.msgs, l.synth = nil, nil
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
