package history

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/foliodev/folio/transcript"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// legacyKinds are the output kinds a version 2 UI entry may name: Jazz's
// terminal output kinds.
var legacyKinds = map[string]bool{"user": true, "info": true, "success": true, "warn": true,
	"error": true, "debug": true, "log": true, "streamContent": true}

// legacyUI applies a version 2 UI record. Each entry is either a version 3
// entry, taken as it is, or a legacy {type, message} entry, which becomes a
// version 3 entry with the deterministic ID legacy:{lineIndex}:{entryIndex}
// and the record's instant. The record is one batch, with the same rules as
// version 3.
func (r *reader) legacyUI(lineIndex int, rec *rawRecord, reject func(*Problem) lineInfo) lineInfo {
	if rec.members&memEntries == 0 {
		return reject(&Problem{Entry: -1, Pointer: "/entries", Msg: "entries is missing"})
	}
	at := looseInstant(rec.at)
	entries, p := decodeLegacyEntries(rec.entriesRaw, lineIndex, at)
	if p != nil {
		return reject(p)
	}
	rec.entries = entries
	info := r.ui(rec, reject)
	if info.accepted {
		info.legacy, info.at, info.atText = entries, at, rec.at
		info.hasAt = rec.members&memAt != 0
	}
	return info
}

// decodeLegacyEntries decodes the entries array of a version 2 UI record on
// the given line (counted from 0, the header being line 0). An entry that is
// a valid version 3 entry is kept as it is. Otherwise it must be exactly
// {"type", "message"} with a string message and a type that is one of
// user, info, success, warn, error, debug, log and streamContent: "user"
// becomes a user entry, streamContent a notice with tone log, and the
// others a notice with that tone. Terminal styling is stripped. On failure
// it returns the problem with its entry index and pointer, and no entries.
func decodeLegacyEntries(raw []byte, lineIndex int, at time.Time) ([]transcript.Entry, *Problem) {
	var dec jsontext.Decoder
	dec.Reset(bytes.NewBuffer(raw))
	if dec.PeekKind() != '[' {
		return nil, &Problem{Entry: -1, Pointer: "/entries", Msg: "entries must be an array"}
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, &Problem{Entry: -1, Pointer: "/entries", Msg: err.Error()}
	}
	var out []transcript.Entry
	prefix := "legacy:" + strconv.Itoa(lineIndex) + ":"
	for i := 0; dec.PeekKind() != ']'; i++ {
		ptr := "/entries/" + strconv.Itoa(i)
		v, err := dec.ReadValue()
		if err != nil {
			return nil, &Problem{Entry: i, Pointer: ptr, Msg: err.Error()}
		}
		c, legacy, p := legacyContent(v)
		if legacy {
			if p != nil {
				p.Entry, p.Pointer = i, ptr+p.Pointer
				return nil, p
			}
			out = append(out, transcript.Entry{ID: prefix + strconv.Itoa(i), Content: c, Timestamp: at})
			continue
		}
		e, err := transcript.DecodeEntry(v)
		if err != nil {
			p, msg := pointerOf(err)
			return nil, &Problem{Entry: i, Pointer: ptr + p, Msg: msg}
		}
		out = append(out, e)
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, &Problem{Entry: -1, Pointer: "/entries", Msg: err.Error()}
	}
	return out, nil
}

// legacyContent reads v as a legacy {type, message} entry. legacy is false
// when v does not look like one (it has members other than type and
// message), so the caller reads it as a version 3 entry instead.
func legacyContent(v jsontext.Value) (c transcript.Content, legacy bool, p *Problem) {
	var m map[string]jsontext.Value
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, false, nil
	}
	_, hasID := m["id"]
	_, hasContent := m["content"]
	if hasID || hasContent {
		return nil, false, nil // a version 3 entry, valid or not
	}
	// In sorted order, so the member named is the same at every read.
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k != "type" && k != "message" {
			return nil, true, &Problem{Pointer: "/" + escapePointerToken(k), Msg: "a legacy entry has only type and message"}
		}
	}
	var typ, msg string
	if err := json.Unmarshal(m["type"], &typ); err != nil || !legacyKinds[typ] {
		return nil, true, &Problem{Pointer: "/type", Msg: fmt.Sprintf("type %s is not one of user, info, success, warn, error, debug, log, streamContent", m["type"])}
	}
	if err := json.Unmarshal(m["message"], &msg); err != nil || m["message"] == nil {
		return nil, true, &Problem{Pointer: "/message", Msg: "message must be a string"}
	}
	text := stripANSI(msg)
	switch typ {
	case "user":
		return transcript.User{Text: text}, true, nil
	case "streamContent":
		return transcript.Notice{Text: text, Tone: transcript.ToneLog}, true, nil
	}
	return transcript.Notice{Text: text, Tone: transcript.Tone(typ)}, true, nil
}

