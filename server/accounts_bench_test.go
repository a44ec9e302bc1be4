package server

import (
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/foliodev/folio/server/auth"
	"github.com/foliodev/folio/server/auth/authtest"
)

// BenchmarkRequestAdmission is one API request (a conversation's metadata
// over loopback HTTP) admitted by the launch token, and by a session
// (cookie → the session file → the owner check). The bound: the
// session's ns/op at most 1.2× the token's. On a loaded machine the wall
// time swings with other processes; cpu-ns/op, the process's CPU time
// (user and system, client and server together) per request, does not.
func BenchmarkRequestAdmission(b *testing.B) {
	get := func(b *testing.B, c *http.Client, req *http.Request) {
		b.Helper()
		before := cpuTime(b)
		defer func() { b.ReportMetric(float64(cpuTime(b)-before)/float64(b.N), "cpu-ns/op") }()
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
	tokenReq := func(b *testing.B) *http.Request {
		ts := newTestServer(b, Options{Token: testToken})
		ts.writeGen(b, "c-gen00001", 20, 1)
		req, _ := http.NewRequest("GET", ts.url+"/api/v2/conversations/c-gen00001", nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		return req
	}
	sessionReq := func(b *testing.B) *http.Request {
		as := startAccounts(b, Options{}, nil)
		as.writeGen(b, "c-gen00001", 20, 1)
		p := as.signIn(b, authtest.AliceSubject)
		if err := as.owners().SetOwner("c-gen00001", authtest.AliceSubject); err != nil {
			b.Fatal(err)
		}
		req, _ := http.NewRequest("GET", as.url+"/api/v2/conversations/c-gen00001", nil)
		req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: cookie(p.c, as.url, auth.SessionCookie)})
		return req
	}
	b.Run("token", func(b *testing.B) { get(b, &http.Client{}, tokenReq(b)) })
	b.Run("session", func(b *testing.B) { get(b, &http.Client{}, sessionReq(b)) })
	// Both servers at once, one request of each per iteration, each timed
	// on its own: the machine's load falls on both alike, so their ratio
	// holds where the two runs above drift apart.
	b.Run("alternating", func(b *testing.B) {
		tr, sr := tokenReq(b), sessionReq(b)
		tc, sc := &http.Client{}, &http.Client{}
		do := func(c *http.Client, req *http.Request) time.Duration {
			t0 := time.Now()
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Fatalf("status %d", resp.StatusCode)
			}
			return time.Since(t0)
		}
		var tokenT, sessionT time.Duration
		for i := 0; b.Loop(); i++ {
			if i%2 == 0 { // neither always goes first
				tokenT += do(tc, tr)
				sessionT += do(sc, sr)
			} else {
				sessionT += do(sc, sr)
				tokenT += do(tc, tr)
			}
		}
		b.ReportMetric(float64(tokenT)/float64(b.N), "token-ns/op")
		b.ReportMetric(float64(sessionT)/float64(b.N), "session-ns/op")
		b.ReportMetric(float64(sessionT)/float64(tokenT), "session/token")
	})
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
