//go:build !unix

package server

import (
	"context"
	"errors"
	"net/http"
)

// LocalEndpoint is a server's listener on its Unix socket; there is none
// on this system.
type LocalEndpoint struct{ Path string }

// Close does nothing here.
func (e *LocalEndpoint) Close() error { return nil }

// errNoLocal says why there is no local endpoint.
var errNoLocal = errors.New("local endpoint: Unix sockets are not supported on this system")

// ServeLocal has no local endpoint to serve on this system.
func (s *Server) ServeLocal(context.Context, string) (*LocalEndpoint, error) { return nil, errNoLocal }

// serveLocalHandler has no local endpoint to serve on this system.
func serveLocalHandler(context.Context, string, http.Handler) (*LocalEndpoint, error) {
	return nil, errNoLocal
}

func fromLocalPeer(*http.Request) bool { return false }

func localPeer(context.Context) bool { return false }
