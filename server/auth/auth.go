package auth

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-json-experiment/json"
	"golang.org/x/oauth2"
)

// Cookie names. The session cookie is HttpOnly; the CSRF cookie is readable
// by the app's script, which copies it into X-CSRF-Token on writes (a page
// of another site can neither read it nor set the header).
const (
	SessionCookie = "folio_session"
	CSRFCookie    = "folio_csrf"
	loginCookie   = "folio_login"
	// CSRFHeader carries the session's CSRF token on a write.
	CSRFHeader = "X-CSRF-Token"
)

// Addresses served by Handler.
const (
	LoginPath    = "/auth/login"
	CallbackPath = "/auth/callback"
	LogoutPath   = "/auth/logout"
	MePath       = "/auth/me"
	signedOut    = "/auth/signed-out"
)

// DefaultTTL is how long a session lasts when Config.TTL is zero.
const DefaultTTL = 12 * time.Hour

// loginTTL bounds the time between leaving for the provider and coming back.
const loginTTL = 10 * time.Minute

// Config is what New needs to sign people in.
type Config struct {
	// Issuer is the provider's issuer URL (its discovery document is at
	// Issuer + "/.well-known/openid-configuration").
	Issuer string
	// ClientID and ClientSecret are folio's registration at the provider.
	// An empty secret is a public client (PKCE alone).
	ClientID, ClientSecret string
	// PublicURL is the address people open folio at (scheme and host, e.g.
	// https://folio.example.com); the callback is PublicURL + /auth/callback.
	// Secure cookies follow its scheme.
	PublicURL string
	// Sessions keeps the sessions; every replica must share it.
	Sessions Store
	// Admins are subjects or e-mail addresses with the admin role.
	Admins []string
	// TTL is a session's lifetime (DefaultTTL when zero).
	TTL time.Duration
	// HTTPClient talks to the provider (a client with a 15 s timeout when nil).
	HTTPClient *http.Client
	// Logger receives sign-in outcomes, never tokens, codes or cookies.
	Logger *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Identity is who a request comes from.
type Identity struct {
	Subject, Email, Name string
	Admin                bool
	// Session is the store key of the session the request came with; the
	// server closes that session's WebSockets when it ends.
	Session string
	// Expires is when the session ends.
	Expires time.Time
}

// Auth signs people in and recognises their sessions.
type Auth struct {
	cfg      Config
	oauth    oauth2.Config
	verifier *oidc.IDTokenVerifier
	provider *oidc.Provider
	secure   bool
	client   *http.Client
}

// New checks cfg and reads the issuer's discovery document, so a wrong or
// unreachable issuer stops the server before it serves anyone.
func New(ctx context.Context, cfg Config) (*Auth, error) {
	iu, err := url.Parse(cfg.Issuer)
	if err != nil || (iu.Scheme != "https" && iu.Scheme != "http") || iu.Host == "" {
		return nil, fmt.Errorf("%w: issuer %q is not an http(s) URL", ErrConfig, cfg.Issuer)
	}
	if cfg.ClientID == "" {
		return nil, fmt.Errorf("%w: no client ID", ErrConfig)
	}
	pu, err := url.Parse(cfg.PublicURL)
	if err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "" || (pu.Path != "" && pu.Path != "/") || pu.RawQuery != "" {
		return nil, fmt.Errorf("%w: public URL %q must be scheme://host[:port] with no path", ErrConfig, cfg.PublicURL)
	}
	if cfg.Sessions == nil {
		return nil, fmt.Errorf("%w: no session store", ErrConfig)
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 15 * time.Second}
	}
	dctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, client), 20*time.Second)
	defer cancel()
	p, err := oidc.NewProvider(dctx, cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrIssuer, cfg.Issuer, err)
	}
	var disc struct {
		Methods []string `json:"code_challenge_methods_supported"`
	}
	if err := p.Claims(&disc); err == nil && len(disc.Methods) > 0 && !slices.Contains(disc.Methods, "S256") {
		return nil, fmt.Errorf("%w: %s does not offer PKCE with S256 (code_challenge_methods_supported: %v)", ErrIssuer, cfg.Issuer, disc.Methods)
	}
	base := strings.TrimSuffix(pu.String(), "/")
	a := &Auth{
		cfg: cfg,
		oauth: oauth2.Config{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, Endpoint: p.Endpoint(),
			RedirectURL: base + CallbackPath, Scopes: []string{oidc.ScopeOpenID, "email", "profile"}},
		verifier: p.VerifierContext(oidc.ClientContext(context.Background(), client),
			&oidc.Config{ClientID: cfg.ClientID, Now: cfg.Now}),
		secure:   pu.Scheme == "https",
		client:   client,
		provider: p,
	}
	return a, nil
}

