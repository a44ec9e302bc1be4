package server

import (
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/foliodev/folio/provider/demo"
	"github.com/foliodev/folio/server/auth/authtest"
)

// viewer is someone with a share link and no session.
type viewer struct {
	base, token string
}

func (v viewer) do(t testing.TB, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, v.base+path, strings.NewReader(body))
	req.Header.Set("X-Folio-Share", v.token) // the wire's name, as the web app sends it
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (v viewer) dial(t testing.TB, as *accountsServer) *client {
	t.Helper()
	h := http.Header{}
	h.Set("Sec-WebSocket-Protocol", Subprotocol+", folio-share."+v.token) // as the web app offers it
	h.Set("Origin", as.url)
	c := as.dialWith(t, h)
	if f := c.call(map[string]any{"type": "hello", "protocol": ProtocolVersion}); f.Type != "welcome" {
		t.Fatalf("hello: %s", f.raw)
	}
	return c
}

// share makes a link to id as p and returns its token.
func (p *person) share(t testing.TB, id string) (token, shareID string) {
	t.Helper()
	code, body := p.do(t, "POST", "/api/v2/conversations/"+id+"/shares", "{}")
	if code != http.StatusCreated {
		t.Fatalf("share %s: %d %s", id, code, body)
	}
	var sh struct {
		ID   string `json:"id"`
		Path string `json:"path"`
	}
	if err := jsonUnmarshal([]byte(body), &sh); err != nil || !strings.HasPrefix(sh.Path, "/s/") {
		t.Fatalf("share answer: %s", body)
	}
	return strings.TrimPrefix(sh.Path, "/s/"), sh.ID
}

