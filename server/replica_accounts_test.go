package server

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foliodev/folio/provider/demo"
	"github.com/foliodev/folio/server/auth"
	"github.com/foliodev/folio/server/auth/authtest"
	"github.com/foliodev/folio/store/pgstore"
	"github.com/foliodev/folio/store/pgstore/pgtest"
)

// accountReplicas starts n replicas over one database, each signing people
// in through the same provider with the database's sessions.
func accountReplicas(t *testing.T, n int, admins ...string) []*accountsServer {
	t.Helper()
	dbURL := pgtest.URL(t)
	hss := make([]*httptest.Server, n)
	hs := make([]*atomic.Value, n)
	var redirects []string
	for i := range hss {
		h := &atomic.Value{}
		hs[i] = h
		hss[i] = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.Load().(http.Handler).ServeHTTP(w, r)
		}))
		t.Cleanup(hss[i].Close)
		redirects = append(redirects, hss[i].URL+auth.CallbackPath)
	}
	idp := authtest.Start(t, authtest.Client{ID: testClientID, Secret: testClientSecret, Redirects: redirects})
	out := make([]*accountsServer, n)
	for i := range out {
		st, err := pgstore.Open(context.Background(), dbURL)
		if err != nil {
			t.Fatal(err)
		}
		data := t.TempDir()
		m := pgstore.NewMirror(st, data, nil)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { m.Run(ctx); close(done) }()
		t.Cleanup(func() { cancel(); <-done; st.Close() })
		topts := &TurnsOptions{Provider: demo.New(demo.Options{}), Model: "demo", Workspace: t.TempDir(), IdleAfter: time.Second}
		out[i] = startAccountsAt(t, hss[i], hs[i], idp, Options{DataDir: data, Replica: m, Turns: topts}, pgstore.NewSessions(st), admins...)
	}
	return out
}

// on is p's session presented to another replica.
func (p *person) on(as *accountsServer) *person {
	jar, _ := cookiejar.New(nil)
	from, _ := url.Parse(p.base)
	to, _ := url.Parse(as.url)
	jar.SetCookies(to, p.c.Jar.Cookies(from))
	return &person{c: &http.Client{Jar: jar}, csrf: p.csrf, base: as.url}
}

func TestReplicaAccounts(t *testing.T) {
	rs := accountReplicas(t, 2)
	a, b := rs[0], rs[1]
	aliceA, bobA := a.signIn(t, authtest.AliceSubject), a.signIn(t, authtest.BobSubject)
	aliceB, bobB := aliceA.on(b), bobA.on(b)
	// A session made on A works on B.
	code, body := aliceB.do(t, "POST", "/api/v2/conversations", `{"title":"made on B"}`)
	if code != http.StatusCreated {
		t.Fatalf("alice's session on B: %d %s", code, body)
	}
	id := body[strings.Index(body, `"id":"`)+6:]
	id = id[:strings.IndexByte(id, '"')]
	if code, body := aliceA.do(t, "GET", "/api/v2/conversations/"+id, ""); code != 200 {
		t.Fatalf("alice's conversation from B, on A: %d %s", code, body)
	}
	for _, r := range []struct {
		as  *accountsServer
		bob *person
	}{{a, bobA}, {b, bobB}} {
		crossUser(t, r.as, r.bob, r.as.dialAs(t, r.bob), id)
	}
	if rc := a.dialAs(t, aliceA).send(id, "s1", "hello"); rc.Code != "" {
		t.Fatalf("the owner's send on A: %+v", rc)
	}
	// A link made on A opens on B; revoked on B, it stops on A at once.
	token, shareID := aliceA.share(t, id)
	if code, _ := (viewer{base: b.url, token: token}).do(t, "GET", "/api/v2/conversations/"+id, ""); code != 200 {
		t.Fatalf("A's link on B: %d", code)
	}
	if code, _ := (viewer{base: a.url, token: token}).do(t, "GET", "/api/v2/conversations/"+id, ""); code != 200 {
		t.Fatalf("A's link on A: %d", code)
	}
	if code, _ := aliceB.do(t, "DELETE", "/api/v2/conversations/"+id+"/shares/"+shareID, ""); code != http.StatusNoContent {
		t.Fatalf("revoke on B: %d", code)
	}
	if code, _ := (viewer{base: a.url, token: token}).do(t, "GET", "/api/v2/conversations/"+id, ""); code != http.StatusNotFound {
		t.Fatalf("the link on A after revoking on B: %d", code)
	}
	// Signing out on B ends the session on A at once.
	if code, _ := aliceB.do(t, "POST", auth.LogoutPath, ""); code != 200 {
		t.Fatalf("sign-out on B: %d", code)
	}
	if code, _ := aliceA.do(t, "GET", "/api/v2/conversations", ""); code != http.StatusUnauthorized {
		t.Fatalf("alice on A after signing out on B: %d", code)
	}
}
