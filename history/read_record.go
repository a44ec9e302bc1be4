package history

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// record applies one record line and returns what it was.
func (r *reader) record(lineNo int, line []byte, unterminated bool) lineInfo {
	human := lineNo + 1
	rec, err := r.decodeRecord(line)
	if err != nil {
		if unterminated {
			r.problem(Problem{Kind: ProblemTorn, Line: human, Entry: -1, Msg: "incomplete last line (an interrupted write); ignored"})
			return lineInfo{kind: lineTorn}
		}
		r.problem(Problem{Kind: ProblemUnreadable, Line: human, Entry: -1, Msg: "not a JSON record, kept verbatim: " + err.Error()})
		r.conv.Unknown = append(r.conv.Unknown, RawLine{Line: human, Bytes: bytes.Clone(line)})
		return lineInfo{kind: lineUnreadable}
	}
	reject := func(p *Problem) lineInfo {
		p.Kind, p.Line, p.Type = ProblemRejected, human, rec.typ
		r.problem(*p)
		return lineInfo{kind: kindOf(rec.typ)}
	}
	if rec.members&memType == 0 {
		if rec.bad != nil {
			return reject(rec.bad)
		}
		r.problem(Problem{Kind: ProblemUnreadable, Line: human, Entry: -1, Pointer: "/type", Msg: "record has no type, kept verbatim"})
		r.conv.Unknown = append(r.conv.Unknown, RawLine{Line: human, Bytes: bytes.Clone(line)})
		return lineInfo{kind: lineUnreadable}
	}
	allowed, known := allowedMembers[rec.typ]
	if known && r.version == 2 && isBranchType(rec.typ) {
		known = false // not a version 2 record type
	}
	if !known {
		r.problem(Problem{Kind: ProblemUnknown, Line: human, Type: rec.typ, Entry: -1, Msg: "unknown record type, kept verbatim"})
		r.conv.Unknown = append(r.conv.Unknown, RawLine{Line: human, Type: rec.typ, Bytes: bytes.Clone(line)})
		return lineInfo{kind: lineUnknown}
	}
	if rec.bad != nil {
		return reject(rec.bad)
	}
	if extra := rec.members &^ allowed; extra != 0 {
		return reject(&Problem{Entry: -1, Pointer: "/" + memberName(extra), Msg: "unknown field for this record type"})
	}
	// A record without at is kept at the Unix epoch, as Jazz reads it.

	switch rec.typ {
	case TypeUITranscript, TypeUIAppend, TypeUIOpen:
		r.uiLines++
		if r.version == 2 {
			if rec.typ == TypeUIOpen {
				// Not a version 2 record type: keep it like any unknown one.
				r.uiLines--
				r.problem(Problem{Kind: ProblemUnknown, Line: human, Type: rec.typ, Entry: -1, Msg: "not a version 2 record type, kept verbatim"})
				r.conv.Unknown = append(r.conv.Unknown, RawLine{Line: human, Type: rec.typ, Bytes: bytes.Clone(line)})
				return lineInfo{kind: lineUnknown}
			}
			return r.legacyUI(lineNo, rec, reject)
		}
		return r.ui(rec, reject)
	case TypeMessage:
		if rec.members&memMessage == 0 {
			return reject(&Problem{Entry: -1, Pointer: "/message", Msg: "message is missing"})
		}
		m, err := rec.msg, error(nil)
		if rec.msgDone {
			err = m.Validate()
		} else {
			m, err = message.Decode(rec.message)
		}
		if err != nil && m.Role == message.System {
			// Jazz wrote system prompts in an older format and skips them
			// when reading; so does folio. The line stays in the file.
			r.seen(looseInstant(rec.at))
			return lineInfo{kind: lineMessage, accepted: true}
		}
		if err != nil {
			ptr, msg := pointerOf(err)
			return reject(&Problem{Entry: -1, Pointer: "/message" + ptr, Msg: msg})
		}
		at := looseInstant(rec.at)
		if r.idsOnly {
			// A page index counts messages and finds them in the log by
			// their lines; it never reads them back from the reader.
			m = message.Message{Role: ownRole(m.Role)}
		}
		r.conv.Messages = append(r.conv.Messages, m)
		r.msgAt = append(r.msgAt, at)
		r.seen(at)
		return lineInfo{kind: lineMessage, accepted: true}
	case TypeMeta:
		if rec.title != "" {
			r.conv.Title = rec.title
		}
		// endedAt, which version 2 wrote, is the time of a save, not of
		// anything said: "updated" is the latest record's at instead.
		if u := rec.updatedAt; u != "" {
			if t := looseInstant(u); t.After(r.metaTime) {
				r.metaTime = t
			}
		}
		r.seen(looseInstant(rec.at))
		return lineInfo{kind: lineMeta, accepted: true}
	case TypeRewrite:
		// Nothing holds on to the list until the read ends (a fork
		// clones it), so the next messages reuse its storage instead of
		// growing a new list after every compaction.
		clear(r.conv.Messages)
		r.conv.Messages = r.conv.Messages[:0]
		r.msgAt = r.msgAt[:0]
		r.seen(looseInstant(rec.at))
		return lineInfo{kind: lineRewrite, accepted: true}
	case TypeBranch:
		return r.fork(rec, reject)
	case TypeOnBranch:
		return r.onBranch(lineNo, rec, reject)
	case TypeHead:
		return r.setHead(rec, reject)
	}
	// TypeConversation: a second header.
	return reject(&Problem{Entry: -1, Pointer: "/type", Msg: "a conversation header may only be the first line"})
}

