package history

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
)

// entriesFrame is a decoded entries frame.
type entriesFrame struct {
	prev    link
	ordinal int
	refs    []Ref
	size    uint32 // the frame's, framing included (when read by position)
}

func encodeEntries(prev link, ordinal int, refs []Ref) []byte {
	var e enc
	e.link(prev)
	e.u32(uint32(ordinal))
	e.u32(uint32(len(refs)))
	for _, r := range refs {
		e.ref(r)
	}
	return e.b
}

func decodeEntries(p []byte, at int64) (entriesFrame, error) {
	d := dec{b: p}
	f := entriesFrame{prev: d.link(), ordinal: int(d.u32())}
	n := d.u32()
	if d.err == nil && uint64(n) > uint64(len(d.b)) {
		return f, fmt.Errorf("%w: impossible entry count", ErrIndexDamaged)
	}
	f.refs = make([]Ref, 0, n)
	for i := uint32(0); i < n && d.err == nil; i++ {
		f.refs = append(f.refs, d.ref())
	}
	if d.err != nil {
		return f, d.err
	}
	if len(d.b) != 0 || f.prev.pos < 0 || f.prev.pos >= at || (f.prev.pos == 0) != (f.ordinal == 0) {
		return f, fmt.Errorf("%w: an entries frame is impossible", ErrIndexDamaged)
	}
	return f, nil
}

// msgRef is one model message of main since its last rewrite: the bytes
// of its record's line in the log, without the newline.
type msgRef struct {
	start int64
	len   int32
}

func encodeMessages(prev link, ordinal int, refs []msgRef) []byte {
	var e enc
	e.link(prev)
	e.u32(uint32(ordinal))
	e.u32(uint32(len(refs)))
	for _, r := range refs {
		e.i64(r.start)
		e.u32(uint32(r.len))
	}
	return e.b
}

// walkMessages reads the count message refs a chain of message frames
// ends with, first to last.
func walkMessages(src frameSource, l link, count int) ([]msgRef, error) {
	return walkChain(src, l, count, frameMessages, "messages", func(d *dec) msgRef {
		m := msgRef{start: d.i64(), len: int32(d.u32())}
		if d.err == nil && (m.start <= 0 || m.len <= 0) {
			d.err = fmt.Errorf("%w: an impossible message", ErrIndexDamaged)
		}
		return m
	})
}

// readMsgRun reads the run of message refs a link ends: the link before
// it, its first ordinal and its refs (the link's take of them).
func readMsgRun(src frameSource, l link) (prev link, ord int, refs []msgRef, err error) {
	b, err := src(l)
	if err != nil {
		return link{}, 0, nil, err
	}
	k, payload, err := parseFrame(b)
	if err != nil {
		return link{}, 0, nil, err
	}
	if k != frameMessages {
		return link{}, 0, nil, fmt.Errorf("%w: a link does not point at messages", ErrIndexDamaged)
	}
	d := dec{b: payload}
	prev, ord, n := d.link(), int(d.u32()), d.u32()
	take := int(l.take)
	if d.err != nil || take == 0 || uint32(take) > n || uint64(take)*12 > uint64(len(d.b)) || prev.pos < 0 || prev.pos >= l.pos || (prev.pos == 0) != (ord == 0) {
		return link{}, 0, nil, fmt.Errorf("%w: a run of messages does not continue the one after it", ErrIndexDamaged)
	}
	refs = make([]msgRef, take)
	for i := range refs {
		refs[i] = msgRef{start: d.i64(), len: int32(d.u32())}
		if d.err == nil && (refs[i].start <= 0 || refs[i].len <= 0) {
			d.err = fmt.Errorf("%w: an impossible message", ErrIndexDamaged)
		}
	}
	return prev, ord, refs, d.err
}

