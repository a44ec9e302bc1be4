package history

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
	"github.com/go-json-experiment/json/jsontext"
)

// Log.LoadTail through the page index. A file log whose index matches it
// exactly holds in the index everything LoadTail returns besides what it
// decodes: the title and times, the problems (while there are few), the
// lines kept verbatim, each branch's fork point, reserved IDs and model
// messages since its last rewrite, and every entry's kind, bytes and
// position. So the tail read costs the index's last commit, the log's
// header line, those lines, the messages' lines and each branch's window
// of entries (plus, for a TailStart, the entries of its kinds back to
// where it decides), not the log.
//
// The index is OpenIndex's: one behind the log is extended by the
// records appended after it, and a missing, damaged or foreign one is
// rebuilt in one pass and kept, so the next open costs the tail.
//
// It answers only for the logs it can answer for exactly as the whole
// pass does: version 3, main's document written as UI records, and no
// more problems than the index keeps (maxTailProblems, and
// maxTailReserved reserved IDs). A log whose last line was cut short
// (not a record) is answered too: the index describes the log up to that
// line, which is read and judged as the whole pass judges it. Anything
// else returns errNoIndexTail and LoadTail reads the log whole.

// errNoIndexTail: the page index cannot stand in for the tail read.
var errNoIndexTail = errors.New("history: the page index cannot answer this tail read")

// tailFromIndex is parseTail for the log file at path, read through its
// page index.
func tailFromIndex(path string, window int, widen *TailStart) (*reader, error) {
	return tailFromIndexWith(path, window, widen, false)
}

// tailFromIndexWith is tailFromIndex; with failures, the head's messages
// hold the failures an older log holds only as entries, as a Log reads
// them (failmsg.go).
func tailFromIndexWith(path string, window int, widen *TailStart, failures bool) (*reader, error) {
	if !inConversations(filepath.Dir(path)) {
		return nil, errNoIndexTail
	}
	return readTailWith(path, window, widen, failures)
}

// readTail is tailFromIndex for a log anywhere.
func readTail(path string, window int, widen *TailStart) (*reader, error) {
	return readTailWith(path, window, widen, false)
}

// readTailWith is tailFromIndexWith for a log anywhere.
func readTailWith(path string, window int, widen *TailStart, failures bool) (*reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errNoIndexTail
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, errNoIndexTail
	}
	// OpenIndex uses an index that matches the log, extends one the log
	// grew past (reading only the appended records), and rebuilds a
	// missing, damaged or foreign one in one pass, keeping the result
	// beside the log: only the first open of a log pays for its index.
	ix, err := OpenIndex(path, f, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoIndexTail, err)
	}
	defer ix.Close()
	st := ix.st
	if st.logSize > fi.Size() {
		return nil, fmt.Errorf("%w: the index does not describe the whole log", errNoIndexTail)
	}
	main := st.branches[0]
	if main.uiLines == 0 || !st.extrasOK() {
		return nil, fmt.Errorf("%w: a derived document, or more problems than the index keeps", errNoIndexTail)
	}
	t := tailRead{f: f, ix: ix}
	s := newScanner(false, 0)
	r := s.r
	r.scan = true
	header, err := t.headerLine()
	if err != nil {
		return nil, err
	}
	if s.line(header, true); s.err != nil || r.version != Version {
		return nil, fmt.Errorf("%w: the header", errNoIndexTail)
	}
	var torn *Problem
	if st.logSize < fi.Size() {
		if torn, err = t.tornLine(st, fi.Size()); err != nil {
			return nil, err
		}
	}
	unknown, err := t.unknownLines(st.unknown)
	if err != nil {
		return nil, err
	}

	// Each branch's messages and window, in the order the whole pass
	// builds them (TailStart sees them in that order): main, the other
	// branches as they were made, the head last.
	order := make([]*ixBranch, 0, len(st.branches))
	for _, br := range st.branches {
		if br.info.ID != st.head {
			order = append(order, br)
		}
	}
	order = append(order, st.branch(st.head))
	c := r.conv
	var views map[string]branchView
	if len(st.branches) > 1 {
		views = make(map[string]branchView, len(st.branches))
	}
	var head branchTail
	for k, br := range order {
		// Only the head's messages are given as a Log reads them, as a
		// whole read gives them.
		bt, err := t.branch(r, br, window, widen, failures && k == len(order)-1)
		if err != nil {
			return nil, err
		}
		if views != nil {
			views[br.info.ID] = branchView{doc: bt.doc, msgs: bt.msgs}
		}
		head = bt
	}

	c.Title = st.title
	c.UpdatedAt = updatedAt(st.lastAt, st.metaTime)
	c.Problems = slices.Clone(st.problemList)
	if torn != nil {
		c.Problems = append(c.Problems, *torn)
	}
	c.Unknown = unknown
	c.Head, c.Branches, c.views = st.head, []Branch{{ID: Main}}, views
	for _, br := range st.branches[1:] {
		c.Branches = append(c.Branches, br.info)
	}
	hb := st.branch(st.head)
	c.Document, c.Messages, c.MessageAt, c.synth = head.doc, head.msgs, slices.Clip(head.msgAt), head.synth
	r.msgAt = head.msgAt
	r.reserved = hb.reservedSet()
	r.lastAt, r.metaTime = st.lastAt, st.metaTime
	r.uiLines, r.settledLen = hb.uiLines, head.settledLen
	r.size, r.terminated = int(fi.Size()), !st.skipNL && torn == nil
	r.rec = rawRecord{}
	observed(evIndexTail)
	return r, nil
}

