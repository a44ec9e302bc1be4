package history

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
	"github.com/go-json-experiment/json/jsontext"
)

// Read reads a whole log from r without taking its lock. It fails only when
// the header is missing or invalid (ErrNoHeader) or names a newer version
// (ErrNewerVersion); every other problem is listed in the result's Problems
// while the valid records around it still apply.
func Read(r io.Reader) (*Conversation, error) {
	s := NewScanner()
	for _, err := range s.Records(r) {
		if err != nil {
			return nil, err
		}
	}
	st, err := s.finish()
	if err != nil {
		return nil, err
	}
	return st.conv, nil
}

// lineKind classifies a physical line of a log.
type lineKind uint8

const (
	lineHeader lineKind = iota
	lineMessage
	lineMeta
	lineRewrite
	lineUITranscript
	lineUIAppend
	lineUIOpen
	lineBranch     // a branch record: a fork of a parent branch
	lineHead       // a head record: which branch is current
	lineUnknown    // a JSON object of a type this folio does not know
	lineUnreadable // not a JSON object, or an object without a type
	lineTorn       // the unterminated, incomplete last line
)

// lineInfo is what upgrade and compaction need to know about each line.
type lineInfo struct {
	kind       lineKind
	accepted   bool
	start, end int // byte range in the file, without the newline
	// For an accepted version 2 UI record: its entries and instant, already
	// converted to version 3.
	legacy []transcript.Entry
	at     time.Time
	// atText is the record's at as written; upgrade writes it back as it
	// was (hasAt false: the record had none).
	atText string
	hasAt  bool
	// branch is the branch an accepted record belongs to ("" for main; an
	// on-branch record's wrapped kind is in kind); parent is the branch a
	// branch record forks from.
	branch, parent string
}

// parsed is the reader's result plus what a writer needs to continue the log.
type parsed struct {
	conv *Conversation
	// reserved holds the IDs of rejected UI batches since the last accepted
	// snapshot. Reading ignores it (a rejected batch reserves nothing, as
	// in Jazz); folio's writer uses it to avoid reusing those IDs.
	reserved map[string]struct{}
	// uiLines counts UI records, accepted or not. Without any, the document
	// was derived from the messages and has never been written.
	uiLines int
	// terminated is false when the file does not end in a newline.
	terminated bool
	size       int
	// settledLen is how many entries of the document came from ui-append
	// and ui-transcript; the rest came from a ui-open tail.
	settledLen int
	lines      []lineInfo // only when tracking
}

// reader holds the state of one pass over a log.
type reader struct {
	parsed
	version int
	dec     jsontext.Decoder
	sc      transcript.Scanner
	scan    bool // read the records folio writes with sc
	// keep: the lines stay in memory, unchanged, for as long as what is
	// read from them; sc then scans them in place instead of a copy.
	keep bool
	// light: the read keeps of each branch's document only its last
	// window entries whole (see parseTail); the others are held as stubs,
	// entries with only their ID, read in place from data, whose lines
	// (cur while it is applied) are listed in stubLines.
	light  bool
	window int
	// idsOnly: the read is for a page index, which needs each record's
	// batch while it applies and the documents' IDs, never the entries
	// afterwards; the documents keep each entry as its ID alone.
	idsOnly bool
	// noEntries: an idsOnly pass from the log's start (a page index's
	// rebuild) keeps no settled entries at all. A document's settled IDs
	// are its ID set's keys, in order, so the entries would only repeat
	// them at several times the size: a whole log's worth for as long as
	// the pass runs.
	noEntries bool
	data      []byte
	cur       []byte
	stubLines []lineRange
	inPlace   bool               // the record being applied was scanned in place
	csc       transcript.Scanner // decodes the window's entries into copies
	// widen, in a light read, keeps the entries it picks whole while
	// reading and may start the window earlier (see TailStart).
	widen    *TailStart
	rec      rawRecord
	entries  []transcript.Entry
	tail     []transcript.Entry // the newest accepted ui-open, if not superseded
	ids      *idSet
	msgAt    []time.Time
	metaTime time.Time
	lastAt   time.Time
	tree     tree

	// failures: a light read for a Log, which gives the head's messages
	// with the failures an older log holds only as entries (failmsg.go);
	// it holds prompts and compactions whole, and normalized says it did.
	failures, normalized bool
}

