//go:build !unix

package history

import "os"

// lockIndex is a no-op where flock is missing: the log's own lock keeps a
// second writer out, and a reader's append checks the file's size first.
func lockIndex(f *os.File) (func(), error) { return func() {}, nil }

// lockIndexShared is a no-op where flock is missing; a reader that catches
// a commit half appended finds its trailer damaged and rebuilds.
func lockIndexShared(f *os.File) (func(), error) { return func() {}, nil }