// branchTail is what the tail read gives of one branch: its window, its
// model messages (and their instants) and how many of the window's
// entries are settled.
type branchTail struct {
	doc        transcript.Document
	msgs       []message.Message
	msgAt      []time.Time
	settledLen int
	synth      []int // the messages failures added (failmsg.go)
}

// branch reads branch br's messages and window through the index, as the
// whole pass's finishHead builds them in a light read.
// With failures, its messages hold the failures an older log holds only as
// entries (failmsg.go): the rule reads the refs back from the end only as
// far as pairing the prompts with the messages needs, and decodes the
// prompts and the few entries of failed turns it asks for, never the
// document between them.
func (t *tailRead) branch(r *reader, br *ixBranch, window int, widen *TailStart, failures bool) (branchTail, error) {
	var bt branchTail
	var err error
	if bt.msgs, bt.msgAt, err = t.messages(r, br); err != nil {
		return bt, err
	}
	doc, err := t.ix.Document(br.info.ID)
	if err != nil {
		return bt, fmt.Errorf("%w: %v", errNoIndexTail, err)
	}
	t.decoded = nil
	if failures {
		sp, err := failureSplices(&indexSource{t: t, doc: doc, base: doc.Len()}, bt.msgs)
		if err != nil {
			return bt, err
		}
		bt.msgs, bt.msgAt, bt.synth = normalized(bt.msgs, bt.msgAt, sp)
	}
	total, settled := doc.Len(), br.count
	from := max(0, min(total-window, settled))
	if widen != nil && widen.Start != nil {
		start, err := t.widen(doc, widen, from, bt.msgs)
		if err != nil {
			return bt, err
		}
		from = max(0, min(from, start))
	}
	refs, err := doc.Refs(from, total)
	if err != nil {
		return bt, fmt.Errorf("%w: %v", errNoIndexTail, err)
	}
	win, err := t.entries(refs, from)
	if err != nil {
		return bt, err
	}
	first := br.first
	if settled == 0 && len(br.tail) > 0 {
		first = br.tail[0].ID
	}
	bt.doc = transcript.NewCheckedWindow(r.conv.Header.ConversationID, from, first, win)
	bt.settledLen = settled - from
	return bt, nil
}

// tornLine is the problem the whole pass reports for the bytes of the log
// after what the index describes, when they are a torn last line: no
// newline, and not a record (one would have been applied and indexed).
func (t *tailRead) tornLine(st *ixState, size int64) (*Problem, error) {
	if st.skipNL {
		return nil, fmt.Errorf("%w: the index does not describe the whole log", errNoIndexTail)
	}
	rest := make([]byte, size-st.logSize)
	if _, err := t.f.ReadAt(rest, st.logSize); err != nil {
		return nil, fmt.Errorf("%w: %v", errNoIndexTail, err)
	}
	if bytes.IndexByte(rest, '\n') >= 0 {
		return nil, fmt.Errorf("%w: the index does not describe the whole log", errNoIndexTail)
	}
	s := newScanner(false, 0)
	s.r.version = Version
	if info := s.r.record(st.lines, trimLine(rest), true); info.kind != lineTorn || len(s.r.conv.Problems) != 1 {
		return nil, fmt.Errorf("%w: the log ends in a record the index does not describe", errNoIndexTail)
	}
	return &s.r.conv.Problems[0], nil
}