// Handler serves /auth/login, /auth/callback, /auth/logout, /auth/me and
// the signed-out page. It must sit behind the server's Host and Origin
// checks, which refuse a foreign Origin before a write gets here.
func (a *Auth) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+LoginPath, a.login)
	mux.HandleFunc("GET "+CallbackPath, a.callback)
	mux.HandleFunc("POST "+LogoutPath, a.logout)
	mux.HandleFunc("GET "+MePath, a.me)
	mux.HandleFunc("GET "+signedOut, func(w http.ResponseWriter, r *http.Request) {
		page(w, http.StatusOK, "Signed out", "You are signed out of folio.")
	})
	mux.HandleFunc("/auth/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such address", http.StatusNotFound)
	})
	return mux
}

// pending is the sign-in in flight, kept in the browser's login cookie.
type pending struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Return   string `json:"r"`
}

// safeReturn keeps a return address on this site: a path, not "//host".
func safeReturn(p string) string {
	if p == "" || p[0] != '/' || strings.HasPrefix(p, "//") || strings.ContainsAny(p, "\\\r\n") || len(p) > 2048 {
		return "/"
	}
	return p
}

func (a *Auth) login(w http.ResponseWriter, r *http.Request) {
	p := pending{State: randomToken(24), Nonce: randomToken(24), Verifier: oauth2.GenerateVerifier(),
		Return: safeReturn(r.URL.Query().Get("return"))}
	b, _ := json.Marshal(p)
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: base64.RawURLEncoding.EncodeToString(b), Path: "/auth/",
		MaxAge: int(loginTTL / time.Second), HttpOnly: true, Secure: a.secure, SameSite: http.SameSiteLaxMode})
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, a.oauth.AuthCodeURL(p.State, oidc.Nonce(p.Nonce), oauth2.S256ChallengeOption(p.Verifier)), http.StatusFound)
}

// refuse ends a sign-in that cannot go on, with a page that says why and
// offers to start again. reason is logged; it never holds a token.
func (a *Auth) refuse(w http.ResponseWriter, status int, reason, text string) {
	a.cfg.Logger.Warn("sign-in refused", "reason", reason)
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Path: "/auth/", MaxAge: -1, HttpOnly: true, Secure: a.secure, SameSite: http.SameSiteLaxMode})
	page(w, status, "Sign-in failed", text)
}

