package auth

import "errors"

// ErrNoSession is returned by a Store's Get for a session it does not hold
// (never made, ended, or expired), and by Identify for a request without a
// valid session cookie.
var ErrNoSession = errors.New("no session")

// ErrIssuer is returned by New when the issuer cannot be reached or its
// discovery document is unusable; the message names the issuer URL.
var ErrIssuer = errors.New("the OpenID Connect issuer cannot be used")

// ErrConfig is returned by New for settings that are missing or malformed.
var ErrConfig = errors.New("invalid sign-in settings")