// The members a record may carry, as bits.
const (
	memType = 1 << iota
	memAt
	memEntries
	memMessage
	memTitle
	memUpdatedAt
	memEndedAt
	memBranch
	memParent
	memAfterEntry
	memAfterMessage
	memRecord
)

// rawRecord is one record line decoded as far as its type allows.
type rawRecord struct {
	typ     string
	at      string
	members int
	bad     *Problem // the first member-level fault
	// UI records: decoded entries and the first invalid entry.
	entries []transcript.Entry
	// spans[i] is where entries[i] is in the line decoded (for an inner
	// record of on-branch, in the outer line): its JSON object's bytes.
	spans      []span
	failedIDs  []string // readable IDs of invalid entries, reserved on rejection
	entriesRaw jsontext.Value
	entriesAt  int // where entriesRaw starts in the line
	entriesBad *Problem
	message    jsontext.Value
	msg        message.Message // decoded in the stream when msgDone
	msgDone    bool
	title      string
	updatedAt  string
	endedAt    string
	// Branch records.
	branch, parent, afterEntry string
	afterMessage               int
	record                     jsontext.Value
	recordAt                   int // where record starts in the line
}

// span is a byte range [start, end) of a line.
type span struct{ start, end int }

// valueStart is where the JSON value after position i of line begins,
// skipping whitespace and a separating comma.
func valueStart(line []byte, i int) int {
	for i < len(line) {
		switch line[i] {
		case ' ', '\t', '\n', '\r', ',':
			i++
		default:
			return i
		}
	}
	return i
}

// parse reads a whole log. The entries it returns share data's memory, so
// the caller must not change data afterwards.
func parse(data []byte, track bool) (*reader, error) {
	return parseWith(data, track, true)
}

// parseWith is parse, reading records with the one-pass scanner only when
// scan is set; tests compare the two ways.
func parseWith(data []byte, track, scan bool) (*reader, error) {
	s := newScanner(track, bytes.Count(data, []byte{'\n'})+1)
	s.r.scan = scan
	s.r.keep, s.quiet = true, true
	if err := s.recordsIn(data); err != nil {
		return nil, err
	}
	return s.finish()
}

// TailStart lets the caller of Log.LoadTail start the window earlier than
// its last n entries, from what the document and messages say. The
// entries of Kinds are shown to Start (read whole, not only checked).
//
// Start is given those at index from or later, in document order with
// their indices, and the messages. It returns the index the window must
// start at (or later: the window never starts after its last n entries),
// or more when the entries before from could change the answer; it is
// then called again with an earlier from. With from 0 it has seen them
// all, and more is ignored. A read through the page index starts near the
// end, so a Start that decides from the last entries costs only those.
type TailStart struct {
	Kinds []transcript.Kind
	Start func(picked []Picked, from int, msgs []message.Message) (start int, more bool)
}

// picks reports whether e is of one of w's kinds.
func (w *TailStart) picks(e transcript.Entry) bool {
	return slices.Contains(w.Kinds, e.Content.Kind())
}

// Picked is an entry of TailStart.Kinds, and its index in the document.
// It is valid only during the call to Start.
type Picked struct {
	Index int
	Entry transcript.Entry
}

// lineRange is a line's bytes in data, without its newline.
type lineRange struct{ start, end int }

// parseTail reads a whole log as parse does, applying every rule to every
// record, but builds of each branch's document only its last window
// entries (more when the provisional tail is longer); the entries before
// them are counted (Document.Elided) and never built. Nothing it returns
// shares data's memory.
// widen, when not nil, may start the window earlier.
func parseTail(data []byte, window int, widen *TailStart) (*reader, error) {
	return parseTailWith(data, window, widen, false)
}