func (r *reader) seen(t time.Time) {
	if t.After(r.lastAt) {
		r.lastAt = t
	}
}

// ui applies a version 3 UI record as one batch.
func (r *reader) ui(rec *rawRecord, reject func(*Problem) lineInfo) lineInfo {
	snapshot, open := rec.typ == TypeUITranscript, rec.typ == TypeUIOpen
	at := looseInstant(rec.at)
	if rec.members&memEntries == 0 {
		return reject(&Problem{Entry: -1, Pointer: "/entries", Msg: "entries is missing"})
	}
	if rec.entriesBad != nil {
		r.reserveBatch(rec)
		return reject(rec.entriesBad)
	}
	if r.idsOnly {
		// The IDs outlive the record in the documents and the ID set: a
		// copy of each keeps the memory the rest was decoded into free.
		for i := range rec.entries {
			rec.entries[i].ID = strings.Clone(rec.entries[i].ID)
		}
	}
	if i, j, dup := repeated(rec.entries); dup {
		r.reserveBatch(rec)
		return reject(&Problem{Entry: i, Pointer: "/entries/" + strconv.Itoa(i) + "/id",
			Msg: fmt.Sprintf("id %q repeats entry %d of the same batch", rec.entries[i].ID, j)})
	}
	if len(rec.entries) == 1 && !snapshot && !open {
		// One set operation for the common one-entry append: adding the
		// ID changes nothing when it is already there.
		e := rec.entries[0]
		if !r.ids.add(e.ID) {
			r.reserveBatch(rec)
			return reject(&Problem{Entry: 0, Pointer: "/entries/0/id",
				Msg: fmt.Sprintf("id %q is already in the document", e.ID)})
		}
		if !r.noEntries {
			r.entries = append(r.entries, r.hold(e))
		}
		r.tail = nil
		r.seen(at)
		return lineInfo{kind: kindOf(rec.typ), accepted: true}
	}
	for i, e := range rec.entries {
		if snapshot {
			continue
		}
		if r.ids.has(e.ID) {
			r.reserveBatch(rec)
			return reject(&Problem{Entry: i, Pointer: "/entries/" + strconv.Itoa(i) + "/id",
				Msg: fmt.Sprintf("id %q is already in the document", e.ID)})
		}
	}
	switch {
	case open:
		// The provisional tail is replaced whole and stays out of r.ids:
		// its entries are written again, as settled, once they settle.
		r.tail = r.holdAll(make([]transcript.Entry, 0, len(rec.entries)), rec.entries)
		r.seen(at)
		return lineInfo{kind: lineUIOpen, accepted: true}
	case snapshot:
		r.entries = nil
		if !r.noEntries {
			r.entries = r.holdAll(make([]transcript.Entry, 0, len(rec.entries)), rec.entries)
		}
		r.ids = newIDSet(len(rec.entries))
		clear(r.reserved)
	case !r.noEntries:
		r.entries = r.holdAll(r.entries, rec.entries)
	}
	r.tail = nil
	for _, e := range rec.entries {
		r.ids.add(e.ID)
	}
	r.seen(at)
	return lineInfo{kind: kindOf(rec.typ), accepted: true}
}

// repeated finds the first entry whose ID an earlier entry of the same batch
// has: entry i repeats entry j.
func repeated(es []transcript.Entry) (i, j int, dup bool) {
	if len(es) <= 16 {
		for i := range es {
			for j := range i {
				if es[i].ID == es[j].ID {
					return i, j, true
				}
			}
		}
		return 0, 0, false
	}
	seen := make(map[string]int, len(es))
	for i, e := range es {
		if j, ok := seen[e.ID]; ok {
			return i, j, true
		}
		seen[e.ID] = i
	}
	return 0, 0, false
}

// reserveBatch reserves every readable ID of a rejected batch.
func (r *reader) reserveBatch(rec *rawRecord) {
	for _, e := range rec.entries {
		r.reserved[e.ID] = struct{}{}
	}
	for _, id := range rec.failedIDs {
		r.reserved[id] = struct{}{}
	}
}

func isUI(typ string) bool {
	return typ == TypeUITranscript || typ == TypeUIAppend || typ == TypeUIOpen
}

// ownRole is role in memory of its own: a role read in place points into
// the line (or the block the line was copied to), which a page index's
// reader would otherwise keep alive for as long as it keeps the message.
func ownRole(role message.Role) message.Role {
	for _, r := range []message.Role{message.System, message.User, message.Assistant, message.Tool} {
		if role == r {
			return r
		}
	}
	return message.Role(strings.Clone(string(role)))
}
