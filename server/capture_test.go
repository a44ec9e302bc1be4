package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// openFDs counts this process's open descriptors on files under dir whose
// names end in suffix (Linux: /proc/self/fd).
func openFDs(t testing.TB, dir, suffix string) int {
	t.Helper()
	des, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd here")
	}
	dir, _ = filepath.EvalSymlinks(dir)
	n := 0
	for _, de := range des {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", de.Name()))
		if err == nil && strings.HasPrefix(target, dir) && strings.HasSuffix(target, suffix) {
			n++
		}
	}
	return n
}

// snapshots counts the server's live snapshots: each holds either a
// temporary file in the snapshot folder or, copying nothing, its log's
// page index open.
func (ts *testServer) snapshots(t testing.TB) int {
	t.Helper()
	return countFiles(t, ts.SnapshotDir()) + openFDs(t, ts.data, ".index")
}