// walkChain reads the count items a chain of frames of one kind ends
// with, first to last, decoding each frame's items straight into place;
// what says what the items are in its errors. Every frame must continue
// the one after it exactly, or the index is damaged.
func walkChain[T any](src frameSource, l link, count int, kind byte, what string, item func(*dec) T) ([]T, error) {
	out := make([]T, count)
	next := count
	for l.pos != 0 {
		b, err := src(l)
		if err != nil {
			return nil, err
		}
		k, payload, err := parseFrame(b)
		if err != nil {
			return nil, err
		}
		if k != kind {
			return nil, fmt.Errorf("%w: a link does not point at %s", ErrIndexDamaged, what)
		}
		d := dec{b: payload}
		prev, ord, n := d.link(), int(d.u32()), d.u32()
		take := int(l.take)
		if d.err != nil || take == 0 || uint32(take) > n || ord+take != next || prev.pos < 0 || prev.pos >= l.pos || (prev.pos == 0) != (ord == 0) {
			return nil, fmt.Errorf("%w: a run of %s does not continue the one after it", ErrIndexDamaged, what)
		}
		for i := range take {
			out[ord+i] = item(&d)
		}
		if d.err != nil {
			return nil, d.err
		}
		next, l = ord, prev
	}
	if next != 0 {
		return nil, fmt.Errorf("%w: a chain of %s ends before its first", ErrIndexDamaged, what)
	}
	return out, nil
}

