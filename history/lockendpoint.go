package history

import (
	"path/filepath"
	"strconv"
)

// EndpointsDir is the folder of the data folder where every folio process
// that owns conversations keeps its local endpoint: a Unix socket named by
// its process ID (EndpointPath). The folder is 0700 and each socket 0600.
func EndpointsDir(dataDir string) string { return filepath.Join(dataDir, "run") }

// EndpointPath is the local endpoint of folio process pid in dataDir. A
// LockedError names the holder's PID, so a process refused a log's lock
// finds the owner's endpoint with EndpointPath(dataDir, err.PID) and attaches
// to it instead of giving up. The socket may be missing (an owner that
// serves no endpoint) or dead (an owner killed before removing it); the
// caller tells by connecting.
func EndpointPath(dataDir string, pid int) string {
	return filepath.Join(EndpointsDir(dataDir), strconv.Itoa(pid)+".sock")
}
