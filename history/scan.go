package history

import (
	"strings"
)

// uiPrefix starts every UI record folio writes.
const uiPrefix = `{"type":"ui-`

// scanRecord decodes a version 3 UI record in one pass with
// transcript.Scanner, which builds each entry straight from the line. It
// handles only records that are whole and valid, written the way folio
// writes them; for any other line it returns false and decodeRecord reads
// the line the careful way, which finds and reports what is wrong.
//
// The entries' strings are slices of r.text, the log's bytes, not copies.
func (r *reader) scanRecord(start, end int) (*rawRecord, bool) {
	line := r.text[start:end]
	if r.version != 3 || !strings.HasPrefix(line, uiPrefix) {
		return nil, false
	}
	sc := &r.sc
	sc.Reset(line, 0)
	rec := &r.rec
	*rec = rawRecord{entries: rec.entries[:0]}
	if !sc.Open('{') {
		return nil, false
	}
	for first := true; ; first = false {
		name, more, ok := sc.Member(first)
		if !ok {
			return nil, false
		}
		if !more {
			break
		}
		bit := memberBit(name)
		if bit == 0 || rec.members&bit != 0 {
			return nil, false
		}
		rec.members |= bit
		switch bit {
		case memType:
			rec.typ, ok = sc.String()
		case memAt:
			rec.at, ok = sc.String()
		case memEntries:
			ok = sc.Array(func() bool {
				e, ok := sc.Entry()
				rec.entries = append(rec.entries, e)
				return ok
			})
		default:
			ok = false
		}
		if !ok {
			return nil, false
		}
	}
	if !sc.End() || !isUI(rec.typ) || rec.members&memEntries == 0 {
		return nil, false
	}
	return rec, true
}
