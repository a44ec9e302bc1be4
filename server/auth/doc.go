// Package auth signs people in to folio serve through an OpenID Connect
// provider and keeps their sessions.
//
// Sign-in is the authorization code flow with PKCE: /auth/login sends the
// browser to the provider with a fresh state, nonce and code verifier, all
// three kept in a short-lived HttpOnly cookie of the browser's own (so any
// replica can finish the flow); /auth/callback checks the state, redeems
// the code with the verifier, verifies the ID token against the issuer's
// keys (go-oidc: signature, issuer, audience, expiry) and its nonce, and
// makes a session. The session cookie holds 256 random bits; the Store
// keeps only their SHA-256, so a copy of the store signs nobody in. Every
// replica that shares the Store sees a session at once and its end at
// once. /auth/logout ends it; /auth/me describes it to the app, with the
// CSRF token writes must carry.
//
// Concurrency: an Auth is safe for concurrent use once New returns. A
// FileStore serializes nothing itself: each session is its own file,
// written by rename.
package auth
