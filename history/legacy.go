package history

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	"github.com/foliodev/folio/transcript"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// legacyEntry is a version 2 UI entry: rendered text and the name of the
// output kind that produced it.
type legacyEntry struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// legacyUI applies a version 2 UI record: each {type, message} entry becomes
// a version 3 entry with the deterministic ID legacy:{lineIndex}:{entryIndex}
// and the record's instant. Like version 3, the record is one batch.
func (r *reader) legacyUI(lineIndex int, rec *rawRecord, reject func(*Problem) lineInfo) lineInfo {
	if rec.members&memEntries == 0 {
		return reject(&Problem{Entry: -1, Pointer: "/entries", Msg: "entries is missing"})
	}
	at := looseInstant(rec.at)
	entries, p := DecodeLegacyEntries(rec.entriesRaw, lineIndex, at)
	if p != nil {
		return reject(p)
	}
	if rec.typ == TypeUITranscript {
		r.entries = entries
	} else {
		r.entries = append(r.entries, entries...)
	}
	r.seen(at)
	return lineInfo{kind: kindOf(rec.typ), accepted: true, legacy: entries, at: at}
}

// DecodeLegacyEntries decodes the entries array of a version 2 UI record on
// the given line (counted from 0, the header being line 0). Each entry must
// be exactly {"type": string, "message": string}. A "user" entry becomes a
// user entry; any other becomes a notice whose tone is the old type when that
// is a notice tone, and "log" otherwise ("streamContent" included). Terminal
// styling is stripped. On failure it returns the problem with its entry
// index and pointer, and no entries.
func DecodeLegacyEntries(raw []byte, lineIndex int, at time.Time) ([]transcript.Entry, *Problem) {
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
		var le legacyEntry
		if err := json.Unmarshal(v, &le, json.RejectUnknownMembers(true)); err != nil {
			p, msg := pointerOf(err)
			return nil, &Problem{Entry: i, Pointer: ptr + p, Msg: msg}
		}
		if le.Type == "" {
			return nil, &Problem{Entry: i, Pointer: ptr + "/type", Msg: "type is missing or empty"}
		}
		e := transcript.Entry{ID: prefix + strconv.Itoa(i), Content: legacyContent(le), Timestamp: at}
		out = append(out, e)
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, &Problem{Entry: -1, Pointer: "/entries", Msg: err.Error()}
	}
	return out, nil
}

func legacyContent(le legacyEntry) transcript.Content {
	text := StripANSI(le.Message)
	if le.Type == "user" {
		return transcript.User{Text: text}
	}
	tone := transcript.Tone(le.Type)
	switch tone {
	case transcript.ToneInfo, transcript.ToneSuccess, transcript.ToneWarn,
		transcript.ToneError, transcript.ToneDebug, transcript.ToneLog:
	default:
		tone = transcript.ToneLog
	}
	return transcript.Notice{Text: text, Tone: tone}
}

// StripANSI removes terminal escape sequences: CSI (colours, cursor moves),
// OSC (titles, hyperlinks), the DCS/SOS/PM/APC strings, and two-byte escapes.
// Other text, including newlines and tabs, is kept.
func StripANSI(s string) string {
	if !strings.ContainsAny(s, "\x1b\u009b") {
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
		case strings.HasPrefix(s[i:], "\u009b"): // C1 CSI
			i = skipCSI(s, i+len("\u009b"))
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// skipEscape skips the sequence whose introducer follows ESC at s[i].
func skipEscape(s string, i int) int {
	switch s[i] {
	case '[':
		return skipCSI(s, i+1)
	case ']', 'P', 'X', '^', '_':
		// A string terminated by BEL or ST (ESC \); unterminated runs to the end.
		for j := i + 1; j < len(s); j++ {
			if s[j] == 0x07 {
				return j + 1
			}
			if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
				return j + 2
			}
		}
		return len(s)
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

// looseInstant reads a timestamp as legacy logs wrote them and returns it in
// UTC: an ISO instant with an offset, a date ("2026-01-01", midnight UTC), a
// date and time without an offset (taken as UTC), or epoch milliseconds.
// Anything else is the Unix epoch, so an unreadable time never blocks a read.
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
	for _, l := range looseLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 && n < 1e15 {
		return time.UnixMilli(n), true
	}
	return time.Time{}, false
}