// decodeIndex checks a whole page index file held in memory and returns
// its last commit and every branch's document (the fuzz target). It reads
// every frame the commit's documents reach, so anything it accepts pages
// without a checksum failure.
func decodeIndex(data []byte) (*ixState, [][]Ref, error) {
	st, _, err := decodeTrailer(data)
	if err != nil {
		return nil, nil, err
	}
	src := bytesFrames(data)
	docs := make([][]Ref, len(st.branches))
	for i, b := range st.branches {
		refs, err := walk(src, b.last, b.count, b.lastRef)
		if err != nil {
			return nil, nil, err
		}
		docs[i] = refs
	}
	for _, b := range st.branches {
		if _, err := walkMessages(src, b.msgChain, b.msgs); err != nil {
			return nil, nil, err
		}
	}
	if len(st.tables) > 0 {
		t, err := openIDTable(bytes.NewReader(data), int64(len(data)), st.tables)
		if err != nil {
			return nil, nil, err
		}
		for _, s := range t.segs {
			for b := range s.n {
				if _, err := s.bucket(b); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	return st, docs, nil
}

// decodeTrailer reads the last commit of a whole index file.
func decodeTrailer(data []byte) (*ixState, int64, error) {
	st, pos, err := decodeTrailerAt(data)
	return st, pos, err
}

func decodeTrailerAt(data []byte) (st *ixState, pos int64, err error) {
	defer func() {
		if err != nil {
			st, pos = nil, 0
		}
	}()
	if len(data) < len(indexMagic)+trailerLen || string(data[:len(indexMagic)]) != string(indexMagic) {
		return nil, 0, fmt.Errorf("%w: not a page index", ErrIndexDamaged)
	}
	t := data[len(data)-trailerLen:]
	if string(t[:4]) != string(trailerMagic) || crc32.Checksum(t[:12], castagnoli) != binary.LittleEndian.Uint32(t[12:]) {
		return nil, 0, fmt.Errorf("%w: the trailer is damaged", ErrIndexDamaged)
	}
	pos = int64(binary.LittleEndian.Uint64(t[4:]))
	end := int64(len(data) - trailerLen)
	if pos < int64(len(indexMagic)) || pos+frameHeadLen+4 > end {
		return nil, 0, fmt.Errorf("%w: the trailer points outside the file", ErrIndexDamaged)
	}
	kind, payload, err := parseFrame(data[pos:end])
	if err != nil {
		return nil, 0, err
	}
	if kind != frameState {
		return nil, 0, fmt.Errorf("%w: the trailer does not point at a state", ErrIndexDamaged)
	}
	st, err = decodeState(payload, pos)
	if err == nil {
		err = st.loadCovs(bytesFrames(data[:end]))
	}
	return st, pos, err
}

// frameSource reads whole frames by position.
type frameSource func(l link) ([]byte, error)

func bytesFrames(data []byte) frameSource {
	return func(l link) ([]byte, error) {
		end := l.pos + int64(l.size)
		if l.pos < int64(len(indexMagic)) || end > int64(len(data)) || end < l.pos {
			return nil, fmt.Errorf("%w: a link points outside the file", ErrIndexDamaged)
		}
		return data[l.pos:end], nil
	}
}

func fileFrames(f io.ReaderAt, size int64) frameSource {
	return func(l link) ([]byte, error) {
		end := l.pos + int64(l.size)
		if l.pos < int64(len(indexMagic)) || end > size || end < l.pos {
			return nil, fmt.Errorf("%w: a link points outside the file", ErrIndexDamaged)
		}
		b := make([]byte, l.size)
		if _, err := f.ReadAt(b, l.pos); err != nil {
			return nil, fmt.Errorf("read the page index: %w", err)
		}
		return b, nil
	}
}

// forwardBlock is how much of the index file forwardFrames reads at once.
const forwardBlock = 32 << 10

// forwardFrames is fileFrames for a reader that goes forwards through the
// file frame by frame (IndexDoc.ahead): it reads a block at a time and
// serves the frames in it, rather than a read call for each frame's head
// and another for the frame.
func forwardFrames(f io.ReaderAt, size int64) frameSource {
	var block []byte
	at := int64(-1)
	return func(l link) ([]byte, error) {
		end := l.pos + int64(l.size)
		if l.pos < int64(len(indexMagic)) || end > size || end < l.pos {
			return nil, fmt.Errorf("%w: a link points outside the file", ErrIndexDamaged)
		}
		if at < 0 || l.pos < at || end > at+int64(len(block)) {
			// A new slice each time: frames served from the last one may
			// still be held.
			n := min(max(int64(l.size), forwardBlock), size-l.pos)
			block = make([]byte, n)
			if _, err := f.ReadAt(block, l.pos); err != nil {
				at = -1
				return nil, fmt.Errorf("read the page index: %w", err)
			}
			at = l.pos
		}
		return block[l.pos-at : end-at : end-at], nil
	}
}

// readRun reads the run a link ends: its refs and the link before it.
func readRun(src frameSource, l link) (ordinal int, refs []Ref, prev link, err error) {
	b, err := src(l)
	if err != nil {
		return 0, nil, link{}, err
	}
	kind, payload, err := parseFrame(b)
	if err != nil {
		return 0, nil, link{}, err
	}
	if kind != frameEntries {
		return 0, nil, link{}, fmt.Errorf("%w: a link does not point at entries", ErrIndexDamaged)
	}
	f, err := decodeEntries(payload, l.pos)
	if err != nil {
		return 0, nil, link{}, err
	}
	if int(l.take) > len(f.refs) || l.take == 0 {
		return 0, nil, link{}, fmt.Errorf("%w: a link takes more entries than its frame has", ErrIndexDamaged)
	}
	return f.ordinal, f.refs[:l.take], f.prev, nil
}

// walk reads the count settled entries a chain ends with, first to last,
// and checks them against the state's last entry and the turn rule.
func walk(src frameSource, l link, count int, last Ref) ([]Ref, error) {
	out, err := walkChain(src, l, count, frameEntries, "entries", (*dec).ref)
	if err != nil {
		return nil, err
	}
	if count > 0 && out[count-1] != last {
		return nil, fmt.Errorf("%w: the last entry is not the one the state names", ErrIndexDamaged)
	}
	if err := checkTurns(out); err != nil {
		return nil, err
	}
	return out, nil
}

// checkTurns verifies that refs, a whole document, are numbered into
// turns, and their offsets laid out, by the rule (follow).
func checkTurns(refs []Ref) error { return checkTurnsFrom(refs, 0) }

// ---- building ---------------------------------------------------------------

// checkTurnsFrom checks the turn numbering and offsets of refs, which
// start at ordinal from (the first one's are taken as given unless from
// is 0).
func checkTurnsFrom(refs []Ref, from int) error {
	for i, r := range refs {
		if i == 0 && from > 0 {
			continue
		}
		var prev Ref
		if i > 0 {
			prev = refs[i-1]
		}
		if follow(prev, i > 0, r) != r {
			return fmt.Errorf("%w: entry %d is numbered wrong", ErrIndexDamaged, from+i)
		}
	}
	return nil
}

// readEntriesFrame reads and checks the entries frame at pos.
func readEntriesFrame(src frameSource, pos int64) (entriesFrame, error) {
	hd, err := src(link{pos: pos, size: frameHeadLen})
	if err != nil {
		return entriesFrame{}, err
	}
	b, err := src(link{pos: pos, size: frameHeadLen + binary.LittleEndian.Uint32(hd) + 4})
	if err != nil {
		return entriesFrame{}, err
	}
	kind, payload, err := parseFrame(b)
	if err == nil && kind != frameEntries {
		err = fmt.Errorf("%w: an ID table entry does not point at entries", ErrIndexDamaged)
	}
	if err != nil {
		return entriesFrame{}, err
	}
	f, err := decodeEntries(payload, pos)
	f.size = uint32(len(b))
	return f, err
}
