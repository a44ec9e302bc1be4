//go:build unix

package history

import (
	"os"
	"syscall"
)

// lockIndex takes an exclusive lock on an index file while a commit is
// appended, so two processes extending one index never interleave.
func lockIndex(f *os.File) (func(), error) {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return nil, err
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }, nil
}
