package server

import (
	"bytes"
	"testing"

	"github.com/foliodev/folio/server/pager"
	"github.com/foliodev/folio/transcript"
)

func newTestLRU() *pager.LRU { return pager.NewLRU(0) }

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
	f.Add([]byte(hdr + `{"type":"ui-append","at":"2026-01-01T00:00:00.000Z","entries":[` + e + "]}\n" +
		`{"type":"branch","at":"2026-01-01T00:00:00.000Z","branch":"b1","parent":"main","afterMessage":0}` + "\n" +
		`{"type":"on-branch","at":"2026-01-01T00:00:00.000Z","branch":"b1","record":{"type":"ui-append","at":"2026-01-01T00:00:00.000Z","entries":[` + e + "]}}\n" +
		`{"type":"head","at":"2026-01-01T00:00:00.000Z","branch":"b1"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// A branched log is read whole by package history; its head's
		// document must have what a page needs.
		if c, consumed, err := branchedRead(data); err == nil {
			if consumed > int64(len(data)) || (consumed > 0 && data[consumed-1] != '\n') {
				t.Fatalf("branched read consumed %d of %d bytes", consumed, len(data))
			}
			for _, e := range c.Document.All() {
				if _, err := transcript.EncodeEntry(e); err != nil {
					t.Fatalf("head entry does not encode: %v", err)
				}
			}
		}
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

// FuzzFrame feeds arbitrary client frames to a connection's dispatcher. It
// must never panic, and every frame must get exactly one answer (an error,
// a receipt or the request's reply), so a client is never left waiting.
func FuzzFrame(f *testing.F) {
	for _, s := range []string{
		`{"type":"ping","id":"p"}`,
		`{"type":"page","id":"x","token":"s-1","conversation":"c","anchor":"latest","direction":"before","budgetBytes":4096}`,
		`{"type":"send","id":"s","conversation":"c","commandId":"k","text":"hi","attachments":["a-1"]}`,
		`{"type":"stop","id":"s","conversation":"c","commandId":"k","turn":"u"}`,
		`{"type":"approve","id":"s","conversation":"c","commandId":"k","invocationId":"i","allow":true}`,
		`{"type":"release","id":"r","token":"s-1"}`,
		`{"type":"unfollow","id":"u","conversation":"c"}`,
		`{"type":"hello","id":"h","protocol":2}`,
		`{"type":"open","id":"o","conversation":"../x"}`,
		`[]`, `{"type":7}`, `{"type":"page","id":"x","budgetBytes":1e999}`,
	} {
		f.Add([]byte(s))
	}
	srv, err := New(Options{DataDir: f.TempDir(), TempDir: f.TempDir()})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Close() })
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &conn{srv: srv, out: make(chan outFrame, 16), closed: make(chan struct{}), opens: make(chan struct{}, 1),
			lru: nil, tokens: map[string]tokenScope{}, expired: map[string]bool{}, follows: map[string]*conv{}, hello: true}
		c.lru = newTestLRU()
		defer c.lru.Close()
		c.handle(data)
		answers := 0
		for len(c.out) > 0 {
			if fr := <-c.out; fr.closeCode == 0 { // a wrong hello also queues a close
				answers++
			}
		}
		if answers != 1 {
			t.Fatalf("%d answers to %q", answers, data)
		}
	})
}