// stripANSI removes terminal escape sequences: CSI (colours, cursor moves),
// OSC (titles, hyperlinks), the DCS/SOS/PM/APC strings, and two-byte
// escapes, each introduced by ESC or by its 8-bit C1 control (U+009B CSI,
// U+009D OSC, U+0090 DCS, U+0098 SOS, U+009E PM, U+009F APC). Other text,
// including newlines and tabs, is kept.
func stripANSI(s string) string {
	if !strings.ContainsAny(s, "\x1b\u009b\u009d\u0090\u0098\u009e\u009f") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b && i+1 < len(s):
			i = skipEscape(s, i+1)
		case c == 0x1b:
			i++
		case c == 0xc2 && i+1 < len(s) && s[i+1] == 0x9b: // C1 CSI
			i = skipCSI(s, i+2)
		case c == 0xc2 && i+1 < len(s) && isC1String(s[i+1]):
			i = skipString(s, i+2)
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// isC1String reports whether U+0080+b-0x80, encoded as 0xC2 b, opens a
// control string: DCS, SOS, OSC, PM or APC.
func isC1String(b byte) bool {
	return b == 0x90 || b == 0x98 || b == 0x9d || b == 0x9e || b == 0x9f
}

// skipString skips a control string's body and its terminator: BEL, ST
// (ESC \) or the C1 ST (U+009C). An unterminated string runs to the end.
func skipString(s string, i int) int {
	for j := i; j < len(s); j++ {
		switch {
		case s[j] == 0x07:
			return j + 1
		case s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\':
			return j + 2
		case s[j] == 0xc2 && j+1 < len(s) && s[j+1] == 0x9c:
			return j + 2
		}
	}
	return len(s)
}

// skipEscape skips the sequence whose introducer follows ESC at s[i].
func skipEscape(s string, i int) int {
	switch s[i] {
	case '[':
		return skipCSI(s, i+1)
	case ']', 'P', 'X', '^', '_':
		return skipString(s, i+1)
	}
	// nF escapes carry intermediate bytes (0x20–0x2f) before a final byte
	// (0x30–0x7e). Anything else ends the sequence unconsumed, so a
	// stray ESC never eats part of a multi-byte character.
	j := i
	for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
		j++
	}
	if j < len(s) && s[j] >= 0x30 && s[j] <= 0x7e {
		return j + 1
	}
	return j
}

// skipCSI skips parameter (0x30–0x3f) and intermediate (0x20–0x2f) bytes
// and the final byte. A malformed sequence ends before the offending byte,
// which is kept.
func skipCSI(s string, i int) int {
	for i < len(s) {
		c := s[i]
		switch {
		case c >= 0x40 && c <= 0x7e:
			return i + 1
		case c >= 0x20 && c <= 0x3f:
			i++
		default:
			return i
		}
	}
	return i
}

// looseInstant reads a record's at the way Jazz does (JavaScript's
// Date.parse) and returns it in UTC: an ISO instant with an offset, a date
// ("2026-01-01", midnight UTC), a date and time without an offset (taken as
// UTC), or an RFC 1123 date. Anything else, epoch milliseconds written as
// text included, is the Unix epoch, so an unreadable time never blocks a
// read.
func looseInstant(s string) time.Time {
	t, ok := parseLoose(s)
	if !ok {
		return time.UnixMilli(0).UTC()
	}
	return t.UTC()
}

var looseLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02",
	time.RFC1123Z,
	time.RFC1123,
}

func parseLoose(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, false
	}
	if t, err := transcript.ParseInstant(s); err == nil {
		return t, true // the first layout, read the quick way when canonical
	}
	for _, l := range looseLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
