package history

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/foliodev/folio/transcript"
	"github.com/go-json-experiment/json/jsontext"
)

// FuzzReadLog feeds arbitrary record lines after a header of either version.
// The reader must never panic, must be deterministic, must report every line
// it did not apply, and must keep everything it reads valid: the document it
// returns re-encodes and reads back to the same document.
func FuzzReadLog(f *testing.F) {
	f.Add(uint8(3), []byte(goodMsg+"\n"))
	f.Add(uint8(3), []byte(`{"type":"ui-append","at":"2026-03-04T05:06:08.000Z","entries":[{"id":"a","content":{"kind":"user","text":"x"},"timestamp":"2026-03-04T05:06:07.000Z"}]}`+"\n"))
	f.Add(uint8(3), []byte(`{"type":"ui-transcript","at":"2026-03-04T05:06:08.000Z","entries":[]}`+"\n"+`{"type":"rewrite","at":"x"}`))
	f.Add(uint8(3), []byte(`{"type":"ui-append","at":"2026-03-04T05:06:08.000Z","entries":[{"id":"a","con`))
	f.Add(uint8(2), legacyLog()[bytes.IndexByte(legacyLog(), '\n')+1:])
	f.Add(uint8(3), []byte("not json\n{}\n[]\n\"s\"\n{\"type\":7}\n"))
	f.Add(uint8(3), []byte(`{"type":"ui-open","at":"2026-03-04T05:06:08.000Z","entries":[{"id":"s","content":{"kind":"agent","markdown":"par"},"timestamp":"2026-03-04T05:06:07.000Z"}]}`+"\n"+
		`{"type":"ui-open","at":"2026-03-04T05:06:09.000Z","entries":[]}`+"\n"))
	f.Add(uint8(3), []byte(branchSeed))
	f.Fuzz(func(t *testing.T, version uint8, body []byte) {
		header := v3Header
		if version%2 == 0 {
			header = `{"type":"conversation","version":2,"conversationId":"c1"}`
		}
		data := append([]byte(header+"\n"), body...)
		c1, err := Read(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("a valid header must always read: %v", err)
		}
		c2, _ := Read(bytes.NewReader(data))
		if c1.Document.Len() != c2.Document.Len() || len(c1.Problems) != len(c2.Problems) || len(c1.Messages) != len(c2.Messages) {
			t.Fatal("reading twice differs")
		}
		for _, p := range c1.Problems {
			if p.Line < 1 || p.Msg == "" {
				t.Fatalf("problem without a place or text: %+v", p)
			}
		}
		// Whatever was accepted writes back as a log that reads the same.
		var out []byte
		out = appendHeader(out, Header{Version: 3, ConversationID: "c1", StartedAt: time.Unix(0, 0)})
		out, err = appendUIRecord(out, TypeUITranscript, time.Unix(0, 0), entriesFrom(c1.Document, 0, c1.Document.Len()))
		if err != nil {
			t.Fatalf("accepted document does not encode: %v", err)
		}
		for _, m := range c1.Messages {
			if out, err = appendMessageRecord(out, time.Unix(0, 0), m); err != nil {
				t.Fatal(err)
			}
		}
		back, err := Read(bytes.NewReader(out))
		if err != nil || len(back.Problems) != 0 {
			t.Fatalf("re-encoded log: %v %v\n%s", err, back.Problems, out)
		}
		if back.Document.Len() != c1.Document.Len() || len(back.Messages) != len(c1.Messages) {
			t.Fatalf("round trip lost records")
		}
		for i := range c1.Document.Len() {
			if back.Document.Fingerprint(i) != c1.Document.Fingerprint(i) {
				t.Fatalf("entry %d changed in the round trip", i)
			}
		}
	})
}

