//go:build unix

package history

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// acquire takes the exclusive, non-blocking flock on the sidecar and writes
// this process's ID into it for the error a second writer sees. The kernel
// drops the lock when the process dies, so a crash never leaves it held;
// the file a crash leaves behind is taken over by the next writer, which
// learns the dead holder's PID (stale). The returned func removes the
// sidecar and then releases the lock, so a clean exit leaves no file.
func acquire(path string) (release func() error, stale int, err error) {
	lp := lockPath(path)
	// A writer that opened the sidecar just before its holder removed it
	// locks a file no longer in the folder; it notices by comparing inodes
	// and tries again on the current file.
	for range 8 {
		f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, 0, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, 0, &LockedError{Path: path, PID: readPID(lp)}
			}
			return nil, 0, fmt.Errorf("lock %s: %w", path, err)
		}
		held, err1 := f.Stat()
		named, err2 := os.Stat(lp)
		if err1 != nil || err2 != nil || !os.SameFile(held, named) {
			f.Close()
			continue
		}
		if pid := readPID(lp); pid > 0 && pid != os.Getpid() && !alive(pid) {
			stale = pid
		}
		// The PID only improves the message a second writer sees; failing to
		// record it does not weaken the lock.
		if f.Truncate(0) == nil {
			_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
		return func() error {
			// Remove while still holding the lock: whoever opened the
			// old file meanwhile sees it unlinked and retries.
			rerr := os.Remove(lp)
			if errors.Is(rerr, os.ErrNotExist) {
				rerr = nil
			}
			return errors.Join(rerr, f.Close())
		}, stale, nil
	}
	return nil, 0, fmt.Errorf("lock %s: the lock file kept changing under this process", path)
}

func readPID(lp string) int {
	b, _ := os.ReadFile(lp)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// alive reports whether process pid exists (EPERM: it does, as another
// user's).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
