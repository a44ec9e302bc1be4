package history

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
	"github.com/go-json-experiment/json/jsontext"
)

// Log.LoadTail through the page index. A file log whose index matches it
// exactly holds in the index everything LoadTail returns besides what it
// decodes: the title and times, the problems' count, where main's model
// messages since the last rewrite are, and every entry's kind, bytes and
// position. So the tail read costs the index's last commit, the log's
// header line, those messages' lines and the window's entries (plus, for
// a TailStart, the entries of its kinds back to where it decides), not the
// log.
//
// The index is OpenIndex's: one behind the log is extended by the
// records appended after it, and a missing, damaged or foreign one is
// rebuilt in one pass and kept, so the next open costs the tail.
//
// It answers only for the logs it can answer for exactly as the whole
// pass does: version 3, one branch, no problem anywhere, a document
// written as UI records. Anything else returns errNoIndexTail and
// LoadTail reads the log whole.

// errNoIndexTail: the page index cannot stand in for the tail read.
var errNoIndexTail = errors.New("history: the page index cannot answer this tail read")

// tailFromIndex is parseTail for the log file at path, read through its
// page index.
func tailFromIndex(path string, window int, widen *TailStart) (*reader, error) {
	if !inConversations(filepath.Dir(path)) {
		return nil, errNoIndexTail
	}
	return readTail(path, window, widen)
}

// readTail is tailFromIndex for a log anywhere.
func readTail(path string, window int, widen *TailStart) (*reader, error) {
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
	if st.logSize != fi.Size() {
		return nil, fmt.Errorf("%w: the index does not describe the whole log", errNoIndexTail)
	}
	br := st.branches[0]
	if len(st.branches) != 1 || st.head != Main || st.problems != 0 || br.uiLines == 0 {
		return nil, fmt.Errorf("%w: branches, problems or a derived document", errNoIndexTail)
	}
	t := tailRead{f: f}
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
	if err := t.messages(s, ix, br.msgs); err != nil {
		return nil, err
	}
	if r.conv.Messages == nil && st.msgsMade {
		// Main had messages before its last rewrite: a reader's list is
		// empty, not nil.
		r.conv.Messages, r.msgAt = []message.Message{}, []time.Time{}
	}

	doc, err := ix.Document(Main)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoIndexTail, err)
	}
	total, settled := doc.Len(), br.count
	from := max(0, min(total-window, settled))
	if widen != nil && widen.Start != nil {
		start, err := t.widen(doc, widen, from, r.conv.Messages)
		if err != nil {
			return nil, err
		}
		from = max(0, min(from, start))
	}
	refs, err := doc.Refs(from, total)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoIndexTail, err)
	}
	win, err := t.entries(refs, from)
	if err != nil {
		return nil, err
	}
	first := br.first
	if settled == 0 && len(br.tail) > 0 {
		first = br.tail[0].ID
	}

	c := r.conv
	c.Title = st.title
	c.UpdatedAt = st.lastAt
	if !st.metaTime.IsZero() {
		c.UpdatedAt = st.metaTime
	}
	c.Head, c.Branches = Main, []Branch{{ID: Main}}
	c.Document = transcript.NewCheckedWindow(c.Header.ConversationID, from, first, win)
	c.MessageAt = slices.Clip(r.msgAt)
	r.lastAt, r.metaTime = st.lastAt, st.metaTime
	r.uiLines, r.settledLen = br.uiLines, settled-from
	r.size, r.terminated = int(fi.Size()), !st.skipNL
	r.rec = rawRecord{}
	indexTails.Add(1)
	return r, nil
}

// indexTails counts tail reads the page index answered (tests).
var indexTails atomic.Int64

// tailRead reads what tailFromIndex needs of the log file.
type tailRead struct {
	f       *os.File
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

// messages applies main's model messages since the last rewrite, reading
// their record lines where the index says they are, with the reader's
// own rule for a message record.
func (t *tailRead) messages(s *Scanner, ix *Index, count int) error {
	refs, err := walkMessages(ix.frames(), ix.st.msgs, count)
	if err != nil {
		return fmt.Errorf("%w: %v", errNoIndexTail, err)
	}
	spans := make([]span64, len(refs))
	for i, m := range refs {
		spans[i] = span64{m.start, m.start + int64(m.len)}
	}
	lines, err := readSpans(t.f, spans)
	if err != nil {
		return err
	}
	r := s.r
	for i, line := range lines {
		n := len(r.conv.Messages)
		info := r.record(1, trimLine(line), false)
		if info.kind != lineMessage || !info.accepted || len(r.conv.Messages) != n+1 || len(r.conv.Problems) > 0 {
			return fmt.Errorf("%w: message %d is not where the index says", errNoIndexTail, i)
		}
	}
	return nil
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
