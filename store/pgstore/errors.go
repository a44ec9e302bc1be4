package pgstore

import (
	"errors"
	"fmt"

	"github.com/foliodev/folio/history"
)

// ErrSchemaNewer is returned by Open when the database's schema was
// migrated by a newer folio than this one.
var ErrSchemaNewer = errors.New("pgstore: the database schema is newer than this folio; update folio")

// errLeaseLost is returned by a Medium's writes after its lease connection
// ended: another writer may hold the conversation now, so this one must
// reopen it.
// It wraps history.ErrLockLost.
var errLeaseLost = fmt.Errorf("pgstore: the writer lease was lost (its connection ended); reopen the conversation: %w", history.ErrLockLost)

// ErrConflict is returned by a write that finds the log changed under its
// lease: something wrote it without the lease. Nothing is written.
var ErrConflict = errors.New("pgstore: the log changed under the writer lease")

// ErrBadID is returned for a conversation ID that is empty, too long or
// holds a NUL byte.
var ErrBadID = errors.New("pgstore: invalid conversation id")

// errCopyElsewhere is returned by a replica writer's ReadCopy when its
// local copy cannot be brought to where the database's log is; the log is
// then read from the database.
var errCopyElsewhere = errors.New("pgstore: the replica's copy is not at the database's log")