// parseTailWith is parseTail; with failures, the head's messages hold the
// failures an older log holds only as entries, as a Log reads them.
func parseTailWith(data []byte, window int, widen *TailStart, failures bool) (*reader, error) {
	s := newScanner(false, bytes.Count(data, []byte{'\n'})+1)
	s.r.keep, s.r.light, s.r.window, s.r.data, s.r.widen, s.quiet = true, true, window, data, widen, true
	s.r.failures = failures
	if err := s.recordsIn(data); err != nil {
		return nil, err
	}
	r, err := s.finish()
	if err != nil {
		return nil, err
	}
	// What the read keeps of the records it read in place, copied off
	// data: the reserved IDs and the types the problems name.
	reserved := make(map[string]struct{}, len(r.reserved))
	for id := range r.reserved {
		reserved[strings.Clone(id)] = struct{}{}
	}
	r.reserved, r.data, r.stubLines, r.cur = reserved, nil, nil, nil
	for i := range r.conv.Problems {
		p := &r.conv.Problems[i]
		p.Type, p.Pointer, p.Msg = strings.Clone(p.Type), strings.Clone(p.Pointer), strings.Clone(p.Msg)
	}
	for i := range r.conv.Unknown {
		r.conv.Unknown[i].Type = strings.Clone(r.conv.Unknown[i].Type)
	}
	return r, nil
}

// offset returns where in data the bytes of s start, or -1 when they are
// not in data.
func (r *reader) offset(s string) int {
	if len(s) == 0 || len(r.data) == 0 {
		return -1
	}
	off := int(uintptr(unsafe.Pointer(unsafe.StringData(s))) - uintptr(unsafe.Pointer(&r.data[0])))
	if off < 0 || off >= len(r.data) {
		return -1
	}
	return off
}

// hold returns an entry of the UI record being applied as the reader keeps
// it: whole, or in a light read a stub. Only an entry whose ID was read in
// place from the line (the one-pass scanner reads folio's own records that
// way) becomes a stub: the ID's position in data leads back to its line,
// and tells it from the line's other entries.
func (r *reader) hold(e transcript.Entry) transcript.Entry {
	if r.idsOnly {
		return transcript.Entry{ID: e.ID}
	}
	if !r.light || r.version != 3 {
		return e
	}
	if r.offset(e.ID) < 0 {
		if r.inPlace {
			// An escaped ID was unquoted into a copy, but the entry's
			// other strings are still slices of data: keep a copy.
			return copyEntry(e)
		}
		return e
	}
	if r.widen != nil && r.widen.picks(e) || r.failures && (isPromptKind(e.Content.Kind()) || e.Content.Kind() == transcript.KindCompaction) {
		return e // read in place: copied if it ends up in the window
	}
	if start := r.offset(unsafe.String(unsafe.SliceData(r.cur), len(r.cur))); len(r.stubLines) == 0 || r.stubLines[len(r.stubLines)-1].start != start {
		r.stubLines = append(r.stubLines, lineRange{start, start + len(r.cur)})
	}
	return transcript.Entry{ID: e.ID}
}

// copyEntry returns e decoded again from its encoding, sharing no memory
// with it (e as it is if that fails, which it cannot for a valid entry).
func copyEntry(e transcript.Entry) transcript.Entry {
	if b, err := transcript.EncodeEntry(e); err == nil {
		if c, err := transcript.DecodeEntry(b); err == nil {
			return c
		}
	}
	return e
}

// holdAll is hold for a whole batch, appended to dst.
func (r *reader) holdAll(dst, es []transcript.Entry) []transcript.Entry {
	for _, e := range es {
		dst = append(dst, r.hold(e))
	}
	return dst
}

