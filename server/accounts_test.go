package server

import (
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/server/auth"
	"github.com/foliodev/folio/server/auth/authtest"
)

const (
	testClientID     = "folio-test"
	testClientSecret = "folio-test-secret"
)

// accountsServer is a server with sign-in through a real provider.
type accountsServer struct {
	*testServer
	idp   *authtest.Provider
	clock *atomic.Int64 // the sessions' clock, Unix nanoseconds; 0: time.Now
}

// startAccounts starts a listener, a provider that knows folio at it, and
// the server with sign-in. opts may carry a Replica; sessions then go in
// sessions (nil: a FileStore in the data folder).
func startAccounts(t testing.TB, opts Options, sessions auth.Store, admins ...string) *accountsServer {
	t.Helper()
	var h atomic.Value
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.Load().(http.Handler).ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	idp := authtest.Start(t, authtest.Client{ID: testClientID, Secret: testClientSecret, Redirects: []string{hs.URL + auth.CallbackPath}})
	return startAccountsAt(t, hs, &h, idp, opts, sessions, admins...)
}

func startAccountsAt(t testing.TB, hs *httptest.Server, h *atomic.Value, idp *authtest.Provider, opts Options, sessions auth.Store, admins ...string) *accountsServer {
	t.Helper()
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	if opts.TempDir == "" {
		opts.TempDir = t.TempDir()
	}
	if opts.FollowInterval == 0 {
		opts.FollowInterval = 5 * time.Millisecond
	}
	if sessions == nil {
		fs, err := auth.NewFileStore(opts.DataDir + "/sessions")
		if err != nil {
			t.Fatal(err)
		}
		sessions = fs
	}
	clock := &atomic.Int64{}
	a, err := auth.New(context.Background(), auth.Config{Issuer: idp.Issuer, ClientID: testClientID, ClientSecret: testClientSecret,
		PublicURL: hs.URL, Sessions: sessions, Admins: admins, Logger: opts.Logger, Now: func() time.Time {
			if n := clock.Load(); n != 0 {
				return time.Unix(0, n)
			}
			return time.Now()
		}})
	if err != nil {
		t.Fatal(err)
	}
	opts.Auth = a
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	h.Store(s.Handler())
	return &accountsServer{testServer: &testServer{Server: s, url: hs.URL, data: opts.DataDir}, idp: idp, clock: clock}
}

// syncBuffer is a log destination safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// person is a browser signed in as one subject.
type person struct {
	c    *http.Client
	csrf string
	base string
}

func (as *accountsServer) signIn(t testing.TB, subject string) *person {
	t.Helper()
	c := authtest.Browser()
	resp, body, err := as.idp.SignIn(c, as.url+"/", subject)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Request.URL.String() != as.url+"/" {
		t.Fatalf("sign-in ended at %s with %d: %.300s", resp.Request.URL, resp.StatusCode, body)
	}
	return &person{c: c, csrf: cookie(c, as.url, auth.CSRFCookie), base: as.url}
}

func cookie(c *http.Client, base, name string) string {
	u, _ := url.Parse(base)
	for _, k := range c.Jar.Cookies(u) {
		if k.Name == name {
			return k.Value
		}
	}
	return ""
}

