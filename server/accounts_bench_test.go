package server

import (
	"io"
	"net/http"
	"testing"

	"github.com/foliodev/folio/server/auth"
	"github.com/foliodev/folio/server/auth/authtest"
)

// BenchmarkRequestAdmission is one API request (a conversation's metadata
// over loopback HTTP) admitted by the launch token, and by a session
// (cookie → the session file → the owner check). The bound: the
// session's ns/op at most 1.2× the token's.
func BenchmarkRequestAdmission(b *testing.B) {
	get := func(b *testing.B, c *http.Client, req *http.Request) {
		b.Helper()
		for b.Loop() {
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Fatalf("status %d", resp.StatusCode)
			}
		}
	}
	b.Run("token", func(b *testing.B) {
		ts := newTestServer(b, Options{Token: testToken})
		ts.writeGen(b, "c-gen00001", 20, 1)
		req, _ := http.NewRequest("GET", ts.url+"/api/v2/conversations/c-gen00001", nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		get(b, &http.Client{}, req)
	})
	b.Run("session", func(b *testing.B) {
		as := startAccounts(b, Options{}, nil)
		as.writeGen(b, "c-gen00001", 20, 1)
		p := as.signIn(b, authtest.AliceSubject)
		if err := as.owners().SetOwner("c-gen00001", authtest.AliceSubject); err != nil {
			b.Fatal(err)
		}
		req, _ := http.NewRequest("GET", as.url+"/api/v2/conversations/c-gen00001", nil)
		req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: cookie(p.c, as.url, auth.SessionCookie)})
		get(b, &http.Client{}, req)
	})
}