func (a *Auth) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var p pending
	c, err := r.Cookie(loginCookie)
	if err == nil {
		var b []byte
		if b, err = base64.RawURLEncoding.DecodeString(c.Value); err == nil {
			err = json.Unmarshal(b, &p)
		}
	}
	if err != nil || p.State == "" {
		a.refuse(w, http.StatusBadRequest, "no sign-in in progress", "This sign-in was not started here, or it took too long.")
		return
	}
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(p.State)) != 1 {
		a.refuse(w, http.StatusBadRequest, "state mismatch", "The answer from the identity provider does not belong to this sign-in.")
		return
	}
	if e := q.Get("error"); e != "" {
		a.refuse(w, http.StatusForbidden, "provider refused: "+clip(e), "The identity provider refused the sign-in ("+clip(e)+").")
		return
	}
	ctx, cancel := context.WithTimeout(context.WithValue(r.Context(), oauth2.HTTPClient, a.client), 20*time.Second)
	defer cancel()
	tok, err := a.oauth.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(p.Verifier))
	if err != nil {
		a.refuse(w, http.StatusBadGateway, "code exchange failed", "The identity provider did not complete the sign-in; try again in a moment.")
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		a.refuse(w, http.StatusBadGateway, "no id_token in the token response", "The identity provider sent no ID token.")
		return
	}
	idt, err := a.verifier.Verify(ctx, raw)
	if err != nil {
		a.refuse(w, http.StatusForbidden, "ID token refused: "+clip(err.Error()), "The identity provider's answer could not be verified.")
		return
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(p.Nonce)) != 1 {
		a.refuse(w, http.StatusForbidden, "nonce mismatch", "The identity provider's answer does not belong to this sign-in.")
		return
	}
	var claims struct {
		Email    string `json:"email"`
		Verified bool   `json:"email_verified"`
		Name     string `json:"name"`
	}
	idt.Claims(&claims)
	if !claims.Verified {
		claims.Email = "" // an unverified address names nobody (--admin matches it)
	}
	if claims.Email == "" || claims.Name == "" {
		// Many providers put the profile only behind userinfo. It adds
		// nothing to who signed in (the verified token says that), so a
		// failure here costs only the e-mail address and name.
		if ui, err := a.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok)); err == nil && ui.Subject == idt.Subject {
			var more struct {
				Name string `json:"name"`
			}
			ui.Claims(&more)
			if claims.Email == "" && ui.EmailVerified {
				claims.Email = ui.Email
			}
			if claims.Name == "" {
				claims.Name = more.Name
			}
		}
	}
	// Rotation: whatever session this browser had ends; the new one has a
	// new cookie value and a new CSRF token.
	if old, err := r.Cookie(SessionCookie); err == nil {
		a.cfg.Sessions.Delete(r.Context(), keyOf(old.Value))
	}
	now := a.cfg.Now()
	s := Session{Subject: idt.Subject, Email: claims.Email, Name: claims.Name, CSRF: randomToken(24),
		Created: now, Expires: now.Add(a.cfg.TTL)}
	value := randomToken(32)
	if err := a.cfg.Sessions.Put(r.Context(), keyOf(value), s); err != nil {
		a.cfg.Logger.Error("cannot save a session", "err", err)
		page(w, http.StatusServiceUnavailable, "Sign-in failed", "folio could not save the session; try again in a moment.")
		return
	}
	a.cfg.Logger.Info("signed in", "subject", s.Subject)
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Path: "/auth/", MaxAge: -1, HttpOnly: true, Secure: a.secure, SameSite: http.SameSiteLaxMode})
	a.setCookies(w, value, s)
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, safeReturn(p.Return), http.StatusSeeOther)
}

func (a *Auth) setCookies(w http.ResponseWriter, value string, s Session) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: value, Path: "/", Expires: s.Expires,
		HttpOnly: true, Secure: a.secure, SameSite: http.SameSiteLaxMode})
	http.SetCookie(w, &http.Cookie{Name: CSRFCookie, Value: s.CSRF, Path: "/", Expires: s.Expires,
		Secure: a.secure, SameSite: http.SameSiteLaxMode})
}

func (a *Auth) clearCookies(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Path: "/", MaxAge: -1, HttpOnly: true, Secure: a.secure, SameSite: http.SameSiteLaxMode})
	http.SetCookie(w, &http.Cookie{Name: CSRFCookie, Path: "/", MaxAge: -1, Secure: a.secure, SameSite: http.SameSiteLaxMode})
}

// Identify returns the session of the request's cookie and who it is.
func (a *Auth) Identify(r *http.Request) (Identity, Session, error) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return Identity{}, Session{}, ErrNoSession
	}
	key := keyOf(c.Value)
	s, err := a.Check(r.Context(), key)
	if err != nil {
		return Identity{}, Session{}, err
	}
	return Identity{Subject: s.Subject, Email: s.Email, Name: s.Name, Admin: a.IsAdmin(s.Subject, s.Email),
		Session: key, Expires: s.Expires}, s, nil
}

