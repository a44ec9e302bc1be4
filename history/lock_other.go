//go:build !unix

package history

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// acquire, where flock is unavailable, creates the sidecar exclusively and
// removes it on release. Unlike flock it survives a crash: a stale sidecar
// names the dead process, and removing it by hand frees the log.
func acquire(path string) (func() error, error) {
	f, err := os.OpenFile(lockPath(path), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		b, _ := os.ReadFile(lockPath(path))
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return nil, &LockedError{Path: path, PID: pid}
	}
	if err != nil {
		return nil, err
	}
	_, _ = f.WriteString(strconv.Itoa(os.Getpid()) + "\n")
	f.Close()
	return func() error { return os.Remove(lockPath(path)) }, nil
}
