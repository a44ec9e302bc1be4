package server

import (
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// TestDemoTurnsConverge runs the demo's tool turns, a failing turn and a
// stopped turn, and compares four views of the conversation: (a) what a
// tab holds after following every live event, (b) a fresh connection's
// pages, (c) pages after a server restart and (d) the log as package
// history reads it (what folio log show --json prints). All four must be
// equal entry for entry, and no argument draft (folio.args) may survive
// its call's closure in any of them.
func TestDemoTurnsConverge(t *testing.T) {
	data := t.TempDir()
	ts, _ := newTurnsServer(t, 100, data)
	id := ts.create(t)
	c := ts.dial(t)
	live := openDoc(t, c, id)
	var events []frame

	// drive runs one command to its final receipt, allowing every call
	// that asks, and keeps the entry events in order.
	drive := func(cmdID string, during func()) Receipt {
		t.Helper()
		if during != nil {
			during()
		}
		for {
			f := c.await(func(f frame) bool { return f.Type == "event" })
			switch f.Op {
			case "upsert", "settle", "append", "replaced":
				events = append(events, f)
			case "approvals":
				var ap struct {
					Approvals []ApprovalItem `json:"approvals"`
				}
				json.Unmarshal(f.raw, &ap, json.RejectUnknownMembers(false))
				for i, a := range ap.Approvals {
					c.write([]byte(`{"type":"approve","id":"ap-` + cmdID + itoa(i) + `","conversation":"` + id + `","commandId":"ap-` + cmdID + itoa(i) +
						`","invocationId":"` + a.InvocationID + `","allow":true}`))
				}
			case "receipt":
				if f.Receipt.CommandID == cmdID && f.Receipt.State.Final() {
					return *f.Receipt
				}
			}
		}
	}
	for i, text := range []string{"list the files here", "read README.md", "/demo fail rate-limit"} {
		cmd := "k" + itoa(i)
		c.send(id, cmd, text)
		want := transcript.CommandDone
		if i == 2 {
			want = transcript.CommandFailed
		}
		if rc := drive(cmd, nil); rc.State != want {
			t.Fatalf("%q: %+v", text, rc)
		}
	}
	c.send(id, "k-stop", "write a long essay")
	turn := c.running()
	events = append(events, c.held...) // what arrived while waiting for the turn
	c.held = nil
	c.write([]byte(`{"type":"stop","id":"st","conversation":"` + id + `","commandId":"st","turn":"` + turn.Turn + `"}`))
	if rc := drive("k-stop", nil); rc.State != transcript.CommandStopped {
		t.Fatalf("stopped turn: %+v", rc)
	}
	events = append(events, c.held...)
	c.held = nil
	drafts := 0
	for _, f := range events {
		if strings.Contains(string(f.Entry), `"schema":"folio.args"`) {
			drafts++
		}
		switch f.Op {
		case "replaced":
			live = openDoc(t, c, id)
		default:
			live.apply(t, f)
		}
	}

	fresh := openDoc(t, ts.dial(t), id)
	must(t, ts.Server.Close())
	ts2 := newTestServer(t, Options{DataDir: data})
	restarted := openDoc(t, ts2.dial(t), id)
	conv, err := history.ReadFile(ts.logOf(id))
	must(t, err)
	var logged []string
	for _, e := range conv.Document.All() {
		b, err := transcript.EncodeEntry(e)
		must(t, err)
		logged = append(logged, string(b))
	}

	// Drafts stream at the store's cadence, so how many reach the wire
	// depends on timing; the closure check below holds either way.
	t.Logf("%d live events carried an argument draft", drafts)
	if len(logged) < 8 {
		t.Fatalf("the log holds only %d entries", len(logged))
	}
	for name, got := range map[string][]string{"live": live.entries, "fresh pages": fresh.entries, "after restart": restarted.entries} {
		if !slices.Equal(got, logged) {
			t.Errorf("%s differs from the log:\n%s\nlog:\n%s", name, strings.Join(got, "\n"), strings.Join(logged, "\n"))
		}
	}
	for _, e := range logged {
		if strings.Contains(e, `"schema":"folio.args"`) {
			t.Errorf("an argument draft survived closure: %s", e)
		}
	}
	var kinds []string
	for _, e := range conv.Document.All() {
		kinds = append(kinds, string(e.Content.Kind()))
	}
	for _, k := range []string{"tool", "failure"} {
		if !slices.Contains(kinds, k) {
			t.Errorf("no %s entry: the scenario did not run (%v)", k, kinds)
		}
	}
}
