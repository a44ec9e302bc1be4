package history

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// LockedError is returned by Open when another writer holds the log. It
// unwraps to ErrLocked.
type LockedError struct {
	Path string
	// PID is the holder's process ID, or 0 when it could not be read (the
	// holder had just taken the lock).
	PID int
}

func (e *LockedError) Error() string {
	who := "another folio process"
	if e.PID > 0 {
		who = "folio process " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("%s is being written by %s; close it there, or open the log read-only", e.Path, who)
}

func (e *LockedError) Unwrap() error { return ErrLocked }

// lockPath is the sidecar file whose flock guards a log. The log itself is
// replaced by rename on upgrade and compaction, so a lock on its inode would
// not survive; the sidecar is never replaced or removed (removing a lock
// file races with a process about to lock it).
func lockPath(path string) string { return path + ".lock" }

// acquire takes the exclusive, non-blocking flock on the sidecar and writes
// this process's ID into it for the error a second writer sees. The kernel
// drops the lock when the process dies, so a crash never leaves it held.
func acquire(path string) (*os.File, error) {
	f, err := os.OpenFile(lockPath(path), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			b, _ := os.ReadFile(lockPath(path))
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return nil, &LockedError{Path: path, PID: pid}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}