// unknownLines reads the lines the whole pass keeps verbatim from where
// the index says they are.
func (t *tailRead) unknownLines(refs []unknownRef) ([]RawLine, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	spans := make([]span64, len(refs))
	for i, u := range refs {
		spans[i] = span64{u.start, u.end}
	}
	lines, err := readSpans(t.f, spans)
	if err != nil {
		return nil, err
	}
	out := make([]RawLine, len(refs))
	for i, u := range refs {
		if bytes.IndexByte(lines[i], '\n') >= 0 {
			return nil, fmt.Errorf("%w: unknown line %d is not where the index says", errNoIndexTail, u.line)
		}
		out[i] = RawLine{Line: u.line, Type: u.typ, Bytes: lines[i]}
	}
	return out, nil
}

// tailRead reads what tailFromIndex needs of the log file.
type tailRead struct {
	f       *os.File
	ix      *Index
	msgs    map[int64]readMsg // messages read so far, by their line's start
	sc      transcript.Scanner
	decoded map[int]transcript.Entry // entries decoded so far, by index
}

// headerLine reads the log's first line.
func (t *tailRead) headerLine() ([]byte, error) {
	var line []byte
	buf := make([]byte, 4096)
	for off := int64(0); ; off += int64(len(buf)) {
		n, err := t.f.ReadAt(buf, off)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return append(line, buf[:i+1]...), nil
		}
		line = append(line, buf[:n]...)
		if err != nil {
			return nil, fmt.Errorf("%w: the header line: %v", errNoIndexTail, err)
		}
	}
}

// messages reads branch br's model messages since its last rewrite
// from their record lines, where the index says they are, with the
// reader's own rule for a message record. A message of another branch's
// (one the branch shares with its parent) is read once for all of them.
func (t *tailRead) messages(r *reader, br *ixBranch) ([]message.Message, []time.Time, error) {
	refs, err := walkMessages(t.ix.frames(), br.msgChain, br.msgs)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errNoIndexTail, err)
	}
	if t.msgs == nil {
		t.msgs = map[int64]readMsg{}
	}
	var spans []span64
	for _, m := range refs {
		if _, ok := t.msgs[m.start]; !ok {
			spans = append(spans, span64{m.start, m.start + int64(m.len)})
		}
	}
	lines, err := readSpans(t.f, spans)
	if err != nil {
		return nil, nil, err
	}
	for i, line := range lines {
		m, err := t.message(r, trimLine(line))
		if err != nil {
			return nil, nil, err
		}
		t.msgs[spans[i].start] = m
	}
	var msgs []message.Message
	var at []time.Time
	if br.msgs > 0 || br.msgsMade {
		// A branch that had messages before its last rewrite has an
		// empty list, not nil.
		msgs, at = make([]message.Message, 0, br.msgs), make([]time.Time, 0, br.msgs)
	}
	for _, m := range refs {
		msgs, at = append(msgs, t.msgs[m.start].m), append(at, t.msgs[m.start].at)
	}
	return msgs, at, nil
}

// readMsg is a message record read through the index.
type readMsg struct {
	m  message.Message
	at time.Time
}

// message applies one message record line (or the record an on-branch
// line wraps) to an empty list, as the reader does.
func (t *tailRead) message(r *reader, line []byte) (readMsg, error) {
	if !bytes.HasPrefix(line, []byte(msgPrefix)) {
		if rec, err := r.decodeRecord(line); err == nil && rec.typ == TypeOnBranch && rec.bad == nil && rec.record != nil {
			line = rec.record
		}
	}
	r.conv.Messages, r.msgAt, r.conv.Problems = nil, nil, nil
	info := r.record(1, line, false)
	if info.kind != lineMessage || !info.accepted || len(r.conv.Messages) != 1 || len(r.conv.Problems) > 0 {
		return readMsg{}, fmt.Errorf("%w: a message is not where the index says", errNoIndexTail)
	}
	m := readMsg{m: r.conv.Messages[0], at: r.msgAt[0]}
	r.conv.Messages, r.msgAt = nil, nil
	return m, nil
}

