//go:build unix && !linux

package server

import (
	"errors"
	"net"
)

// peerCred is only implemented on Linux (SO_PEERCRED); elsewhere the
// endpoint refuses every connection rather than trust the file modes alone.
func peerCred(net.Conn) (peerIdent, error) {
	return peerIdent{}, errors.New("local endpoint: peer credentials are only checked on Linux")
}
