package history

import (
	"fmt"
	"os"

	"github.com/foliodev/folio/transcript"
)

// Entries returns entries lo..hi (hi exclusive) of d, read from log (the
// open log file d's index describes) at the byte ranges the index gives,
// and decoded as the reader decodes them. It costs the refs and the bytes
// of those entries, not the log: a terminal pages a conversation with it,
// and folio log show prints one part after another.
func (d *IndexDoc) Entries(log *os.File, lo, hi int) ([]transcript.Entry, error) {
	refs, err := d.Refs(lo, hi)
	if err != nil {
		return nil, err
	}
	t := &tailRead{f: log, ix: d.ix}
	return t.decode(refs)
}

// Decode decodes the entries refs (refs of d, as Refs or a cursor's Next
// gave them) point at, read from log (the open log file d's index
// describes), as the reader decodes them. It is safe to call from several
// goroutines at once: folio log show decodes parts in parallel.
func (d *IndexDoc) Decode(log *os.File, refs []Ref) ([]transcript.Entry, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	t := &tailRead{f: log, ix: d.ix}
	return t.decode(refs)
}

// EntryDecoder decodes entries of a document a part at a time, as Decode
// does, reading each part's bytes into a buffer it reuses: a forward read
// of a whole conversation then allocates the entries, not the log. It is
// for one goroutine at a time.
type EntryDecoder struct {
	d   *IndexDoc
	f   *os.File
	buf []byte
	t   tailRead
}

// NewDecoder returns a decoder of d's entries from log, the open log file
// d's index describes.
func (d *IndexDoc) NewDecoder(log *os.File) *EntryDecoder {
	return &EntryDecoder{d: d, f: log, t: tailRead{f: log, ix: d.ix}}
}

// decoderSpan bounds the stretch of the log a decoder reads in one piece:
// refs spread wider (entries of a snapshot rewritten far apart) are read
// entry by entry.
const decoderSpan = 8 << 20

// Decode decodes the entries refs point at.
func (e *EntryDecoder) Decode(refs []Ref) ([]transcript.Entry, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	lo, hi := refs[0].Start, refs[0].Start+int64(refs[0].Len)
	for _, r := range refs[1:] {
		lo, hi = min(lo, r.Start), max(hi, r.Start+int64(r.Len))
	}
	if hi-lo > decoderSpan {
		return e.t.decode(refs)
	}
	if int64(cap(e.buf)) < hi-lo {
		e.buf = make([]byte, hi-lo)
	}
	buf := e.buf[:hi-lo]
	if _, err := e.f.ReadAt(buf, lo); err != nil {
		return nil, fmt.Errorf("%w: %v", errNoIndexTail, err)
	}
	out := make([]transcript.Entry, len(refs))
	for i, r := range refs {
		raw := buf[r.Start-lo : r.Start-lo+int64(r.Len)]
		// decodeEntry decodes into copies: nothing keeps the buffer.
		en, err := e.t.decodeEntry(raw)
		if err != nil || en.ID != r.ID {
			return nil, fmt.Errorf("%w: entry %q is not where the index says", errNoIndexTail, r.ID)
		}
		out[i] = en
	}
	return out, nil
}

// HeadEntries returns entries lo..hi (hi exclusive) of the head of the log
// at path, read through its page index as of the log's size now (rebuilt
// if it does not match), with each entry's stored size in bytes: one page
// of a conversation the terminal scrolls back through, costing that page
// and not the log.
func HeadEntries(path string, lo, hi int) ([]transcript.Entry, []int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	ix, err := OpenIndex(path, f, 0)
	if err != nil {
		return nil, nil, err
	}
	defer ix.Close()
	d, err := ix.Document(ix.Head())
	if err != nil {
		return nil, nil, err
	}
	refs, err := d.Refs(lo, hi)
	if err != nil {
		return nil, nil, err
	}
	es, err := (&tailRead{f: f, ix: d.ix}).decode(refs)
	if err != nil {
		return nil, nil, err
	}
	sizes := make([]int, len(refs))
	for i, r := range refs {
		sizes[i] = int(r.Len)
	}
	return es, sizes, nil
}

// Settled is how many of d's entries are settled; the ones after them (the
// provisional tail, Len() - Settled()) are open.
func (d *IndexDoc) Settled() int { return d.br.count }

// Problems is how many problems (rejected lines and records) the log had
// as of the index's commit, as Conversation.Problems counts them.
func (ix *Index) Problems() int { return ix.st.problems }

// HeadEntriesAround returns the page of at most n entries of the head of
// the log at path around entry id, among its first limit entries, with
// each entry's stored size: lo is the page's first position and at the
// entry's. One open of the page index finds the entry through its ID table
// and reads the index near it, so a page far back costs what one near the
// end does. An entry not in the head, or at or past limit, gives lo -1 and
// no entries (at is then -1, or the position past limit).
func HeadEntriesAround(path, id string, n, limit int) (lo, at int, es []transcript.Entry, sizes []int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return -1, -1, nil, nil, err
	}
	defer f.Close()
	ix, err := OpenIndex(path, f, 0)
	if err != nil {
		return -1, -1, nil, nil, err
	}
	defer ix.Close()
	d, err := ix.Document(ix.Head())
	if err != nil {
		return -1, -1, nil, nil, err
	}
	if at, err = d.Find(id); err != nil || at < 0 || at >= limit {
		return -1, at, nil, nil, err
	}
	lo = max(0, at-n/2)
	hi := min(lo+n, limit)
	refs, err := d.Refs(lo, hi)
	if err != nil {
		return -1, -1, nil, nil, err
	}
	if es, err = d.Entries(f, lo, hi); err != nil {
		return -1, -1, nil, nil, err
	}
	sizes = make([]int, len(refs))
	for i, r := range refs {
		sizes[i] = int(r.Len)
	}
	return lo, at, es, sizes, nil
}
