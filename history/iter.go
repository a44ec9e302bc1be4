package history

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"iter"
	"slices"

	"github.com/foliodev/folio/transcript"
)

// This file is the log's one reading loop. Read, ReadFile, Log's loads and
// the server's capture and follower all run a Scanner over the log's lines,
// so every rule of docs/log-format.md is applied by the same code whoever
// reads.

// ChangeKind says how one record changed the head's document.
type ChangeKind uint8

// How a record changed the head's document.
const (
	// Unchanged: the record did not change the head's document (a rejected
	// record, a message of a log whose document is written, meta, a fork, a
	// record of another branch).
	Unchanged ChangeKind = iota
	// Appended: the record settled Change.Entries at the end of the
	// document. A provisional tail it ended held only entries among them.
	Appended
	// Opened: the record replaced the provisional tail with
	// Change.Entries. The previous tail held only entries among them.
	Opened
	// Replaced: the document was replaced in a way no append describes (a
	// ui-transcript snapshot, another head, a derived document's new
	// message, a tail that lost entries). Read the whole document again
	// with Scanner.Document.
	Replaced
)

// Change is the effect of one record on the head's document.
type Change struct {
	Kind    ChangeKind
	Entries []transcript.Entry // Appended and Opened only; read-only
}

// Record is one line of a log as the Scanner applied it.
type Record struct {
	Line int // counted from 1; line 1 is the header
	// Start and End are the line's bytes in the file, without its newline.
	Start, End int64
	// Type is the record's type ("" for an unreadable line).
	Type     string
	Accepted bool
	Change   Change
	// Branch is the branch an accepted record applied to (Main for a
	// record not wrapped in on-branch; the new branch for a branch
	// record).
	Branch string
	// Batch holds, for an accepted version 3 UI record, its entries with
	// where each one's JSON is in the file. It is read-only and valid
	// until the next record.
	Batch []Stored
}

// Stored is an entry as a UI record holds it: Start and End are the bytes
// of its JSON object in the log file.
type Stored struct {
	Entry      transcript.Entry
	Start, End int64
}

// Scanner reads a log line by line with every rule Read applies, and can
// continue from where it stopped when the log grows. After each line, its
// Document is the head's document as Read would give it for the bytes read
// so far.
//
// A last line without its newline is applied when it is a complete record
// (Read includes it) and left unread when it is not (a write in progress):
// Offset then stays at its start, and a later Records call over the rest of
// the file reads it again. A Scanner is not safe for concurrent use.
type Scanner struct {
	r      *reader
	track  bool
	quiet  bool // no Change is worked out: nobody reads it (a whole read)
	lineNo int
	off    int64 // bytes consumed: complete lines, plus an applied unterminated one
	// skipNL: the last line applied had no newline; the next byte, when it
	// is the newline that completes it, belongs to it.
	skipNL bool
	torn   *Problem // the unterminated, unreadable line at the end, if any
	size   int64    // every byte seen, torn ones included
	last   byte     // the last byte seen
	err    error
	batch  []Stored
	// unread: the caller drops what line returns (recordsIn), so the
	// entries' stored ranges are not gathered into a batch.
	unread bool
	// resumed: set up from a page index, so entries before the offset it
	// started at carry only their IDs.
	resumed bool
	// light, when not nil, says main's first entries, and those each
	// branch shares with them, are not held at all (ResumeScanner through
	// resumeLight; r.tree.light says how many): each line is checked
	// against the index's ID table before it applies, and whatever needs
	// them reads them from the index first (materialize).
	light *lightState
}

// NewScanner returns a Scanner positioned before a log's first line.
func NewScanner() *Scanner { return newScanner(false, 0) }

func newScanner(track bool, sizeHint int) *Scanner {
	r := &reader{}
	r.conv = &Conversation{}
	r.reserved = map[string]struct{}{}
	r.tree.head = Main
	r.scan = true
	// Sizing the ID set and the entries for one entry per line spares the
	// rehashing and copying a long log would otherwise cause as it grows.
	r.ids = newIDSet(sizeHint)
	r.entries = make([]transcript.Entry, 0, sizeHint)
	return &Scanner{r: r, track: track}
}

// Offset is how many bytes of the log the Scanner has applied.
func (s *Scanner) Offset() int64 { return s.off }

// Head is the current branch.
func (s *Scanner) Head() string { return s.r.tree.head }

// Title is the conversation's explicit title as the lines read so far set
// it (the header's, else the latest meta title); empty when it has none.
func (s *Scanner) Title() string { return s.r.conv.Title }

// Resumed reports whether the Scanner was set up from a page index
// (ResumeScanner): then Document's entries from before that point carry
// only their IDs.
func (s *Scanner) Resumed() bool { return s.resumed }

// Partial reports whether the Scanner holds only the end of main's
// document and its branches', having resumed from a page index without
// reading the entries before (ResumeScanner). Document then reads them from the index first;
// a caller that only needs to know the Scanner resumed can ask this.
func (s *Scanner) Partial() bool { return s.light != nil }