// build decodes the stubs among es again from their lines, in place: once
// in place, to find which entry of the line each is, then into copies, so
// the entries do not keep the log's bytes alive.
func (r *reader) build(es []transcript.Entry) error {
	keep := r.keep
	defer func() { r.keep = keep }()
	var cur lineRange
	var inPlace, copies []transcript.Entry
	for i, e := range es {
		if e.Content != nil {
			continue
		}
		off := r.offset(e.ID)
		k, _ := slices.BinarySearchFunc(r.stubLines, off, func(l lineRange, off int) int {
			return cmp.Compare(l.start, off+1)
		})
		if off < 0 || k == 0 || off >= r.stubLines[k-1].end {
			return fmt.Errorf("history: entry %q of a light read has no line", e.ID)
		}
		if l := r.stubLines[k-1]; l != cur {
			cur = l
			line := r.data[l.start:l.end]
			var err error
			r.keep = true
			if inPlace, err = r.entriesOf(line); err != nil {
				return err
			}
			// The copies come from a scanner of their own: the blocks a
			// scanner carves numbers and presentations from are shared
			// by the entries it decodes, and the read's blocks hold
			// entries that point into data.
			r.keep = false
			r.sc, r.csc = r.csc, r.sc
			copies, err = r.entriesOf(line)
			r.sc, r.csc = r.csc, r.sc
			if err != nil {
				return err
			}
		}
		j := slices.IndexFunc(inPlace, func(d transcript.Entry) bool {
			return unsafe.StringData(d.ID) == unsafe.StringData(e.ID) && d.ID == e.ID
		})
		if j < 0 || j >= len(copies) {
			return fmt.Errorf("history: entry %q of a light read is not where it was", e.ID)
		}
		es[i] = copies[j]
	}
	return nil
}

// entriesOf decodes the entries of a UI record line as the read did.
func (r *reader) entriesOf(line []byte) ([]transcript.Entry, error) {
	rec, err := r.decodeRecord(line)
	if err != nil {
		return nil, fmt.Errorf("history: reading a line again: %w", err)
	}
	return slices.Clone(rec.entries), nil
}

func (r *reader) finish() error {
	c := r.conv
	c.UpdatedAt = updatedAt(r.lastAt, r.metaTime)
	return r.finishBranches()
}

// finishHead builds the document of the branch whose state is in the
// reader's own fields; head says it is the head's.
func (r *reader) finishHead(head bool) error {
	c := r.conv
	c.Derived = false
	entries := r.entries
	r.settledLen = len(entries)
	if len(r.tail) > 0 {
		entries = append(slices.Clip(entries), r.tail...)
	}
	if r.uiLines == 0 {
		entries = deriveEntries(c.Messages, r.msgAt)
		r.settledLen = len(entries)
		c.Derived = true
	}
	var doc transcript.Document
	var err error
	switch {
	case c.Derived:
		doc, err = transcript.NewDocument(c.Header.ConversationID, entries)
	case r.light:
		// The window never cuts the provisional tail: a writer continues
		// from the settled entries.
		from := max(0, min(len(entries)-r.window, r.settledLen))
		if w := r.widen; w != nil && w.Start != nil {
			var picked []Picked
			for i, e := range entries {
				if e.Content != nil && w.picks(e) {
					picked = append(picked, Picked{Index: i, Entry: e})
				}
			}
			start, _ := w.Start(picked, 0, c.Messages)
			from = max(0, min(from, start))
		}
		first := ""
		if len(entries) > 0 {
			first = strings.Clone(entries[0].ID)
		}
		win := slices.Clone(entries[from:])
		for i, e := range win {
			if e.Content != nil && (r.widen != nil || r.failures) {
				win[i] = copyEntry(e) // kept whole, read in place
			}
		}
		if err := r.build(win); err != nil {
			return err
		}
		doc = transcript.NewCheckedWindow(c.Header.ConversationID, from, first, win)
		r.settledLen -= from
	default:
		// Every entry was validated as it was read, and the batch rules
		// keep IDs unique.
		doc = transcript.NewCheckedDocument(c.Header.ConversationID, entries)
	}
	if err != nil {
		// The batch checks above make this unreachable; say so loudly if not.
		return fmt.Errorf("history: building the document: %w", err)
	}
	c.Document = doc
	c.MessageAt = slices.Clip(r.msgAt)
	if r.light && r.failures && head {
		// The head's messages as a Log gives them. The document is only
		// the window, so the rule reads the entries the read kept:
		// prompts whole, stubs decoded as it asks for them.
		if err := c.normalize(&lightSource{r: r, entries: entries}); err != nil {
			return err
		}
		r.normalized = true
	}
	return nil
}

func (r *reader) problem(p Problem) {
	r.conv.Problems = append(r.conv.Problems, p)
}
