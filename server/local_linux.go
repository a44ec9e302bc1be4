package server

import (
	"errors"
	"fmt"
	"net"
	"syscall"
)

// peerCred asks the kernel who is at the other end of a Unix connection
// (SO_PEERCRED): the credentials the peer had when it connected.
func peerCred(c net.Conn) (peerIdent, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return peerIdent{}, errors.New("local endpoint: not a Unix connection")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return peerIdent{}, err
	}
	var (
		cred *syscall.Ucred
		cerr error
	)
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return peerIdent{}, err
	}
	if cerr != nil {
		return peerIdent{}, fmt.Errorf("local endpoint: SO_PEERCRED: %w", cerr)
	}
	return peerIdent{PID: int(cred.Pid), UID: int(cred.Uid), GID: int(cred.Gid)}, nil
}