// Document returns the head's document as it stands: its settled entries,
// then the provisional tail, or the entries derived from its messages when
// it has no UI records. The slice is the caller's; the entries are shared.
func (s *Scanner) Document() []transcript.Entry {
	if s.light != nil {
		if err := s.materialize(); err != nil {
			s.err = err
		}
	}
	entries, _, _, _, _ := s.r.stateOf(s.r.tree.head)
	return slices.Clone(entries)
}

// Records reads the lines of src, which continues the log at Offset, and
// yields each as it is applied. It stops at the first error: a missing or
// invalid header (ErrNoHeader), a newer version (ErrNewerVersion), or a
// failed read. After an error the Scanner reads nothing more.
func (s *Scanner) Records(src io.Reader) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		if s.err != nil {
			yield(Record{}, s.err)
			return
		}
		br := bufio.NewReaderSize(src, 64<<10)
		if s.skipNL {
			// The newline (or CRLF) that completes the line already applied.
			b, _ := br.Peek(2)
			n := 0
			switch {
			case len(b) > 0 && b[0] == '\n':
				n = 1
			case len(b) > 1 && b[0] == '\r' && b[1] == '\n':
				n = 2
			}
			if n > 0 {
				br.Discard(n)
				s.off += int64(n)
				s.size = s.off
				s.last = '\n'
				s.skipNL = false
			}
		}
		var buf []byte
		for {
			line, err := readLine(br, &buf)
			if len(line) == 0 && err == io.EOF {
				return
			}
			if err != nil && err != io.EOF {
				s.err = err
				yield(Record{}, err)
				return
			}
			terminated := err == nil
			rec, ok := s.line(line, terminated)
			if s.err != nil {
				yield(Record{}, s.err)
				return
			}
			if !ok {
				return // torn: left for a later read
			}
			if !yield(rec, nil) || !terminated {
				return
			}
		}
	}
}

// recordsIn applies data, a whole log that the reader may keep and that
// nobody changes afterwards, from its first byte. It walks the lines of the
// slice itself, without copying them through a buffer; the caller finishes
// the read. It stops at the first error, as Records does.
func (s *Scanner) recordsIn(data []byte) error {
	s.unread = true
	defer func() { s.unread = false }()
	for len(data) > 0 {
		n := bytes.IndexByte(data, '\n') + 1
		terminated := n > 0
		if !terminated {
			n = len(data)
		}
		s.line(data[:n:n], terminated)
		if s.err != nil {
			return s.err
		}
		data = data[n:]
	}
	return nil
}

// readLine returns the next line of br with its newline, in the buffer's
// own memory when it fits and in *buf otherwise. io.EOF comes with the
// unterminated rest (possibly empty).
func readLine(br *bufio.Reader, buf *[]byte) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, err
	}
	*buf = append((*buf)[:0], line...)
	for {
		line, err = br.ReadSlice('\n')
		*buf = append(*buf, line...)
		if err != bufio.ErrBufferFull {
			return *buf, err
		}
	}
}

// line applies one physical line (with its newline when terminated). It
// returns false, without consuming the line, for a torn last line.
func (s *Scanner) line(raw []byte, terminated bool) (Record, bool) {
	r := s.r
	start := s.off
	content := raw
	if terminated {
		content = raw[:len(raw)-1]
	}
	end := start + int64(len(content))
	line := trimLine(content)
	s.size = start + int64(len(raw))
	s.last = raw[len(raw)-1]
	rec := Record{Line: s.lineNo + 1, Start: start, End: end}
	if s.lineNo == 0 {
		h, err := decodeHeader(line)
		if err != nil {
			s.err = err
			return rec, false
		}
		r.version = h.Version
		r.conv.Header = h
		r.conv.Title = h.Title
		r.conv.Legacy = h.Version == 2
		if s.track {
			r.lines = append(r.lines, lineInfo{kind: lineHeader, accepted: true, start: int(start), end: int(end)})
		}
		rec.Type, rec.Accepted = TypeConversation, true
		s.advance(raw, terminated)
		return rec, true
	}
	if s.light != nil && !s.light.judges(line) {
		if err := s.materialize(); err != nil {
			s.err = err
			return rec, false
		}
	}
	before := s.headState()
	nProblems := len(r.conv.Problems)
	r.cur = line
	info := r.record(s.lineNo, line, !terminated)
	if info.kind == lineTorn {
		// Not applied: forget the problem until the read ends here.
		p := r.conv.Problems[nProblems]
		r.conv.Problems = r.conv.Problems[:nProblems]
		s.torn = &p
		return rec, false
	}
	if lf := r.tree.light; lf != nil {
		if lf.err != nil {
			s.err = lf.err
			return rec, false
		}
		if info.accepted && info.kind == lineUITranscript {
			// A snapshot replaced the branch's document: all of it is held.
			lf.whole(cmp.Or(info.branch, Main))
			if lf.none() {
				s.light = nil
			}
		}
	}
	if s.track {
		info.start, info.end = int(start), int(end)
		r.lines = append(r.lines, info)
	}
	rec.Type, rec.Accepted = typeOf(info.kind), info.accepted
	if info.accepted {
		rec.Change = s.changeSince(before, info)
		rec.Branch = info.branch
		if rec.Branch == "" {
			rec.Branch = Main
		}
		if r.version == 3 && !s.unread && (info.kind == lineUIAppend || info.kind == lineUITranscript || info.kind == lineUIOpen) {
			s.batch = s.batch[:0]
			for i, e := range r.rec.entries {
				sp := r.rec.spans[i]
				s.batch = append(s.batch, Stored{Entry: e, Start: start + int64(valueStart(line, sp.start)), End: start + int64(sp.end)})
			}
			rec.Batch = s.batch
		}
	}
	s.advance(raw, terminated)
	return rec, true
}

