package server

import (
	"bytes"
	"strings"
	"testing"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/transcript"
)

// TestLogItemsAgreeWithHistoryReader: the server's streaming reader (used
// for captures and following) yields exactly the document folio's history
// reader hydrates, entry for entry, across the batch rules: rejected
// batches, repeated IDs, superseding snapshots, unknown records, bad lines
// and a torn last line.
func TestLogItemsAgreeWithHistoryReader(t *testing.T) {
	hdr := `{"type":"conversation","version":3,"conversationId":"c","startedAt":"2026-01-01T00:00:00.000Z"}`
	ent := func(id, text string) string {
		return `{"id":"` + id + `","content":{"kind":"user","text":"` + text + `"},"timestamp":"2026-01-01T00:00:00.000Z"}`
	}
	app := func(es ...string) string {
		return `{"type":"ui-append","at":"2026-01-01T00:00:00.000Z","entries":[` + strings.Join(es, ",") + `]}`
	}
	var g bytes.Buffer
	if _, err := gen.Write(&g, gen.Options{Messages: 3000, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"generated": g.String(),
		"rules": strings.Join([]string{hdr,
			app(ent("a", "1")),
			app(ent("b", "2"), ent("b", "3")), // repeated in batch: rejected whole
			app(ent("a", "again")),            // already in the document
			app(ent("c", "4"), `{"id":"d","content":{"kind":"user"},"timestamp":1}`), // invalid entry
			`{"type":"mystery","at":"2026-01-01T00:00:00.000Z"}`,
			`this is not json`,
			`{"type":"message","at":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi"}}`,
			app(ent("e", "5")),
		}, "\n") + "\n" + app(ent("torn", "x"))[:40],
		"superseded": strings.Join([]string{hdr,
			app(ent("a", "1"), ent("b", "2")),
			`{"type":"ui-transcript","at":"2026-01-01T00:00:00.000Z","entries":[` + ent("x", "new") + `,` + ent("a", "kept id") + `]}`,
			app(ent("y", "after")),
			app(ent("x", "dup after snapshot")),
		}, "\n") + "\n",
	}
	var big []string
	for i := range 20 {
		big = append(big, ent(strings.Repeat("z", i+1), "big"))
	}
	snapshot := func(es []string) string {
		return `{"type":"ui-transcript","at":"2026-01-01T00:00:00.000Z","entries":[` + strings.Join(es, ",") + `]}`
	}
	cases["big snapshots"] = strings.Join([]string{hdr, app(ent("a", "1")),
		snapshot(append(append([]string{}, big...), big[3])), // a repeat in a big batch: rejected
		app(ent("b", "2")),
		snapshot(big),
	}, "\n") + "\n"
	for name, log := range cases {
		t.Run(name, func(t *testing.T) {
			conv, err := history.Read(strings.NewReader(log))
			if err != nil {
				t.Fatal(err)
			}
			var got []transcript.Entry
			var scan logScan
			for it, err := range logItems(strings.NewReader(log), newIDSet(), &scan) {
				if err != nil {
					t.Fatal(err)
				}
				if it.Reset {
					got = got[:0]
					continue
				}
				e, err := transcript.DecodeEntry(it.Raw)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, e)
			}
			doc := conv.Document
			if len(got) != doc.Len() {
				t.Fatalf("server reader has %d entries, history reader %d", len(got), doc.Len())
			}
			for i, e := range got {
				if e.ID != doc.At(i).ID || transcript.FingerprintOf(e) != doc.Fingerprint(i) {
					t.Fatalf("entry %d: server %s, history %s", i, e.ID, doc.At(i).ID)
				}
			}
			if n := len(got); n > 0 && scan.lastID != got[n-1].ID {
				t.Fatalf("last id %q, want %q", scan.lastID, got[n-1].ID)
			}
		})
	}
}
