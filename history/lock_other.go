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
// removes it on release. Unlike flock it survives a crash: a sidecar whose
// process no longer runs is taken over (stale names that process).
func acquire(path string) (func() error, int, error) {
	lp := lockPath(path)
	stale := 0
	for range 2 {
		f, err := os.OpenFile(lp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			b, _ := os.ReadFile(lp)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			if pid > 0 && pid != os.Getpid() && !alive(pid) && stale == 0 {
				stale = pid
				_ = os.Remove(lp)
				continue
			}
			return nil, 0, &LockedError{Path: path, PID: pid}
		}
		if err != nil {
			return nil, 0, err
		}
		_, _ = f.WriteString(strconv.Itoa(os.Getpid()) + "\n")
		f.Close()
		return func() error { return os.Remove(lp) }, stale, nil
	}
	return nil, 0, &LockedError{Path: path}
}

// alive reports whether process pid can still be found.
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
