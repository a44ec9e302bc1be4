//go:build unix

package history

import (
	"os"
	"syscall"
)

// lockIndex takes an exclusive lock on an index file while a commit is
// appended, so two processes extending one index never interleave.
func lockIndex(f *os.File) (func(), error) { return flock(f, syscall.LOCK_EX) }

// lockIndexShared takes a shared lock on an index file while its size and
// last commit are read, so a reader never catches a commit half appended.
func lockIndexShared(f *os.File) (func(), error) { return flock(f, syscall.LOCK_SH) }

func flock(f *os.File, how int) (func(), error) {
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		return nil, err
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }, nil
}
