package history

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
	"github.com/go-json-experiment/json/jsontext"
)

func kindOf(typ string) lineKind {
	switch typ {
	case TypeMessage:
		return lineMessage
	case TypeMeta:
		return lineMeta
	case TypeRewrite:
		return lineRewrite
	case TypeUITranscript:
		return lineUITranscript
	case TypeUIAppend:
		return lineUIAppend
	case TypeUIOpen:
		return lineUIOpen
	case TypeBranch:
		return lineBranch
	case TypeHead:
		return lineHead
	}
	return lineUnknown
}

var allowedMembers = map[string]int{
	TypeConversation: memType,
	TypeMessage:      memType | memAt | memMessage,
	TypeMeta:         memType | memAt | memTitle | memUpdatedAt | memEndedAt,
	TypeRewrite:      memType | memAt,
	TypeUITranscript: memType | memAt | memEntries,
	TypeUIAppend:     memType | memAt | memEntries,
	TypeUIOpen:       memType | memAt | memEntries,
	TypeBranch:       memType | memAt | memBranch | memParent | memAfterEntry | memAfterMessage | memTitle,
	TypeOnBranch:     memType | memAt | memBranch | memRecord,
	TypeHead:         memType | memAt | memBranch,
}

var memberNames = []string{"type", "at", "entries", "message", "title", "updatedAt", "endedAt",
	"branch", "parent", "afterEntry", "afterMessage", "record"}

// memberBit returns a known member's bit, or 0.
func memberBit(name string) int {
	for i, n := range memberNames {
		if n == name {
			return 1 << i
		}
	}
	return 0
}

// memberName returns the name of the lowest member bit set.
func memberName(bits int) string {
	for i, n := range memberNames {
		if bits&(1<<i) != 0 {
			return n
		}
	}
	return ""
}

// decodeRecord reads one line in a single pass. A returned error means the
// line is not one JSON object; member-level faults land in rec.bad.
func (r *reader) decodeRecord(line []byte) (*rawRecord, error) {
	if r.scan {
		if rec, ok := r.scanRecord(line); ok {
			return rec, nil
		}
	}
	r.inPlace = false
	rec, err := r.decodeRecordWith(line, true)
	if err == errSlowPath {
		rec, err = r.decodeRecordWith(line, false)
	}
	return rec, err
}

