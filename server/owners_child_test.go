package server

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/foliodev/folio/provider/demo"
	"github.com/foliodev/folio/server/auth/authtest"
	"github.com/foliodev/folio/transcript"
)

// A sub-agent the engine spawns (the task tool) is not a conversation of
// its own: it is a child region of its parent's document and log, so it
// has its parent's owner wherever the parent's is kept. ownedChild drives
// one through the server: alice's turn spawns a child whose shell call
// waits for approval; bob, signed in, gets not-found for the conversation,
// for the child's approval and on the WebSocket, and never sees the child
// in his list; alice approves and the turn finishes.
func ownedChild(t *testing.T, as *accountsServer, alice, bob *person) {
	t.Helper()
	code, body := alice.do(t, "POST", "/api/v2/conversations", `{"title":"with a sub-agent"}`)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	id := body[strings.Index(body, `"id":"`)+6:]
	id = id[:strings.IndexByte(id, '"')]
	ac, bc := as.dialAs(t, alice), as.dialAs(t, bob)
	ac.open(id)
	if r := ac.send(id, "k1", `/demo call task {"prompt":"list the files in this folder","label":"scout"}`); r.State == transcript.CommandRejected {
		t.Fatalf("send: %+v", r)
	}
	ap := ac.await(func(f frame) bool {
		return f.Type == "event" && f.Op == "approvals" && bytes.Contains(f.raw, []byte(`"child"`))
	}).control(t)
	var inv string
	for _, a := range ap.Approvals {
		if a.Child != "" {
			inv = a.InvocationID
		}
	}
	if inv == "" {
		t.Fatalf("no child call waits: %+v", ap.Approvals)
	}
	if f := bc.call(map[string]any{"type": "approve", "conversation": id, "commandId": "b1", "invocationId": inv, "allow": true}); f.Receipt == nil || f.Receipt.Code != "not-found" {
		t.Fatalf("bob approves the child's call: %s", f.raw)
	}
	if f := bc.call(map[string]any{"type": "open", "conversation": id}); f.Code != "not-found" {
		t.Fatalf("bob opens the child's conversation: %s", f.raw)
	}
	if code, _ := bob.do(t, "GET", "/api/v2/conversations/"+id, ""); code != http.StatusNotFound {
		t.Fatalf("bob reads the child's conversation: %d", code)
	}
	if _, body := bob.do(t, "GET", "/api/v2/conversations", ""); strings.Contains(body, id) {
		t.Fatalf("bob's list shows it: %s", body)
	}
	if rc := ac.call(map[string]any{"type": "approve", "conversation": id, "commandId": "a1", "invocationId": inv, "allow": true}).Receipt; rc == nil || rc.State == transcript.CommandRejected {
		t.Fatalf("alice approves: %+v", rc)
	}
	if r := ac.finished("k1"); r.State != transcript.CommandDone {
		t.Fatalf("alice's turn: %+v", r)
	}
	if _, body := alice.do(t, "GET", "/api/v2/conversations", ""); !strings.Contains(body, id) {
		t.Fatalf("alice's list lacks it: %s", body)
	}
}

func TestSpawnedChildHasItsParentsOwner(t *testing.T) {
	as := startAccounts(t, Options{Turns: &TurnsOptions{Provider: demo.New(demo.Options{}), Model: "demo",
		Workspace: t.TempDir(), Allow: []string{"task"}}}, nil)
	ownedChild(t, as, as.signIn(t, authtest.AliceSubject), as.signIn(t, authtest.BobSubject))
}

func TestSpawnedChildHasItsParentsOwnerOnReplicas(t *testing.T) {
	rs := accountReplicas(t, 2)
	a, b := rs[0], rs[1]
	for _, r := range rs {
		r.turns.opts.Allow = []string{"task"}
	}
	alice, bob := a.signIn(t, authtest.AliceSubject), a.signIn(t, authtest.BobSubject)
	ownedChild(t, b, alice.on(b), bob.on(b))
}
