package server

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/foliodev/folio/history"
)

// Request admission. Every request passes three checks before a handler
// sees it, so a web page the user happens to visit cannot drive the server:
//
//   - Host must name this server (hostAllowed): the address it is reached
//     on, localhost, 127.0.0.1 or [::1], with the bound port, or a name given
//     in Options.AllowedHosts. A DNS-rebinding page sends its own name and
//     is refused with 421.
//   - A state-changing request (POST, PATCH, PUT, DELETE) and a WebSocket
//     upgrade may carry no Origin, or one naming the same host; anything
//     else is a cross-site request and is refused with 403.
//   - Under /api/ the bearer token (when the server has one) is required,
//     and a JSON body must be labelled application/json, which a plain
//     HTML form cannot send. Uploads take any body, so they are refused
//     outright on a server without a token.
//
// Refusals are answered before the handler runs, so nothing reaches the
// data folder.

// minTokenLen is the shortest token the server accepts.
const minTokenLen = 16

// TokenSubprotocolPrefix starts the WebSocket subprotocol that carries the
// token from a browser, which cannot set headers on an upgrade: the offer
// is "folio-token." followed by the token in unpadded base64url. The
// server answers with the subprotocol Subprotocol, which the client must
// offer as well.
const TokenSubprotocolPrefix = "folio-token."

// Subprotocol is the WebSocket subprotocol the server selects when offered.
const Subprotocol = "folio.v2"

