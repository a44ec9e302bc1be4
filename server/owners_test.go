package server

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodev/folio/provider/demo"
	"github.com/foliodev/folio/server/auth"
	"github.com/foliodev/folio/server/auth/authtest"
)

// dialAs opens a WebSocket as p, with its session cookie and the app's
// Origin, and says hello.
func (as *accountsServer) dialAs(t testing.TB, p *person) *client {
	t.Helper()
	c := as.dialWith(t, http.Header{"Cookie": {auth.SessionCookie + "=" + cookie(p.c, as.url, auth.SessionCookie)}, "Origin": {as.url}})
	if f := c.call(map[string]any{"type": "hello", "protocol": ProtocolVersion}); f.Type != "welcome" {
		t.Fatalf("hello: %s", f.raw)
	}
	return c
}

// crossUser tries every route and frame on conversation id as bob and
// fails unless each answers not-found (and the conversation stays intact).
func crossUser(t *testing.T, as *accountsServer, bob *person, bc *client, id string) {
	t.Helper()
	routes := []struct{ method, path, body string }{
		{"GET", "/api/v2/conversations/" + id, ""},
		{"PATCH", "/api/v2/conversations/" + id, `{"title":"taken"}`},
		{"GET", "/api/v2/conversations/" + id + "/graph", ""},
		{"POST", "/api/v2/conversations/" + id + "/attachments", `{}`},
		{"GET", "/api/v2/conversations/" + id + "/commands/k1", ""},
		{"GET", "/api/v2/conversations/" + id + "/artifacts/a1", ""},
		{"GET", "/api/v2/models?conversation=" + id, ""},
		{"PUT", "/api/v2/conversations/" + id + "/owner", `{"owner":"` + authtest.BobSubject + `"}`},
		{"DELETE", "/api/v2/conversations/" + id, ""},
	}
	for _, r := range routes {
		if code, body := bob.do(t, r.method, r.path, r.body); code != http.StatusNotFound || !strings.Contains(body, `"not-found"`) {
			t.Errorf("%s %s as another person: %d %s", r.method, r.path, code, body)
		}
	}
	if _, body := bob.do(t, "GET", "/api/v2/conversations", ""); strings.Contains(body, id) {
		t.Errorf("the list shows another person's conversation: %s", body)
	}
	if _, body := bob.do(t, "GET", "/api/v2/search?q=secret", ""); strings.Contains(body, id) {
		t.Errorf("search finds in another person's conversation: %s", body)
	}
	if f := bc.call(map[string]any{"type": "open", "conversation": id}); f.Type != "error" || f.Code != "not-found" {
		t.Errorf("open as another person: %s", f.raw)
	}
	if f := bc.call(map[string]any{"type": "entry", "conversation": id, "entryId": "e1"}); f.Code != "not-found" {
		t.Errorf("entry as another person: %s", f.raw)
	}
	if f := bc.call(map[string]any{"type": "page", "token": "t-0123456789", "conversation": id, "anchor": "latest", "direction": "before", "budgetBytes": 4096}); f.Type != "error" {
		t.Errorf("page as another person: %s", f.raw)
	}
	yes := true
	for i, m := range []map[string]any{
		{"type": "send", "text": "hi"},
		{"type": "steer", "text": "hi"},
		{"type": "stop", "turn": "t1"},
		{"type": "approve", "invocationId": "i1", "allow": yes},
		{"type": "retry", "failureId": "f1"},
		{"type": "edit", "entryId": "e1", "text": "x"},
		{"type": "select-branch", "head": "main"},
	} {
		m["conversation"], m["commandId"] = id, "x"+string(rune('a'+i))
		f := bc.call(m)
		if f.Receipt == nil || f.Receipt.Code != "not-found" {
			t.Errorf("%s as another person: %s", m["type"], f.raw)
		}
	}
}

