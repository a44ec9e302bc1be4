//go:build linux

package history

import (
	"io/fs"
	"syscall"
)

// changeStamp returns the file's inode and status-change time. Unlike the
// modification time, no program can set the change time back, and a log
// replaced by another file gets another inode, so a summary stamped with
// both is not fooled by a copy that kept the old size and mtime.
func changeStamp(fi fs.FileInfo) (ino uint64, ctime int64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	return st.Ino, st.Ctim.Nano()
}
