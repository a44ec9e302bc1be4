package server

import (
	"bytes"
	"testing"

	"github.com/foliodev/folio/transcript"
)

// FuzzLogItems feeds arbitrary bytes to the streaming log reader the
// snapshot capture and the follower share. It must never panic, yield only
// entries the strict codec accepts, never repeat an ID within one document,
// and consume exactly the complete lines.
func FuzzLogItems(f *testing.F) {
	hdr := `{"type":"conversation","version":3,"conversationId":"c","startedAt":"2026-01-01T00:00:00.000Z"}` + "\n"
	e := `{"id":"a","content":{"kind":"user","text":"hi"},"timestamp":"2026-01-01T00:00:00.000Z"}`
	f.Add([]byte(hdr + `{"type":"ui-append","at":"2026-01-01T00:00:00.000Z","entries":[` + e + "]}\n"))
	f.Add([]byte(hdr + `{"type":"ui-append","at":"2026-01-01T00:00:00.000Z","entries":[` + e + "," + e + "]}\n"))
	f.Add([]byte(hdr + `{"type":"ui-transcript","at":"2026-01-01T00:00:00.000Z","entries":[` + e + "]}\n" + `{"type":"ui-append","entries":[` + e + "]}\n"))
	f.Add([]byte(hdr + `{"type":"ui-append","entries":[` + e[:30]))
	f.Add([]byte(hdr + "not json\n{\"type\":\"meta\",\"title\":\"x\"}\n"))
	f.Add([]byte(`{"type":"conversation","version":2}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var scan logScan
		seen := map[string]bool{}
		for it, err := range logItems(bytes.NewReader(data), newIDSet(), &scan) {
			if err != nil {
				break
			}
			if it.Reset {
				clear(seen)
				continue
			}
			e, derr := transcript.DecodeEntry(it.Raw)
			if derr != nil || e.ID != it.ID || e.Content.Kind() != it.Kind {
				t.Fatalf("yielded an entry the codec refuses: %v", derr)
			}
			if seen[it.ID] {
				t.Fatalf("id %q yielded twice in one document", it.ID)
			}
			seen[it.ID] = true
		}
		if scan.consumed > int64(len(data)) || (scan.consumed > 0 && data[scan.consumed-1] != '\n') {
			t.Fatalf("consumed %d of %d bytes, not at a line end", scan.consumed, len(data))
		}
	})
}