func TestOwnersCrossUser(t *testing.T) {
	as := startAccounts(t, Options{Turns: &TurnsOptions{Provider: demo.New(demo.Options{}), Model: "demo", Workspace: t.TempDir()}}, nil)
	alice, bob := as.signIn(t, authtest.AliceSubject), as.signIn(t, authtest.BobSubject)
	code, body := alice.do(t, "POST", "/api/v2/conversations", `{"title":"secret plans"}`)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	id := body[strings.Index(body, `"id":"`)+6:]
	id = id[:strings.IndexByte(id, '"')]
	// A conversation with entries, Alice's too.
	as.writeGen(t, "c-gen00001", 40, 1)
	if err := as.owners().SetOwner("c-gen00001", authtest.AliceSubject); err != nil {
		t.Fatal(err)
	}
	bc := as.dialAs(t, bob)
	for _, c := range []string{id, "c-gen00001"} {
		crossUser(t, as, bob, bc, c)
	}
	// Alice still has both, and they are unharmed.
	ac := as.dialAs(t, alice)
	for _, c := range []string{id, "c-gen00001"} {
		if code, body := alice.do(t, "GET", "/api/v2/conversations/"+c, ""); code != 200 || strings.Contains(body, "taken") {
			t.Fatalf("the owner's GET %s: %d %s", c, code, body)
		}
		ac.open(c)
	}
	if _, body := alice.do(t, "GET", "/api/v2/conversations", ""); !strings.Contains(body, id) || !strings.Contains(body, "c-gen00001") {
		t.Fatalf("the owner's list: %s", body)
	}
	if rc := ac.send(id, "s1", "hello"); rc.Code != "" {
		t.Fatalf("the owner's send: %+v", rc)
	}
	// Bob's own list is his alone.
	if code, body := bob.do(t, "POST", "/api/v2/conversations", `{"title":"bob's"}`); code != http.StatusCreated {
		t.Fatalf("bob's create: %d %s", code, body)
	}
	if _, body := alice.do(t, "GET", "/api/v2/conversations", ""); strings.Contains(body, "bob's") {
		t.Fatalf("alice sees bob's conversation: %s", body)
	}
}

// Logs from before accounts are the admins': they see them, others do
// not, and an admin gives one to someone. Starting again changes nothing.
func TestOwnersOlderLogs(t *testing.T) {
	data := t.TempDir()
	conv := filepath.Join(data, "conversations")
	os.MkdirAll(conv, 0o700)
	// A copy of today's data: the fixture logs.
	ents, _ := os.ReadDir("../history/testdata")
	n := 0
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".jsonl") || n == 3 {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("../history/testdata", e.Name()))
		id := "c-old0000" + string(rune('1'+n))
		os.WriteFile(filepath.Join(conv, id+".jsonl"), b, 0o600)
		n++
	}
	as := startAccounts(t, Options{DataDir: data}, nil, authtest.AliceEmail)
	alice, bob := as.signIn(t, authtest.AliceSubject), as.signIn(t, authtest.BobSubject)
	_, abody := alice.do(t, "GET", "/api/v2/conversations", "")
	_, bbody := bob.do(t, "GET", "/api/v2/conversations", "")
	if !strings.Contains(abody, "c-old00001") || strings.Contains(bbody, "c-old00001") {
		t.Fatalf("older logs: admin sees %s; bob sees %s", abody, bbody)
	}
	if code, body := bob.do(t, "PUT", "/api/v2/conversations/c-old00001/owner", `{"owner":"`+authtest.BobSubject+`"}`); code != http.StatusNotFound {
		t.Fatalf("a non-admin assigns: %d %s", code, body)
	}
	if code, body := alice.do(t, "PUT", "/api/v2/conversations/c-old00001/owner", `{"owner":"`+authtest.BobSubject+`"}`); code != 200 {
		t.Fatalf("the admin assigns: %d %s", code, body)
	}
	if code, _ := bob.do(t, "GET", "/api/v2/conversations/c-old00001", ""); code != 200 {
		t.Fatalf("bob after assignment: %d", code)
	}
	if code, _ := alice.do(t, "GET", "/api/v2/conversations/c-old00001", ""); code != http.StatusNotFound {
		t.Fatalf("the admin after giving it away: %d", code)
	}
}
