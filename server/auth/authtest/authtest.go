// Package authtest starts a real OpenID Connect provider for tests: the
// zitadel/oidc OP with its example in-memory storage and login page, on
// 127.0.0.1. Its two people sign in with a user name and password through
// the provider's own form, which SignIn fills in over HTTP.
//
// Concurrency: a Provider serves from its own goroutine until the test ends.
package authtest

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
)

// The provider's people (storage.NewUserStore): Alice is "id1", Bob "id2".
const (
	AliceSubject = "id1"
	AliceEmail   = "test-user@zitadel.ch"
	BobSubject   = "id2"
	BobEmail     = "test-user2@zitadel.ch"
	password     = "verysecure"
)

// Provider is a running OpenID Connect provider.
type Provider struct {
	Issuer string
	host   string
	stop   func()
}

// Stop takes the provider down (an outage); Start's cleanup stops it too.
func (p *Provider) Stop() { p.stop() }

// Client is a registration at a Provider.
type Client struct {
	ID, Secret string
	Redirects  []string
}

// Start runs a provider on 127.0.0.1 that knows clients, until t ends.
func Start(t testing.TB, clients ...Client) *Provider {
	t.Helper()
	p, stop, err := start(clients...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return p
}

// Serve runs a provider until the process ends (for the browser suite's
// cmd idp); it panics if it cannot listen.
func Serve(clients ...Client) *Provider {
	p, _, err := start(clients...)
	if err != nil {
		panic(err)
	}
	return p
}

func start(clients ...Client) (*Provider, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	issuer := "http://" + ln.Addr().String()
	reg := map[string]*storage.Client{}
	for _, c := range clients {
		reg[c.ID] = storage.WebClient(c.ID, c.Secret, c.Redirects...)
	}
	st := storage.NewStorageWithClients(storage.NewUserStore(issuer), reg)
	// The example router logs every request through slog's default logger.
	slog.SetDefault(slog.New(slog.DiscardHandler))
	srv := &http.Server{Handler: exampleop.SetupServer(issuer, st, nil, false)}
	go srv.Serve(ln)
	stop := func() { srv.Close() }
	return &Provider{Issuer: issuer, host: ln.Addr().String(), stop: stop}, stop, nil
}

// UserName is the provider's login name for subject (AliceSubject or
// BobSubject).
func (p *Provider) UserName(subject string) string {
	if subject == AliceSubject {
		h, _, _ := net.SplitHostPort(p.host)
		return "test-user@" + h
	}
	return "test-user2"
}

// Browser is an HTTP client with a cookie jar that follows redirects, as a
// browser would.
func Browser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar}
}

var authRequestID = regexp.MustCompile(`name="id" value="([^"]+)"`)

// SignIn follows start (folio's sign-in address) to the provider's login
// form, signs in as subject, and follows the redirects back. It returns the
// last response, read whole, and its body.
func (p *Provider) SignIn(c *http.Client, start, subject string) (*http.Response, string, error) {
	resp, err := c.Get(start)
	if err != nil {
		return nil, "", err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := authRequestID.FindSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil || !strings.HasPrefix(resp.Request.URL.String(), p.Issuer) {
		return resp, string(body), fmt.Errorf("authtest: expected the provider's login form, got %d at %s", resp.StatusCode, resp.Request.URL)
	}
	form := url.Values{"id": {string(m[1])}, "username": {p.UserName(subject)}, "password": {password}}
	resp, err = c.PostForm(p.Issuer+"/login/username", form)
	if err != nil {
		return nil, "", err
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body), nil
}
