package history

import "errors"

// ErrNewerVersion is returned by Read, Load and every writing method when the
// log's header names a version above the one this folio writes. The file is
// left exactly as it was.
var ErrNewerVersion = errors.New("log was written by a newer folio; update folio to open it")

// ErrLocked is returned by Open when another writer holds the log's lock. The
// *LockedError wrapping it names the holder's process ID.
var ErrLocked = errors.New("log is locked by another writer")

// ErrLockLost is wrapped by a medium's errors once the writer's hold on
// the log ended without Close (a database lease whose session ended): the
// log must be opened again, under a new hold, before it can be written.
var ErrLockLost = errors.New("the writer's hold on the log was lost")

// ErrNoHeader is returned by Read and Load when the first line of a log is
// not a valid conversation header, so no record can be trusted.
var ErrNoHeader = errors.New("log has no valid conversation header")

// ErrDuplicateID is returned by SaveEntries when two entries share an ID. It
// is checked before the log is created or touched.
var ErrDuplicateID = errors.New("duplicate entry id")

// ErrInvalidMessage is returned by Save when a model-facing message fails
// validation; nothing is written.
var ErrInvalidMessage = errors.New("invalid model message")

// ErrClosed is returned by methods of a Log after Close.
var ErrClosed = errors.New("log is closed")

// ErrNoDataDir is returned by DataDir when no data folder can be determined.
var ErrNoDataDir = errors.New("no data folder: set --data, FOLIO_HOME or HOME")

// ErrUnknownBranch is returned by Fork, SetHead and Conversation.Branch for a
// branch the log does not have.
var ErrUnknownBranch = errors.New("unknown branch")

// ErrForkPoint is returned by Fork when the fork point is not in the parent
// branch: an entry it does not have, or more messages than it holds.
var ErrForkPoint = errors.New("fork point is not in the parent branch")

// ErrIndexDamaged is returned by the page index reader for an index file
// whose framing or checksums do not hold; OpenIndex rebuilds such an index.
var ErrIndexDamaged = errors.New("page index is damaged")

// ErrIndexStale says a page index does not describe its log (another file,
// a shorter log, another last record); OpenIndex rebuilds it.
var ErrIndexStale = errors.New("page index does not match its log")

// ErrNotPaged is returned by OpenIndex for a version 2 log and by
// Index.Document for a branch derived from model messages: their entries
// are not stored as version 3 JSON, so there is nothing to page from the log.
var ErrNotPaged = errors.New("document is not stored as entries")

// ErrImportDiffers is returned by Import when the store already holds a
// log under the ID that is not a prefix of the one imported; nothing is
// written.
var ErrImportDiffers = errors.New("the store holds a different log under this id")

// ErrElided is returned by Save when the document it is given leaves out
// more leading entries (transcript.Document.Elided) than the log holds as
// settled; nothing is written.
var ErrElided = errors.New("document leaves out entries the log does not hold")

// ErrBlobName is returned by a Store's blob methods for an unknown kind or
// a name that could not be stored safely (a ref that is not 32 hex digits,
// an attachment name with a path separator or a leading dot).
var ErrBlobName = errors.New("invalid blob name")

// ErrBlobTooLarge is returned by PutBlob for data over its kind's cap
// (MaxAttachmentBytes, MaxArtifactBytes); nothing is stored.
var ErrBlobTooLarge = errors.New("blob is too large")

// ErrBlobMeta is returned by PutBlob for an attachment without its
// description (Blob.Meta); nothing is stored.
var ErrBlobMeta = errors.New("blob lacks its description")

// ErrBlobDigest is returned by PutBlob when the data does not have the
// digest the caller gave; nothing is stored.
var ErrBlobDigest = errors.New("blob does not match its digest")

// ErrBlobConflict is returned by PutBlob when the name already holds other
// bytes; the stored blob is kept.
var ErrBlobConflict = errors.New("blob name already holds other bytes")

// errNoSidecar: a page index or summary is kept only for a log in a data
// folder's conversations folder or one of its agent folders.
var errNoSidecar = errors.New("history: not a data folder's log, so it gets no sidecar")
