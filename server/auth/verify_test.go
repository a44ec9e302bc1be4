package auth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/foliodev/folio/server/auth/authtest"
)

// idToken signs in at p as Alice through client id and returns the ID
// token the provider issued.
func idToken(t *testing.T, p *authtest.Provider, id, secret string, catcher *httptest.Server, codes chan string) string {
	t.Helper()
	cfg := oauth2.Config{ClientID: id, ClientSecret: secret, RedirectURL: catcher.URL + "/cb",
		Endpoint: oauth2.Endpoint{AuthURL: p.Issuer + "/auth", TokenURL: p.Issuer + "/oauth/token"}, Scopes: []string{"openid"}}
	v := oauth2.GenerateVerifier()
	start := cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(v))
	if _, _, err := p.SignIn(authtest.Browser(), start, authtest.AliceSubject); err != nil {
		t.Fatal(err)
	}
	tok, err := cfg.Exchange(context.Background(), <-codes, oauth2.VerifierOption(v))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		t.Fatal("no id_token")
	}
	return raw
}

func TestIDTokenOfAnotherIssuerOrClient(t *testing.T) {
	codes := make(chan string, 4)
	catcher := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		codes <- r.URL.Query().Get("code")
	}))
	defer catcher.Close()
	redirect := []string{catcher.URL + "/cb"}
	a := authtest.Start(t, authtest.Client{ID: "folio", Secret: "s", Redirects: redirect},
		authtest.Client{ID: "other", Secret: "s", Redirects: redirect})
	b := authtest.Start(t, authtest.Client{ID: "folio", Secret: "s", Redirects: redirect})
	st, _ := NewFileStore(t.TempDir())
	au, err := New(context.Background(), Config{Issuer: a.Issuer, ClientID: "folio", ClientSecret: "s", PublicURL: catcher.URL, Sessions: st})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := au.verifier.Verify(ctx, idToken(t, a, "folio", "s", catcher, codes)); err != nil {
		t.Fatalf("the issuer's own token for folio: %v", err)
	}
	if _, err := au.verifier.Verify(ctx, idToken(t, b, "folio", "s", catcher, codes)); err == nil {
		t.Fatalf("a token from another issuer: %v", err)
	}
	if _, err := au.verifier.Verify(ctx, idToken(t, a, "other", "s", catcher, codes)); err == nil || !strings.Contains(err.Error(), "audience") {
		t.Fatalf("a token for another client: %v", err)
	}
}

func TestNewRefusesABadIssuer(t *testing.T) {
	st, _ := NewFileStore(t.TempDir())
	// Nothing listens there.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	wrong := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"issuer":"https://elsewhere.example","authorization_endpoint":"x","token_endpoint":"y","jwks_uri":"z"}`))
	}))
	defer wrong.Close()
	for name, issuer := range map[string]string{"unreachable": dead.URL, "wrong discovery": wrong.URL, "not a URL": "folio"} {
		_, err := New(context.Background(), Config{Issuer: issuer, ClientID: "folio", ClientSecret: "very-secret-value", PublicURL: "http://127.0.0.1:1", Sessions: st})
		if err == nil || !strings.Contains(err.Error(), issuer) || strings.Contains(err.Error(), "very-secret-value") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