// do sends a request as p (with the CSRF token on writes) and returns the
// status and body.
func (p *person) do(t testing.TB, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, p.base+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if method != http.MethodGet {
		req.Header.Set(auth.CSRFHeader, p.csrf)
	}
	resp, err := p.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestSignInOverHTTP(t *testing.T) {
	var logs syncBuffer
	as := startAccounts(t, Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}, nil)
	// Without a session the app sends the browser to sign in, and the API
	// refuses.
	anon := authtest.Browser()
	anon.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := anon.Get(as.url + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), auth.LoginPath) {
		t.Fatalf("GET / without a session: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if code, body := (&person{c: anon, base: as.url}).do(t, "GET", "/api/v2/conversations", ""); code != http.StatusUnauthorized || !strings.Contains(body, "sign-in-required") {
		t.Fatalf("API without a session: %d %s", code, body)
	}

	alice := as.signIn(t, authtest.AliceSubject)
	// The cookies: session HttpOnly and Lax, CSRF readable.
	if alice.csrf == "" {
		t.Fatal("no CSRF cookie after sign-in")
	}
	code, body := alice.do(t, "GET", "/auth/me", "")
	var me struct {
		Subject string `json:"subject"`
		Email   string `json:"email"`
		CSRF    string `json:"csrf"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &me) != nil || me.Subject != authtest.AliceSubject || me.Email != authtest.AliceEmail || me.CSRF != alice.csrf {
		t.Fatalf("/auth/me: %d %s", code, body)
	}
	if code, body := alice.do(t, "POST", "/api/v2/conversations", `{"title":"mine"}`); code != http.StatusCreated {
		t.Fatalf("create with a session: %d %s", code, body)
	}
	// A write without the CSRF token and without an Origin is refused.
	req, _ := http.NewRequest("POST", as.url+"/api/v2/conversations", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err = alice.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("write without CSRF: %d", resp.StatusCode)
	}
	// Nothing secret reaches the log: not the client secret, the session
	// cookie or the CSRF token; the sign-in itself is logged.
	for name, secret := range map[string]string{"client secret": testClientSecret, "session cookie": cookie(alice.c, as.url, auth.SessionCookie), "CSRF token": alice.csrf} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the log holds the %s: %s", name, logs.String())
		}
	}
	if !strings.Contains(logs.String(), "signed in") {
		t.Errorf("the sign-in is not logged: %s", logs.String())
	}
	// A bearer token is not a way in when sign-in is on.
	req, _ = http.NewRequest("GET", as.url+"/api/v2/conversations", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, _ = http.DefaultClient.Do(req)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a token with sign-in on: %d", resp.StatusCode)
	}
}

func TestSessionCookieAttributes(t *testing.T) {
	as := startAccounts(t, Options{}, nil)
	c := authtest.Browser()
	var setCookies []string
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if r := req.Response; r != nil {
			setCookies = append(setCookies, r.Header.Values("Set-Cookie")...)
		}
		return nil
	}
	if _, _, err := as.idp.SignIn(c, as.url+"/", authtest.AliceSubject); err != nil {
		t.Fatal(err)
	}
	var session string
	for _, sc := range setCookies {
		if strings.HasPrefix(sc, auth.SessionCookie+"=") && !strings.Contains(sc, "Max-Age=0") {
			session = sc
		}
	}
	if !strings.Contains(session, "HttpOnly") || !strings.Contains(session, "SameSite=Lax") || strings.Contains(session, "Secure") {
		t.Fatalf("session cookie on an http public URL: %q", session)
	}
	// 256 random bits.
	v, _, _ := strings.Cut(strings.TrimPrefix(session, auth.SessionCookie+"="), ";")
	if b, err := base64.RawURLEncoding.DecodeString(v); err != nil || len(b) != 32 {
		t.Fatalf("session value %q is not 32 random bytes", v)
	}
}

func TestSessionsRefused(t *testing.T) {
	as := startAccounts(t, Options{}, nil)
	alice := as.signIn(t, authtest.AliceSubject)
	u, _ := url.Parse(as.url)
	value := cookie(alice.c, as.url, auth.SessionCookie)

	try := func(name, v string) int {
		req, _ := http.NewRequest("GET", as.url+"/api/v2/conversations", nil)
		req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: v})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := try("valid", value); code != 200 {
		t.Fatalf("the signed-in cookie: %d", code)
	}
	if code := try("forged", strings.Repeat("A", len(value))); code != http.StatusUnauthorized {
		t.Fatalf("a forged cookie: %d", code)
	}
	// Signing in again rotates the cookie: the earlier value is dead.
	if _, _, err := as.idp.SignIn(alice.c, as.url+auth.LoginPath, authtest.AliceSubject); err != nil {
		t.Fatal(err)
	}
	if cookie(alice.c, as.url, auth.SessionCookie) == value {
		t.Fatal("signing in again kept the session cookie's value")
	}
	if code := try("rotated", value); code != http.StatusUnauthorized {
		t.Fatalf("the cookie from before signing in again: %d", code)
	}
	value = cookie(alice.c, as.url, auth.SessionCookie)
	alice.csrf = cookie(alice.c, as.url, auth.CSRFCookie)
	// Expired: the clock moves past the session's lifetime.
	as.clock.Store(time.Now().Add(auth.DefaultTTL + time.Minute).UnixNano())
	if code := try("expired", value); code != http.StatusUnauthorized {
		t.Fatalf("an expired cookie: %d", code)
	}
	as.clock.Store(0)
	if code := try("valid again", value); code != 200 {
		t.Fatalf("the cookie with the clock back: %d", code)
	}
	// Sign-out without the CSRF token is refused; with it, the session ends.
	req, _ := http.NewRequest("POST", as.url+auth.LogoutPath, nil)
	req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: value})
	resp, _ := http.DefaultClient.Do(req)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || try("after a refused sign-out", value) != 200 {
		t.Fatalf("sign-out without CSRF: %d", resp.StatusCode)
	}
	if code, _ := alice.do(t, "POST", auth.LogoutPath, ""); code != 200 {
		t.Fatalf("sign-out: %d", code)
	}
	if cookie(alice.c, as.url, auth.SessionCookie) != "" {
		t.Fatal("sign-out left the session cookie in the browser")
	}
	if code := try("signed out", value); code != http.StatusUnauthorized {
		t.Fatalf("a signed-out cookie: %d", code)
	}
	_ = u
}

// startLogin begins a sign-in and returns the browser, stopped at the
// provider's answer to folio's callback (not yet followed).
func (as *accountsServer) stopAtCallback(t *testing.T) (*http.Client, *url.URL) {
	t.Helper()
	c := authtest.Browser()
	var callback *url.URL
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), as.url+auth.CallbackPath) {
			callback = req.URL
			return http.ErrUseLastResponse
		}
		return nil
	}
	if _, _, err := as.idp.SignIn(c, as.url+"/", authtest.AliceSubject); err != nil {
		t.Fatal(err)
	}
	if callback == nil {
		t.Fatal("the provider never sent the browser to the callback")
	}
	return c, callback
}

func getStatus(t *testing.T, c *http.Client, u string) int {
	t.Helper()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestCallbackStateAndNonce(t *testing.T) {
	as := startAccounts(t, Options{}, nil)
	// The untouched answer signs in (so the refusals below are the checks'
	// doing).
	c, cb := as.stopAtCallback(t)
	if code := getStatus(t, c, cb.String()); code != http.StatusSeeOther || cookie(c, as.url, auth.SessionCookie) == "" {
		t.Fatalf("the provider's answer: %d", code)
	}

	c, cb = as.stopAtCallback(t)
	q := cb.Query()
	q.Set("state", q.Get("state")+"x")
	bad := *cb
	bad.RawQuery = q.Encode()
	if code := getStatus(t, c, bad.String()); code != http.StatusBadRequest || cookie(c, as.url, auth.SessionCookie) != "" {
		t.Fatalf("a state mismatch: %d", code)
	}

	// The nonce the browser's login cookie remembers differs from the one
	// the provider put in the ID token.
	c, cb = as.stopAtCallback(t)
	u, _ := url.Parse(as.url + "/auth/")
	for _, k := range c.Jar.Cookies(u) {
		if k.Name != "folio_login" {
			continue
		}
		raw, _ := base64.RawURLEncoding.DecodeString(k.Value)
		var p map[string]string
		json.Unmarshal(raw, &p)
		p["n"] = "another-nonce"
		raw, _ = json.Marshal(p)
		c.Jar.SetCookies(u, []*http.Cookie{{Name: "folio_login", Value: base64.RawURLEncoding.EncodeToString(raw), Path: "/auth/"}})
	}
	if code := getStatus(t, c, cb.String()); code != http.StatusForbidden || cookie(c, as.url, auth.SessionCookie) != "" {
		t.Fatalf("a nonce mismatch: %d", code)
	}

	// A callback no sign-in started here.
	if code := getStatus(t, authtest.Browser(), cb.String()); code != http.StatusBadRequest {
		t.Fatalf("a callback without a sign-in: %d", code)
	}
}

// The provider goes down between the login form and the callback: the
// callback answers a page that says so, and the server keeps serving.
func TestProviderOutageDuringSignIn(t *testing.T) {
	as := startAccounts(t, Options{}, nil)
	c, cb := as.stopAtCallback(t)
	as.idp.Stop()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Get(cb.String())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(b), "Sign-in failed") || cookie(c, as.url, auth.SessionCookie) != "" {
		t.Fatalf("callback with the provider down: %d %s", resp.StatusCode, b)
	}
	if code := getStatus(t, authtest.Browser(), as.url+"/api/v2/conversations"); code != http.StatusUnauthorized {
		t.Fatalf("the server after the outage: %d", code)
	}
}