// NewToken returns a random token for one launch of the server (32
// characters of base64url, 192 bits).
func NewToken() string {
	b := make([]byte, 24)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// CheckToken refuses a token too short or made only of whitespace.
func CheckToken(token string) error {
	if strings.TrimFunc(token, unicode.IsSpace) == "" {
		return fmt.Errorf("%w: it is empty or only whitespace", ErrWeakToken)
	}
	if len(token) < minTokenLen {
		return fmt.Errorf("%w: it has %d characters, at least %d are needed", ErrWeakToken, len(token), minTokenLen)
	}
	return nil
}

// admit runs the Host and Origin checks on every request.
func (s *Server) admit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hostAllowed(r) {
			httpError(w, http.StatusMisdirectedRequest, "host-not-allowed",
				fmt.Sprintf("this server does not answer to host %q; start it with --allowed-host NAME to allow another name", clip(r.Host)))
			return
		}
		if (stateChanging(r.Method) || isUpgrade(r)) && !sameOrigin(r) {
			httpError(w, http.StatusForbidden, "origin-not-allowed",
				fmt.Sprintf("cross-origin request from %q refused", clip(r.Header.Get("Origin"))))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func stateChanging(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

func isUpgrade(r *http.Request) bool {
	return r.Header.Get("Upgrade") != "" || strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade")
}

// sameOrigin: no Origin, or an http(s) Origin whose host and port are the
// request's Host (already checked against the allowlist).
func sameOrigin(r *http.Request) bool {
	o := r.Header.Values("Origin")
	if len(o) == 0 {
		return true
	}
	if len(o) > 1 {
		return false
	}
	u, err := url.Parse(o[0])
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	oh, op := splitHostPort(u.Host, u.Scheme)
	rh, rp := splitHostPort(r.Host, "http")
	return strings.EqualFold(oh, rh) && op == rp
}

// splitHostPort splits a Host header; the port defaults to the scheme's.
func splitHostPort(hostport, scheme string) (host, port string) {
	h, p, err := net.SplitHostPort(hostport)
	if err != nil {
		h, p = strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), "80"
		if scheme == "https" {
			p = "443"
		}
	}
	return strings.TrimSuffix(h, "."), p
}

// hostAllowed checks Host against the address the request arrived on.
func (s *Server) hostAllowed(r *http.Request) bool {
	if fromLocalPeer(r) {
		return true // a Unix socket has no host to rebind (local.go)
	}
	la, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	tcp, ok := la.(*net.TCPAddr)
	if !ok || r.Host == "" {
		return false
	}
	host, port := splitHostPort(r.Host, "http")
	bound := strconv.Itoa(tcp.Port)
	for _, a := range s.opts.AllowedHosts {
		if ah, ap, err := net.SplitHostPort(a); err == nil {
			if strings.EqualFold(ah, host) && ap == port {
				return true
			}
		} else if strings.EqualFold(strings.Trim(a, "[]"), host) && port == bound {
			return true
		}
	}
	if port != bound {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.Equal(net.IPv4(127, 0, 0, 1)) || ip.Equal(net.IPv6loopback) || ip.Equal(tcp.IP))
}

// authorize guards /api/: the bearer token when the server has one, JSON
// bodies as application/json, uploads only with a token.
func (s *Server) authorize(next http.Handler) http.Handler {
	want := []byte(s.opts.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fromLocalPeer(r) {
			// The local endpoint checked the peer's user (local.go); a
			// process of the operator's own user sees every conversation,
			// as it could read their logs on disk.
			next.ServeHTTP(w, r)
			return
		}
		if s.opts.Auth != nil {
			var ok bool
			if r, ok = s.signedIn(w, r); !ok {
				return
			}
		} else if len(want) > 0 && subtle.ConstantTimeCompare([]byte(requestToken(r)), want) != 1 {
			httpError(w, http.StatusUnauthorized, "unauthorized", "a valid token is required: Authorization: Bearer TOKEN (the one folio serve printed)")
			return
		}
		if r.Method == http.MethodPost || r.Method == http.MethodPatch || r.Method == http.MethodPut {
			if strings.HasSuffix(r.URL.Path, "/attachments") {
				if len(want) == 0 && s.opts.Auth == nil {
					httpError(w, http.StatusForbidden, "token-required", "uploads need a token; this server was started with --no-token")
					return
				}
			} else if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
				httpError(w, http.StatusUnsupportedMediaType, "unsupported-media-type", "the body must be sent as Content-Type: application/json")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// requestToken is the token a request carries: "Authorization: Bearer T",
// or on the WebSocket upgrade the subprotocol offer "folio-token.<T in
// base64url>".
func requestToken(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return ""
		}
		return strings.TrimSpace(tok)
	}
	if r.URL.Path != "/api/v2/ws" {
		return ""
	}
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(v, ",") {
			if enc, ok := strings.CutPrefix(strings.TrimSpace(p), TokenSubprotocolPrefix); ok {
				if b, err := base64.RawURLEncoding.DecodeString(enc); err == nil {
					return string(b)
				}
			}
		}
	}
	return ""
}

// absPath finds absolute file paths in a message: a slash path of two or
// more components, or a Windows drive path, starting a word.
var absPath = regexp.MustCompile(`(^|[\s"'(=,:])((?:/[^\s"',:;()/]+)+/|[A-Za-z]:\\(?:[^\s"',:;()\\]+\\)*)([^\s"',:;()/\\]*)`)

// clientText is a message as a client may see it: every absolute path cut
// to its last element, so errors never tell a web page where the data
// folder (or anything else) lives. API paths (/api/…) stay.
func clientText(msg string) string {
	if !strings.ContainsAny(msg, "/\\") {
		return msg
	}
	return absPath.ReplaceAllStringFunc(msg, func(m string) string {
		sub := absPath.FindStringSubmatch(m)
		if strings.HasPrefix(sub[2], "/api/") {
			return m
		}
		return sub[1] + sub[3]
	})
}

// lockedText says who holds a conversation's writer lock, without its path.
func lockedText(err error) string {
	var le *history.LockedError
	if errors.As(err, &le) && le.PID > 0 {
		return fmt.Sprintf("folio process %d is writing this conversation; close it there first", le.PID)
	}
	return "another folio process is writing this conversation; close it there first"
}
