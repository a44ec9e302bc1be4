package plugin

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

// TestOlderPluginPlacedContributions runs a plugin written for the placement
// protocol: it publishes legacy envelopes with presentation/contribute, and
// folio projects them onto the invocation's current items while it runs.
func TestOlderPluginPlacedContributions(t *testing.T) {
	contribute := func(envelope string) string {
		return `printf '%s\n' '{"jsonrpc":"2.0","method":"presentation/contribute","params":{"call":1,"envelope":` + envelope + `}}'` + "\n"
	}
	body := contribute(`{"schema_version":1,"placement":"request","contribution":{"schema":"shell","version":1,"payload":{"cmd":"ls"}}}`) +
		contribute(`{"schema_version":1,"placement":"supplemental","contribution":{"key":"stats","schema":"stats","version":1,"payload":{"n":1}}}`) +
		contribute(`{"schema_version":1,"placement":"progress","contribution":{"schema":"shell","version":1,"payload":{"out":"a"}}}`) +
		contribute(`{"schema_version":1,"placement":"hidden","contribution":{"schema":"shell","version":1,"payload":{"secret":"h"}}}`) +
		contribute(`{"schema_version":1,"contribution":{"schema":"shell","version":1,"payload":{"unplaced":true}}}`) +
		contribute(`{"schema_version":1,"placement":"supplemental","contribution":{"schema":"nokey","version":1,"payload":{}}}`) +
		contribute(`{"schema_version":1,"placement":"result","contribution":{"schema":"shell","version":1,"payload":{"out":"a b","code":0}}}`) +
		contribute(`{"schema_version":1,"placement":"progress","contribution":"an old opaque string"}`) +
		contribute(`{"schema_version":1,"placement":"supplemental","contribution":{"key":"stats","schema":"stats","version":1,"payload":{"n":2}}}`) +
		// Broken envelopes and envelopes for another call are malformed.
		contribute(`{"schema_version":2,"placement":"result"}`) +
		contribute(`{"schema_version":1,"placement":"sidebar"}`) +
		`printf '%s\n' '{"jsonrpc":"2.0","method":"presentation/contribute","params":{"call":2,"envelope":{"schema_version":1,"placement":"result","contribution":{"schema":"shell","version":1,"payload":{"other":1}}}}}'` + "\n" +
		ok
	for _, persistent := range []bool{false, true} {
		name := "per-call"
		if persistent {
			name = "persistent"
		}
		t.Run(name, func(t *testing.T) {
			p := legacyPlugin(t, body, persistent)
			h := toolview.New(toolview.WithCadence(0))
			var primary []string
			var seen strings.Builder
			h.Subscribe(func(c toolview.Change) {
				if c.Value != nil {
					seen.Write(c.Value.Payload)
					if c.Open && c.Item == "" {
						primary = append(primary, string(c.Value.Payload))
					}
				}
			})
			rec, err := h.Run(context.Background(), toolview.Spec{Tool: "t", Producer: p.Manifest}, []byte(`{}`), p.Func())
			if err != nil {
				t.Fatal(err)
			}
			p.Wait()
			if rec.Outcome.Status != transcript.ToolOK {
				t.Fatalf("outcome = %+v", rec.Outcome)
			}
			if want := []string{`{"cmd":"ls"}`, `{"out":"a"}`, `{"out":"a b","code":0}`}; strings.Join(primary, " ") != strings.Join(want, " ") {
				t.Fatalf("primary values = %v, want %v", primary, want)
			}
			if rec.Presentation == nil || rec.Presentation.Schema != "shell" || string(rec.Presentation.Payload) != `{"out":"a b","code":0}` || rec.Presentation.Revision != 3 {
				t.Fatalf("retained primary = %+v", rec.Presentation)
			}
			if len(rec.Supplementals) != 1 || rec.Supplementals[0].Key != "stats" ||
				string(rec.Supplementals[0].Presentation.Payload) != `{"n":2}` || rec.Supplementals[0].Presentation.Revision != 2 {
				t.Fatalf("supplementals = %+v", rec.Supplementals)
			}
			for _, hidden := range []string{"secret", "unplaced", "opaque", "other"} {
				if strings.Contains(seen.String(), hidden) {
					t.Errorf("invisible contribution %q surfaced: %s", hidden, seen.String())
				}
			}
			// A persistent plugin's line for a call not in flight is
			// routed nowhere: counted as stray, not as malformed.
			wantMalformed, wantStray := int64(3), int64(0)
			if persistent {
				wantMalformed, wantStray = 2, 1
			}
			if got := h.Metrics().Rejected[toolview.ReasonMalformed.String()]; got != wantMalformed {
				t.Fatalf("malformed = %d, want %d (all: %v)", got, wantMalformed, h.Metrics().Rejected)
			}
			if got := p.Stray(); got != wantStray {
				t.Fatalf("stray = %d, want %d", got, wantStray)
			}
		})
	}
}

// legacyPlugin writes an sh plugin that answers each request with body.
func legacyPlugin(t *testing.T, body string, persistent bool) *Plugin {
	t.Helper()
	src := "#!/bin/sh\nIFS= read -r request\n" + body
	if persistent {
		src = "#!/bin/sh\nwhile IFS= read -r request; do\n" + body + "done\n"
	}
	p, _ := writePlugin(t, src, `{"name":"old","executable":"plugin.sh","persistent":`+strconv.FormatBool(persistent)+`,
		"tools":[{"name":"t","inputSchema":{"type":"object"}}],
		"adapters":[{"schema":"shell","version":1},{"schema":"stats","version":1},{"schema":"nokey","version":1}]}`)
	t.Cleanup(func() { _ = p.Close() })
	return p
}