func (r *reader) decodeRecordWith(line []byte, fast bool) (*rawRecord, error) {
	dec := &r.dec
	dec.Reset(bytes.NewBuffer(line))
	// The record and its entries slice are reused from line to line; ui
	// copies out what it keeps.
	rec := &r.rec
	*rec = rawRecord{entries: rec.entries[:0], spans: rec.spans[:0]}
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	if tok.Kind() != '{' {
		return nil, fmt.Errorf("a record must be a JSON object, found %s", tok.Kind())
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		name := tok.String()
		bit := memberBit(name)
		if bit == 0 {
			if rec.bad == nil {
				rec.bad = &Problem{Entry: -1, Pointer: "/" + escapePointerToken(name), Msg: "unknown field"}
			}
			if err := dec.SkipValue(); err != nil {
				return nil, err
			}
			continue
		}
		rec.members |= bit
		switch bit {
		case memEntries:
			if isUI(rec.typ) && r.version == 3 && dec.PeekKind() == '[' {
				if err := r.decodeEntries(dec, rec, fast); err != nil {
					return nil, err
				}
				continue
			}
			v, err := dec.ReadValue()
			if err != nil {
				return nil, err
			}
			rec.entriesRaw = bytes.Clone(v)
			rec.entriesAt = int(dec.InputOffset()) - len(v)
		case memMessage:
			if fast && rec.typ == TypeMessage {
				if err := message.DecodeCanonical(dec, &rec.msg); err != nil {
					return nil, errSlowPath
				}
				rec.msgDone = true
				continue
			}
			v, err := dec.ReadValue()
			if err != nil {
				return nil, err
			}
			rec.message = bytes.Clone(v)
		case memAfterMessage:
			v, err := dec.ReadValue()
			if err != nil {
				return nil, err
			}
			n, perr := strconv.Atoi(string(v))
			if v.Kind() != '0' || perr != nil || n < 0 {
				if rec.bad == nil {
					rec.bad = &Problem{Entry: -1, Pointer: "/afterMessage", Msg: "afterMessage must be a whole number, not negative"}
				}
				continue
			}
			rec.afterMessage = n
		case memRecord:
			v, err := dec.ReadValue()
			if err != nil {
				return nil, err
			}
			if v.Kind() != '{' {
				if rec.bad == nil {
					rec.bad = &Problem{Entry: -1, Pointer: "/record", Msg: "record must be a JSON object"}
				}
				continue
			}
			rec.record = bytes.Clone(v)
			rec.recordAt = int(dec.InputOffset()) - len(v)
		default:
			if dec.PeekKind() != '"' {
				if err := dec.SkipValue(); err != nil {
					return nil, err
				}
				if rec.bad == nil {
					rec.bad = &Problem{Entry: -1, Pointer: "/" + name, Msg: name + " must be a string"}
				}
				continue
			}
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			s := tok.String()
			switch bit {
			case memType:
				rec.typ = s
			case memAt:
				rec.at = s
			case memTitle:
				rec.title = s
			case memUpdatedAt:
				rec.updatedAt = s
			case memEndedAt:
				rec.endedAt = s
			case memBranch:
				rec.branch = s
			case memParent:
				rec.parent = s
			case memAfterEntry:
				rec.afterEntry = s
			}
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		if err == nil {
			err = fmt.Errorf("more than one JSON value on the line")
		}
		return nil, err
	}
	if rec.entriesRaw != nil && isUI(rec.typ) && r.version == 3 {
		var sub jsontext.Decoder
		sub.Reset(bytes.NewBuffer(rec.entriesRaw))
		if sub.PeekKind() != '[' {
			rec.bad = &Problem{Entry: -1, Pointer: "/entries", Msg: "entries must be an array"}
		} else if err := r.decodeEntries(&sub, rec, false); err != nil {
			return nil, err
		} else {
			for i := range rec.spans {
				rec.spans[i].start += rec.entriesAt
				rec.spans[i].end += rec.entriesAt
			}
		}
	}
	return rec, nil
}

// decodeEntries reads a version 3 entries array from dec, decoding each
// entry once. The first invalid entry is kept in rec.entriesBad; reading
// continues so every readable ID can be reserved if the batch is rejected.
func (r *reader) decodeEntries(dec *jsontext.Decoder, rec *rawRecord, fast bool) error {
	if _, err := dec.ReadToken(); err != nil { // '['
		return err
	}
	for i := 0; dec.PeekKind() != ']'; i++ {
		at := int(dec.InputOffset())
		e, id, err := decodeEntry(dec, fast)
		var fe *transcript.FieldError
		if err != nil && !errors.As(err, &fe) {
			return err // not JSON: the whole line is unreadable
		}
		if err != nil {
			if rec.entriesBad == nil {
				rec.entriesBad = &Problem{Entry: i, Pointer: "/entries/" + strconv.Itoa(i) + fe.Pointer, Msg: fe.Msg}
			}
			if id != "" {
				rec.failedIDs = append(rec.failedIDs, id)
			}
			continue
		}
		rec.entries = append(rec.entries, e)
		rec.spans = append(rec.spans, span{at, int(dec.InputOffset())})
	}
	_, err := dec.ReadToken() // ']'
	return err
}

// decodeHeader reads line 0. Members folio does not know are kept in
// Extra, and the IDs Jazz needs but the header lacks are named in Missing.
func decodeHeader(line []byte) (Header, error) {
	var h Header
	var dec jsontext.Decoder
	dec.Reset(bytes.NewBuffer(line))
	fail := func(format string, args ...any) (Header, error) {
		return Header{}, fmt.Errorf("%w: line 1: %s", ErrNoHeader, fmt.Sprintf(format, args...))
	}
	tok, err := dec.ReadToken()
	if err != nil || tok.Kind() != '{' {
		return fail("not a JSON object")
	}
	var typ, started string
	var haveVersion bool
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return fail("%v", err)
		}
		name := tok.String()
		v, err := dec.ReadValue()
		if err != nil {
			return fail("%v", err)
		}
		str := func() (string, error) {
			if v.Kind() != '"' {
				return "", fmt.Errorf("/%s must be a string", name)
			}
			s, err := jsontext.AppendUnquote(nil, v)
			return string(s), err
		}
		switch name {
		case "type":
			typ, err = str()
		case "version":
			n, perr := strconv.Atoi(string(v))
			if v.Kind() != '0' || perr != nil {
				return fail("/version must be a whole number, got %s", v)
			}
			h.Version, haveVersion = n, true
		case "conversationId":
			h.ConversationID, err = str()
		case "startedAt":
			started, err = str()
		case "title":
			h.Title, err = str()
		case "agentId":
			h.AgentID, err = str()
		default:
			h.Extra = append(h.Extra, Member{Name: name, Value: bytes.Clone(v)})
		}
		if err != nil {
			return fail("%v", err)
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return fail("%v", err)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return fail("more than one JSON value on the line")
	}
	if typ != TypeConversation {
		return fail("/type must be %q, got %q", TypeConversation, typ)
	}
	if h.AgentID == "" {
		h.Missing = append(h.Missing, "agentId")
	}
	if h.ConversationID == "" {
		h.Missing = append(h.Missing, "conversationId")
	}
	if !haveVersion {
		return fail("/version is missing")
	}
	if h.Version > Version {
		return Header{}, fmt.Errorf("%w (the log is version %d; this folio reads up to %d)", ErrNewerVersion, h.Version, Version)
	}
	if h.Version < 2 {
		return fail("/version %d is not supported (2 and 3 are)", h.Version)
	}
	if h.Version == 2 {
		// Version 2 headers were written by Jazz; read what folio knows and
		// keep the rest, without judging it.
		h.StartedAt = looseInstant(started)
		return h, nil
	}
	h.StartedAt, err = transcript.ParseInstant(started)
	if err != nil {
		return fail("/startedAt: %v", err)
	}
	// Members folio does not know (Jazz writes titleFormat, older Jazz
	// cwd) are kept in Extra and written back on rewrite.
	return h, nil
}
