package server

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/provider/demo"
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/tools/toolschema"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

// itemsTool publishes a primary value, a retained supplemental and an
// ephemeral one, then waits until the test let it finish.
type itemsTool struct{ release chan struct{} }

func (itemsTool) Decl() toolview.ToolDecl {
	return toolview.ToolDecl{Name: "items", Description: "publishes items", InputSchema: jsontext.Value(`{"type":"object"}`)}
}
func (itemsTool) NeedsApproval() bool { return false }
func (it itemsTool) Run(ctx context.Context, inv *toolview.Invocation, _ []byte) (toolview.Result, error) {
	pay := func(p *toolview.Presentation, data string) {
		_, _ = p.Replace(toolview.Payload{Schema: toolschema.Task, Version: 1, Data: []byte(data)})
	}
	pay(inv.Presentation(), `{"label":"items","status":"running"}`)
	pay(inv.Supplemental("stats"), `{"label":"stats","status":"running"}`)
	pay(inv.Supplemental("spinner", toolview.WithRetention(toolview.Ephemeral)), `{"label":"EPHEMERAL-spinner","status":"running"}`)
	select {
	case <-it.release:
	case <-ctx.Done():
	}
	return toolview.Result{Text: "done", Summary: "items"}, nil
}

// TestSupplementalItemsConverge (without the items in the open entry it
// waits for an event that never comes, and fails by the test timeout):
// while a call runs, its supplemental items
// (retained and ephemeral) are in the live events a tab follows and in the
// checkpoint a tab that connects then gets; after closure the tab that
// followed the events, a fresh tab's pages, pages after a restart and the
// log hold the same entries, with the retained supplemental and no trace of
// the ephemeral one.
func TestSupplementalItemsConverge(t *testing.T) {
	data := t.TempDir()
	tool := itemsTool{release: make(chan struct{})}
	released := false
	defer func() {
		if !released {
			close(tool.release)
		}
	}()
	turns := &TurnsOptions{Provider: demo.New(demo.Options{TokensPerSecond: 1000}), Model: "demo",
		Workspace: t.TempDir(), Tools: []tools.Tool{tool}, Allow: []string{"items"}}
	ts := newTestServer(t, Options{Turns: turns, DataDir: data})
	id := ts.create(t)
	c := ts.dial(t)
	live := openDoc(t, c, id)
	var events []frame
	c.send(id, "k1", "/demo call items {}")

	both := func(entry string) bool {
		return strings.Contains(entry, `"key":"stats"`) && strings.Contains(entry, "EPHEMERAL-spinner")
	}
	// Live: an open upsert of the tool entry carries both items.
	for {
		f := c.await(func(f frame) bool { return f.Type == "event" })
		if f.Op == "upsert" || f.Op == "settle" || f.Op == "append" || f.Op == "replaced" {
			events = append(events, f)
		}
		if f.Op == "upsert" && f.Open && both(string(f.Entry)) {
			break
		}
		if f.Op == "settle" && strings.Contains(string(f.Entry), `"kind":"tool"`) {
			t.Fatalf("the call settled before any event showed its supplemental items: %s", f.Entry)
		}
	}
	// Reconnect: a tab that connects now gets the open entry whole in its
	// snapshot's checkpoint.
	mid := openDoc(t, ts.dial(t), id)
	if !slices.ContainsFunc(mid.entries, both) {
		t.Fatalf("a tab connecting while the call runs does not get its items:\n%s", strings.Join(mid.entries, "\n"))
	}

	close(tool.release)
	released = true
	for {
		f := c.await(func(f frame) bool { return f.Type == "event" })
		if f.Op == "upsert" || f.Op == "settle" || f.Op == "append" || f.Op == "replaced" {
			events = append(events, f)
		}
		if f.Op == "receipt" && f.Receipt.CommandID == "k1" && f.Receipt.State == transcript.CommandDone {
			break
		}
	}
	for _, f := range events {
		if f.Op == "replaced" {
			live = openDoc(t, c, id)
			continue
		}
		live.apply(t, f)
	}
	fresh := openDoc(t, ts.dial(t), id)
	must(t, ts.Server.Close())
	restarted := openDoc(t, newTestServer(t, Options{DataDir: data}).dial(t), id)
	conv, err := history.ReadFile(ts.logOf(id))
	must(t, err)
	var logged []string
	for _, e := range conv.Document.All() {
		b, err := transcript.EncodeEntry(e)
		must(t, err)
		logged = append(logged, string(b))
	}
	for name, got := range map[string][]string{"live": live.entries, "fresh pages": fresh.entries, "after restart": restarted.entries} {
		if !slices.Equal(got, logged) {
			t.Errorf("%s differs from the log:\n%s\nlog:\n%s", name, strings.Join(got, "\n"), strings.Join(logged, "\n"))
		}
	}
	retained := false
	for _, e := range logged {
		if strings.Contains(e, "EPHEMERAL-spinner") {
			t.Errorf("the ephemeral item survived closure: %s", e)
		}
		retained = retained || (strings.Contains(e, `"kind":"tool"`) && strings.Contains(e, `"key":"stats"`))
	}
	if !retained {
		t.Errorf("the retained supplemental is not in the settled entry:\n%s", strings.Join(logged, "\n"))
	}
}
