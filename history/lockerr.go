package history

import (
	"fmt"
	"strconv"
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

// lockPath is the sidecar file that guards a log. The log itself is
// replaced by rename on upgrade and compaction, so a lock on its inode would
// not survive.
func lockPath(path string) string { return path + ".lock" }