// Check returns the session under key (Identity.Session) if it is still
// live: ErrNoSession once it was ended or expired.
func (a *Auth) Check(ctx context.Context, key string) (Session, error) {
	s, err := a.cfg.Sessions.Get(ctx, key)
	if err != nil {
		return Session{}, err
	}
	if !a.cfg.Now().Before(s.Expires) {
		return Session{}, ErrNoSession
	}
	return s, nil
}

// OnEnded has fn told the key of every session that ends (signed out
// here, or on another replica when the store tells), and reports whether
// the store tells at all (EndNotifier).
func (a *Auth) OnEnded(fn func(key string)) bool {
	n, ok := a.cfg.Sessions.(EndNotifier)
	if ok {
		n.OnEnded(fn)
	}
	return ok
}

// IsAdmin reports whether subject or email is one of Config.Admins.
func (a *Auth) IsAdmin(subject, email string) bool {
	for _, x := range a.cfg.Admins {
		if x == subject || (email != "" && strings.EqualFold(x, email)) {
			return true
		}
	}
	return false
}

// WriteAllowed reports whether a state-changing request or a WebSocket
// upgrade made with session s may go on: it carries the session's CSRF
// token, or an Origin header (which the server's admission has already
// required to be its own).
func WriteAllowed(r *http.Request, s Session) bool {
	if r.Header.Get("Origin") != "" {
		return true
	}
	got := r.Header.Get(CSRFHeader)
	if got == "" && r.Method == http.MethodPost && r.Header.Get("Content-Type") == "application/x-www-form-urlencoded" {
		got = r.PostFormValue("csrf")
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.CSRF)) == 1
}

func (a *Auth) logout(w http.ResponseWriter, r *http.Request) {
	c, err := r.Cookie(SessionCookie)
	if err == nil {
		key := keyOf(c.Value)
		if s, err := a.cfg.Sessions.Get(r.Context(), key); err == nil {
			if !WriteAllowed(r, s) {
				http.Error(w, "sign-out needs the session's CSRF token (X-CSRF-Token) or a same-site Origin", http.StatusForbidden)
				return
			}
			if err := a.cfg.Sessions.Delete(r.Context(), key); err != nil {
				a.cfg.Logger.Error("cannot end a session", "err", err)
				http.Error(w, "the session could not be ended; try again", http.StatusServiceUnavailable)
				return
			}
			a.cfg.Logger.Info("signed out", "subject", s.Subject)
		}
	}
	a.clearCookies(w)
	http.Redirect(w, r, signedOut, http.StatusSeeOther)
}

// me describes the request's session to the app: who, admin or not, and
// the CSRF token. Without a session it answers 401 with where to sign in.
func (a *Auth) me(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "application/json")
	id, s, err := a.Identify(r)
	if err != nil {
		w.WriteHeader(http.StatusUnauthorized)
		b, _ := json.Marshal(map[string]string{"signIn": LoginPath, "signOut": LogoutPath})
		w.Write(b)
		return
	}
	b, _ := json.Marshal(map[string]any{"subject": id.Subject, "email": id.Email, "name": id.Name, "admin": id.Admin,
		"csrf": s.CSRF, "expires": s.Expires.UTC().Format(time.RFC3339), "signOut": LogoutPath})
	w.Write(b)
}

func page(w http.ResponseWriter, status int, title, text string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>%s · folio</title></head>`+
		`<body><h1>%s</h1><p>%s</p><p><a href="%s">Sign in</a></p></body></html>`,
		html.EscapeString(title), html.EscapeString(title), html.EscapeString(text), LoginPath)
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// IsNoSession reports whether err means the request has no valid session.
func IsNoSession(err error) bool { return errors.Is(err, ErrNoSession) }