func TestShareLinks(t *testing.T) {
	as := startAccounts(t, Options{Turns: &TurnsOptions{Provider: demo.New(demo.Options{}), Model: "demo", Workspace: t.TempDir()}}, nil)
	alice, bob := as.signIn(t, authtest.AliceSubject), as.signIn(t, authtest.BobSubject)
	id := "c-gen00001"
	as.writeGen(t, id, 60, 3)
	as.writeGen(t, "c-gen00002", 5, 4)
	for _, c := range []string{id, "c-gen00002"} {
		if err := as.owners().SetOwner(c, authtest.AliceSubject); err != nil {
			t.Fatal(err)
		}
	}
	// Only the owner makes, lists and revokes links.
	if code, _ := bob.do(t, "POST", "/api/v2/conversations/"+id+"/shares", "{}"); code != http.StatusNotFound {
		t.Fatalf("bob shares alice's conversation: %d", code)
	}
	token, shareID := alice.share(t, id)
	if b, err := base64.RawURLEncoding.DecodeString(token); err != nil || len(b) < 16 {
		t.Fatalf("token %q is not at least 128 random bits", token)
	}
	if code, body := alice.do(t, "GET", "/api/v2/conversations/"+id+"/shares", "{}"); code != 200 || !strings.Contains(body, shareID) || strings.Contains(body, token) {
		t.Fatalf("list links: %d %s", code, body)
	}
	if code, _ := bob.do(t, "GET", "/api/v2/conversations/"+id+"/shares", "{}"); code != http.StatusNotFound {
		t.Fatalf("bob lists alice's links: %d", code)
	}

	v := viewer{base: as.url, token: token}
	// The link's page is the app.
	if code, _ := v.do(t, "GET", "/s/"+token, ""); code != 200 {
		t.Fatalf("GET /s/TOKEN: %d", code)
	}
	if code, body := v.do(t, "GET", "/api/v2/conversations/"+id, ""); code != 200 {
		t.Fatalf("the shared conversation: %d %s", code, body)
	}
	if _, body := v.do(t, "GET", "/api/v2/conversations", ""); !strings.Contains(body, id) || strings.Contains(body, "c-gen00002") {
		t.Fatalf("the list through a link: %s", body)
	}
	if code, _ := v.do(t, "GET", "/api/v2/conversations/c-gen00002", ""); code != http.StatusNotFound {
		t.Fatalf("another conversation of the owner through the link: %d", code)
	}
	if code, _ := v.do(t, "GET", "/api/v2/conversations/"+id+"/shares", "{}"); code != http.StatusNotFound {
		t.Fatalf("the links through a link: %d", code)
	}
	// Every write is refused, over HTTP and the WebSocket.
	for _, r := range []struct{ method, path, body string }{
		{"POST", "/api/v2/conversations", `{}`},
		{"PATCH", "/api/v2/conversations/" + id, `{"title":"x"}`},
		{"DELETE", "/api/v2/conversations/" + id, ""},
		{"POST", "/api/v2/conversations/" + id + "/attachments", `{}`},
		{"PUT", "/api/v2/conversations/" + id + "/owner", `{"owner":"x"}`},
		{"POST", "/api/v2/conversations/" + id + "/shares", "{}"},
		{"DELETE", "/api/v2/conversations/" + id + "/shares/" + shareID, ""},
	} {
		if code, body := v.do(t, r.method, r.path, r.body); code != http.StatusForbidden || !strings.Contains(body, "read-only") {
			t.Errorf("%s %s through a link: %d %s", r.method, r.path, code, body)
		}
	}
	vc := v.dial(t, as)
	snap := vc.open(id)
	if pg := vc.page(snap.Token, id, "latest", "before", 64<<10); pg.Type != "page" || len(pg.groups(t)) == 0 {
		t.Fatalf("a page through the link: %s", pg.raw)
	}
	// The owner sees the same first page.
	ac := as.dialAs(t, alice)
	asnap := ac.open(id)
	if want, got := string(ac.page(asnap.Token, id, "latest", "before", 64<<10).Groups), string(vc.page(snap.Token, id, "latest", "before", 64<<10).Groups); want != got {
		t.Fatalf("the link's page differs from the owner's:\n%s\n%s", got, want)
	}
	yes := true
	for i, m := range []map[string]any{
		{"type": "send", "text": "hi"}, {"type": "steer", "text": "hi"}, {"type": "stop", "turn": "t1"},
		{"type": "approve", "invocationId": "i1", "allow": yes}, {"type": "retry", "failureId": "f1"},
		{"type": "edit", "entryId": "e1", "text": "x"}, {"type": "select-branch", "head": "main"},
	} {
		m["conversation"], m["commandId"] = id, "v"+string(rune('a'+i))
		if f := vc.call(m); f.Receipt == nil || f.Receipt.Code != "read-only" {
			t.Errorf("%s through a link: %s", m["type"], f.raw)
		}
	}
	if f := vc.call(map[string]any{"type": "open", "conversation": "c-gen00002"}); f.Code != "not-found" {
		t.Fatalf("opening another conversation through the link: %s", f.raw)
	}
	// Live, not a snapshot: what the owner changes after sharing shows.
	if code, _ := alice.do(t, "PATCH", "/api/v2/conversations/"+id, `{"title":"renamed after sharing"}`); code != 200 {
		t.Fatal("rename")
	}
	if _, body := v.do(t, "GET", "/api/v2/conversations/"+id, ""); !strings.Contains(body, "renamed after sharing") {
		t.Fatalf("the link shows the conversation as it was: %s", body)
	}
	// Revoked: refused at once, pages of an open connection too.
	if code, _ := alice.do(t, "DELETE", "/api/v2/conversations/"+id+"/shares/"+shareID, ""); code != http.StatusNoContent {
		t.Fatalf("revoke: %d", code)
	}
	if code, _ := v.do(t, "GET", "/api/v2/conversations/"+id, ""); code != http.StatusNotFound {
		t.Fatalf("a revoked link: %d", code)
	}
	if pg := vc.page(snap.Token, id, "latest", "before", 64<<10); pg.Code != "not-found" {
		t.Fatalf("a page through a revoked link: %s", pg.raw)
	}
	// A link to a deleted conversation finds nothing.
	token2, _ := alice.share(t, "c-gen00002")
	if code, _ := alice.do(t, "DELETE", "/api/v2/conversations/c-gen00002", ""); code != http.StatusNoContent {
		t.Fatal("delete")
	}
	if code, _ := (viewer{base: as.url, token: token2}).do(t, "GET", "/api/v2/conversations/c-gen00002", ""); code != http.StatusNotFound {
		t.Fatalf("a link to a deleted conversation: %d", code)
	}
	// A guessed token finds nothing.
	if code, _ := (viewer{base: as.url, token: randomShareToken()}).do(t, "GET", "/api/v2/conversations/"+id, ""); code != http.StatusNotFound {
		t.Fatalf("a guessed link: %d", code)
	}
}