// FuzzLegacyEntries feeds arbitrary entries arrays to the version 2 decoder.
// It must never panic; accepted entries are valid, carry no escape
// sequences, and have the deterministic IDs.
func FuzzLegacyEntries(f *testing.F) {
	f.Add([]byte(`[{"type":"user","message":"hi"}]`))
	f.Add([]byte(`[{"type":"streamContent","message":"\u001b[1mbold\u001b[0m"},{"type":"warn","message":"\u001b]8;;x\u0007l\u001b]8;;\u0007"}]`))
	f.Add([]byte(`[{"type":"info","message":42}]`))
	f.Add([]byte(`[{"type":"x","message":"\u009b31mred","extra":1}]`))
	f.Add([]byte(`{}`))
	f.Add([]byte("[\"\x1b[\"]"))
	f.Add([]byte(`[{"type":"info","message":"\u009d8;;x\u0007l\u009d8;;\u009c end"},{"id":"s","content":{"kind":"user","text":"v3"},"timestamp":"2026-01-01T00:00:00Z"}]`))
	f.Add([]byte(`[{"type":"toolResult","message":"x"}]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		es, p := decodeLegacyEntries(raw, 7, at)
		if p != nil {
			if es != nil || p.Msg == "" {
				t.Fatalf("rejection with entries or without text: %+v", p)
			}
			return
		}
		for i, e := range es {
			if err := e.Validate(); err != nil {
				t.Fatalf("entry %d invalid: %v", i, err)
			}
			if e.ID != "legacy:7:"+itoa(i) {
				// A version 3 entry under a version 2 header keeps its own
				// ID and facts; it must be what the strict decoder reads.
				if _, err := transcript.EncodeEntry(e); err != nil {
					t.Fatalf("structured entry %d does not encode: %v", i, err)
				}
				continue
			}
			if !e.Timestamp.Equal(at) {
				t.Fatalf("entry %d: id %s ts %v", i, e.ID, e.Timestamp)
			}
			var text string
			switch c := e.Content.(type) {
			case transcript.User:
				text = c.Text
			case transcript.Notice:
				text = c.Text
			}
			if strings.ContainsAny(text, "\x1b\u009b\u009d") {
				t.Fatalf("escape left in %q", text)
			}
			if _, err := transcript.EncodeEntry(e); err != nil && utf8.ValidString(text) {
				t.Fatalf("entry %d does not encode: %v", i, err)
			}
		}
	})
}

// FuzzEntryDecoderAgrees checks that the reader's one-pass entry decoder
// accepts exactly what transcript.DecodeEntry accepts, with the same facts.
func FuzzEntryDecoderAgrees(f *testing.F) {
	f.Add([]byte(`{"id":"a","content":{"kind":"user","text":"x"},"timestamp":"2026-03-04T05:06:07.000Z"}`))
	f.Add([]byte(`{"content":{"kind":"notice","text":"x","tone":"info"},"timestamp":"2026-03-04T05:06:07Z","id":"n"}`))
	f.Add([]byte(`{"id":"a","content":{"text":"x","kind":"user"},"timestamp":"2026-03-04T05:06:07.000Z","x":1}`))
	f.Add([]byte(`{"id":"a","id":"b","content":{"kind":"user","text":"x"},"timestamp":"2026-03-04T05:06:07.000Z"}`))
	f.Add([]byte(`{"id":5,"content":{},"timestamp":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		want, werr := transcript.DecodeEntry(raw)
		for _, fast := range []bool{true, false} {
			var dec jsontext.Decoder
			dec.Reset(bytes.NewBuffer(raw))
			got, _, gerr := decodeEntry(&dec, fast)
			if gerr == errSlowPath {
				if werr == nil {
					t.Fatalf("fast path gave up on an entry transcript accepts")
				}
				continue
			}
			if gerr == nil {
				if _, err := dec.ReadToken(); err != io.EOF {
					gerr = errors.New("trailing data")
				}
			}
			if (gerr == nil) != (werr == nil) {
				t.Fatalf("fast=%v: one-pass: %v; transcript: %v", fast, gerr, werr)
			}
			if gerr == nil && transcript.FingerprintOf(got) != transcript.FingerprintOf(want) {
				t.Fatalf("fast=%v: facts differ: %+v vs %+v", fast, got, want)
			}
		}
	})
}

// branchSeed forks, wraps and switches heads, with one bad record of each
// kind in between.
const branchSeed = `{"type":"ui-append","at":"2026-03-04T05:06:08.000Z","entries":[{"id":"a","content":{"kind":"user","text":"x"},"timestamp":"2026-03-04T05:06:07.000Z"}]}
{"type":"branch","at":"2026-03-04T05:06:08.000Z","branch":"b1","parent":"main","afterEntry":"a","afterMessage":0,"title":"t"}
{"type":"branch","at":"2026-03-04T05:06:08.000Z","branch":"b2","parent":"b1","afterMessage":0}
{"type":"on-branch","at":"2026-03-04T05:06:08.000Z","branch":"b1","record":{"type":"ui-open","at":"2026-03-04T05:06:08.000Z","entries":[{"id":"s","content":{"kind":"agent","markdown":"p"},"timestamp":"2026-03-04T05:06:07.000Z"}]}}
{"type":"on-branch","at":"2026-03-04T05:06:08.000Z","branch":"b1","record":{"type":"message","at":"x","message":{"role":"user","content":"y"}}}
{"type":"on-branch","at":"2026-03-04T05:06:08.000Z","branch":"b3","record":{"type":"rewrite","at":"x"}}
{"type":"on-branch","at":"2026-03-04T05:06:08.000Z","branch":"b1","record":[1]}
{"type":"head","at":"2026-03-04T05:06:08.000Z","branch":"b2"}
{"type":"head","at":"2026-03-04T05:06:08.000Z","branch":"b1"}
`