// widen runs TailStart from the end of the document backwards: from the
// window's start, then four times as far back each time Start asks for
// more, decoding only the entries of its kinds.
func (t *tailRead) widen(doc *IndexDoc, w *TailStart, from int, msgs []message.Message) (int, error) {
	total := doc.Len()
	lo := from
	for {
		refs, err := doc.Refs(lo, total)
		if err != nil {
			return 0, fmt.Errorf("%w: %v", errNoIndexTail, err)
		}
		var want []Ref
		var at []int
		for i, ref := range refs {
			if _, ok := t.decoded[lo+i]; !ok && (ref.Kind == "" || slices.Contains(w.Kinds, ref.Kind)) {
				want, at = append(want, ref), append(at, lo+i)
			}
		}
		es, err := t.decode(want)
		if err != nil {
			return 0, err
		}
		if t.decoded == nil {
			t.decoded = map[int]transcript.Entry{}
		}
		for i, e := range es {
			t.decoded[at[i]] = e
		}
		var picked []Picked
		for i := lo; i < total; i++ {
			if e, ok := t.decoded[i]; ok && w.picks(e) {
				picked = append(picked, Picked{Index: i, Entry: e})
			}
		}
		start, more := w.Start(picked, lo, msgs)
		if !more || lo == 0 {
			return start, nil
		}
		lo = max(0, total-4*(total-lo)-256)
	}
}

// entries decodes the window's entries (the document's from on), reusing
// those widen decoded.
func (t *tailRead) entries(refs []Ref, from int) ([]transcript.Entry, error) {
	out := make([]transcript.Entry, len(refs))
	var want []Ref
	var at []int
	for i, ref := range refs {
		if e, ok := t.decoded[from+i]; ok {
			out[i] = e
			continue
		}
		want, at = append(want, ref), append(at, i)
	}
	es, err := t.decode(want)
	if err != nil {
		return nil, err
	}
	for i, e := range es {
		out[at[i]] = e
	}
	return out, nil
}

// decode reads and decodes the entries refs point at, as the reader does
// when it builds a window: with the one-pass scanner into copies, or the
// careful decoder when the scanner declines.
func (t *tailRead) decode(refs []Ref) ([]transcript.Entry, error) {
	spans := make([]span64, len(refs))
	for i, ref := range refs {
		spans[i] = span64{ref.Start, ref.Start + int64(ref.Len)}
	}
	raws, err := readSpans(t.f, spans)
	if err != nil {
		return nil, err
	}
	out := make([]transcript.Entry, len(refs))
	for i, raw := range raws {
		e, err := t.decodeEntry(raw)
		if err != nil || e.ID != refs[i].ID {
			return nil, fmt.Errorf("%w: entry %q is not where the index says", errNoIndexTail, refs[i].ID)
		}
		out[i] = e
	}
	return out, nil
}

// span64 is a byte range [start, end) of a file.
type span64 struct{ start, end int64 }

// readSpans reads the byte ranges of f, in one read for ranges that lie
// close together. The slices it returns do not share memory with each
// other's neighbours beyond their own bytes.
func readSpans(f io.ReaderAt, spans []span64) ([][]byte, error) {
	const gap = 64 << 10
	out := make([][]byte, len(spans))
	order := make([]int, len(spans))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return int(spans[a].start - spans[b].start) })
	for i := 0; i < len(order); {
		lo, hi := spans[order[i]].start, spans[order[i]].end
		j := i + 1
		for j < len(order) && spans[order[j]].start <= hi+gap {
			hi = max(hi, spans[order[j]].end)
			j++
		}
		buf := make([]byte, hi-lo)
		if _, err := f.ReadAt(buf, lo); err != nil {
			return nil, fmt.Errorf("%w: %v", errNoIndexTail, err)
		}
		for _, k := range order[i:j] {
			out[k] = buf[spans[k].start-lo : spans[k].end-lo : spans[k].end-lo]
		}
		i = j
	}
	return out, nil
}

// decodeEntry decodes an entry's stored JSON: with the one-pass scanner
// when it takes it, else the careful way, as the reader decodes a UI
// record's entries.
func (t *tailRead) decodeEntry(raw []byte) (transcript.Entry, error) {
	t.sc.ResetCopy(raw)
	if e, ok := t.sc.Entry(); ok && t.sc.Offset() == len(raw) {
		return e, nil
	}
	var dec jsontext.Decoder
	dec.Reset(bytes.NewReader(raw))
	e, _, err := decodeEntry(&dec, true)
	if err == errSlowPath {
		dec.Reset(bytes.NewReader(raw))
		e, _, err = decodeEntry(&dec, false)
	}
	return e, err
}
