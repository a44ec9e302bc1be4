//go:build unix

package server

import (
	"errors"
	"syscall"
)

// processAlive reports whether process pid exists (EPERM: it does, as
// another user's).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