func (s *Scanner) advance(raw []byte, terminated bool) {
	s.lineNo++
	s.off += int64(len(raw))
	s.skipNL = !terminated
	s.torn = nil
}

// headView is what changeSince compares: the head's document before a
// record.
type headView struct {
	head    string
	settled int
	tail    []string
	uiLines int
	msgs    int
	first   string // the first settled entry, to see a snapshot
}

func (s *Scanner) headState() headView {
	if s.quiet {
		return headView{}
	}
	r := s.r
	v := headView{head: r.tree.head}
	entries, tail, uiLines, msgs := r.entries, r.tail, r.uiLines, len(r.conv.Messages)
	if v.head != Main {
		if b := r.tree.branches[v.head]; b != nil {
			entries, tail, uiLines, msgs = b.entries, b.tail, b.uiLines, len(b.msgs)
		}
	}
	v.settled, v.uiLines, v.msgs = len(entries), uiLines, msgs
	if len(entries) > 0 {
		v.first = entries[0].ID
	}
	for _, e := range tail {
		v.tail = append(v.tail, e.ID)
	}
	return v
}

// changeSince says how an accepted record changed the head's document.
func (s *Scanner) changeSince(v headView, info lineInfo) Change {
	if s.quiet {
		return Change{}
	}
	r := s.r
	if r.tree.head != v.head {
		return Change{Kind: Replaced}
	}
	branch := info.branch
	if branch == "" {
		branch = Main
	}
	if info.kind != lineBranch && branch != v.head {
		return Change{} // another branch's record
	}
	entries, tail, uiLines := r.entries, r.tail, r.uiLines
	if v.head != Main {
		b := r.tree.branches[v.head]
		entries, tail, uiLines = b.entries, b.tail, b.uiLines
	}
	switch {
	case uiLines == 0:
		if info.kind == lineMessage || info.kind == lineRewrite {
			return Change{Kind: Replaced} // the derived document changed
		}
		return Change{}
	case v.uiLines == 0 && v.msgs > 0:
		return Change{Kind: Replaced} // written entries replace derived ones
	}
	switch info.kind {
	case lineUITranscript:
		return Change{Kind: Replaced}
	case lineUIAppend:
		if len(entries) < v.settled || (v.settled > 0 && entries[0].ID != v.first) {
			return Change{Kind: Replaced}
		}
		added := slices.Clip(entries[v.settled:])
		if !covers(added, v.tail) {
			return Change{Kind: Replaced}
		}
		return Change{Kind: Appended, Entries: added}
	case lineUIOpen:
		if !covers(tail, v.tail) {
			return Change{Kind: Replaced}
		}
		return Change{Kind: Opened, Entries: slices.Clip(tail)}
	}
	return Change{}
}

// covers reports whether every ID of ids is an entry of es.
func covers(es []transcript.Entry, ids []string) bool {
	for _, id := range ids {
		if !slices.ContainsFunc(es, func(e transcript.Entry) bool { return e.ID == id }) {
			return false
		}
	}
	return true
}

func typeOf(k lineKind) string {
	switch k {
	case lineHeader:
		return TypeConversation
	case lineMessage:
		return TypeMessage
	case lineMeta:
		return TypeMeta
	case lineRewrite:
		return TypeRewrite
	case lineUITranscript:
		return TypeUITranscript
	case lineUIAppend:
		return TypeUIAppend
	case lineUIOpen:
		return TypeUIOpen
	case lineBranch:
		return TypeBranch
	case lineHead:
		return TypeHead
	}
	return ""
}

// finish ends a whole-log read: it reports a torn last line and builds the
// Conversation. The Scanner must not read on afterwards.
func (s *Scanner) finish() (*reader, error) {
	if s.err != nil {
		return nil, s.err
	}
	r := s.r
	if s.lineNo == 0 {
		if s.torn != nil || s.size > 0 {
			// Only a torn header line: decodeHeader already failed on it.
			return nil, fmt.Errorf("%w: the log has no complete first line", ErrNoHeader)
		}
		return nil, fmt.Errorf("%w: the log is empty", ErrNoHeader)
	}
	if s.torn != nil {
		r.conv.Problems = append(r.conv.Problems, *s.torn)
		if s.track {
			r.lines = append(r.lines, lineInfo{kind: lineTorn, start: int(s.off), end: int(s.size)})
		}
	}
	r.size = int(s.size)
	r.terminated = s.size == 0 || s.last == '\n'
	return r, r.finish()
}
