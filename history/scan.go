package history

import (
	"bytes"
	"unsafe"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// uiPrefix and msgPrefix start the UI and message records folio writes.
const (
	uiPrefix  = `{"type":"ui-`
	msgPrefix = `{"type":"message"`
)

// scanRecord decodes a version 3 UI record in one pass with
// transcript.Scanner, which builds each entry straight from the line, or a
// message record whose message has no reasoning or tool calls. It
// handles only records that are whole and valid, written the way folio
// writes them; for any other line it returns false and decodeRecord reads
// the line the careful way, which finds and reports what is wrong.
//
// The entries' strings are slices of the line itself when the reader keeps
// its lines (a whole log read into memory), and otherwise of one copy of
// the line, which the scanner keeps with other lines' in blocks.
func (r *reader) scanRecord(line []byte) (*rawRecord, bool) {
	if r.version != 3 || !bytes.HasPrefix(line, []byte(uiPrefix)) && !bytes.HasPrefix(line, []byte(msgPrefix)) {
		return nil, false
	}
	sc := &r.sc
	// A light read keeps the messages it reads, so it copies them.
	r.inPlace = r.keep && (!r.light || bytes.HasPrefix(line, []byte(uiPrefix)))
	if r.inPlace {
		sc.Reset(unsafe.String(unsafe.SliceData(line), len(line)), 0)
	} else {
		sc.ResetCopy(line)
	}
	rec := &r.rec
	*rec = rawRecord{entries: rec.entries[:0], spans: rec.spans[:0]}
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
				at := sc.Offset()
				e, ok := sc.Entry()
				rec.entries = append(rec.entries, e)
				rec.spans = append(rec.spans, span{at, sc.Offset()})
				return ok
			})
		case memMessage:
			ok = scanMessage(sc, &rec.msg)
			rec.msgDone = ok
		default:
			ok = false
		}
		if !ok {
			return nil, false
		}
	}
	if !sc.End() {
		return nil, false
	}
	switch {
	case isUI(rec.typ) && rec.members == rec.members&allowedMembers[rec.typ] && rec.members&memEntries != 0:
	case rec.typ == TypeMessage && rec.members == rec.members&allowedMembers[rec.typ] && rec.msgDone:
		// The reader validates the message, as after DecodeCanonical.
	default:
		return nil, false
	}
	return rec, true
}

// scanMessage reads a message in folio's own spelling, as
// message.DecodeCanonical does, when it has only the members a plain
// message needs; anything else is left to DecodeCanonical.
func scanMessage(sc *transcript.Scanner, m *message.Message) bool {
	*m = message.Message{}
	if !sc.Open('{') {
		return false
	}
	var have int
	for first := true; ; first = false {
		name, more, ok := sc.Member(first)
		if !ok {
			return false
		}
		if !more {
			break
		}
		bit := 0
		switch name {
		case "role":
			bit = 1
			var role string
			role, ok = sc.String()
			m.Role = message.Role(role)
		case "content":
			bit = 2
			m.Content, ok = sc.String()
		case "toolCallId":
			bit = 4
			m.ToolCallID, ok = sc.String()
		case "name":
			bit = 8
			m.Name, ok = sc.String()
		case "isError":
			bit = 16
			ok = sc.Bool(&m.IsError)
		case "continuation":
			bit = 32
			ok = sc.Bool(&m.Continuation)
		}
		if !ok || bit == 0 || have&bit != 0 {
			return false
		}
		have |= bit
	}
	// Content is required; a message that fails Validate goes the careful
	// way, which says why.
	return have&2 != 0 && m.Validate() == nil
}
