package server

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/foliodev/folio/history"
)

// Snapshot folders. Each server keeps its paging snapshots in a private
// folder under the temporary directory and holds a lock inside it while it
// lives (history.Lock on <folder>/server, an flock the kernel drops when the
// process dies). A server that was killed cannot remove its folder, so every
// new server removes the folders whose lock nobody holds. The folder is made
// under a name the sweep does not look at and renamed once locked, so a
// starting server's folder is never taken for a dead one.

const (
	snapPrefix    = "folio-serve-"
	snapNewPrefix = ".folio-serve-new-"
	snapLockName  = "server"
)

// makeSnapshotDir creates and locks a new server folder under tmp; the
// snapshots go in its "snapshots" subfolder, away from the lock file.
func makeSnapshotDir(tmp string) (string, func() error, error) {
	if tmp == "" {
		tmp = os.TempDir()
	}
	nd, err := os.MkdirTemp(tmp, snapNewPrefix)
	if err != nil {
		return "", nil, err
	}
	unlock, err := history.Lock(filepath.Join(nd, snapLockName))
	if err == nil {
		if err = os.Mkdir(filepath.Join(nd, "snapshots"), 0o700); err != nil {
			unlock()
		}
	}
	if err != nil {
		os.RemoveAll(nd)
		return "", nil, err
	}
	dir := filepath.Join(tmp, snapPrefix+strings.TrimPrefix(filepath.Base(nd), snapNewPrefix))
	if err := os.Rename(nd, dir); err != nil {
		unlock()
		os.RemoveAll(nd)
		return "", nil, err
	}
	return dir, unlock, nil
}

// removeDeadSnapshotDirs removes the snapshot folders under tmp that no live
// server holds. Failures are logged, never fatal: a folder left behind costs
// disk space, not correctness.
func removeDeadSnapshotDirs(tmp string, log *slog.Logger) {
	if tmp == "" {
		tmp = os.TempDir()
	}
	des, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, de := range des {
		if !de.IsDir() || !strings.HasPrefix(de.Name(), snapPrefix) {
			continue
		}
		dir := filepath.Join(tmp, de.Name())
		unlock, err := history.Lock(filepath.Join(dir, snapLockName))
		if errors.Is(err, history.ErrLocked) {
			continue // a live server's
		}
		if err != nil {
			log.Warn("cannot check a snapshot folder", "folder", de.Name(), "err", err)
			continue
		}
		err = os.RemoveAll(dir)
		unlock()
		if err != nil {
			log.Warn("cannot remove a dead server's snapshot folder", "folder", de.Name(), "err", err)
		}
	}
}
