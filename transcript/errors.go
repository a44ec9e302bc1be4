package transcript

import (
	"errors"
	"fmt"
)

// ErrDuplicateID is returned when a document would hold two entries with the
// same ID, by NewDocument, Document.Append and the store.
var ErrDuplicateID = errors.New("duplicate entry id")

// ErrLeaseRetired is returned by writes made through a lease whose document
// lifetime has ended (the document was replaced or cleared). The write was
// dropped; it is not a failure of the new document.
var ErrLeaseRetired = errors.New("lease retired: the document it was taken on was replaced")

// ErrChildClosed is returned by writes to a child region that completed,
// or by a child's stream writer made before the child was reset.
var ErrChildClosed = errors.New("child region closed")

// ErrStreamClosed is returned by a StreamWriter after Finish.
var ErrStreamClosed = errors.New("stream writer finished")

// ErrNotFound is returned when an entry ID is not in the document.
var ErrNotFound = errors.New("entry not found")

// ErrSettled is returned when a writer tries to change an entry that has
// already settled. Settled facts never change in place.
var ErrSettled = errors.New("entry already settled")

// FieldError is a validation failure at one place in an entry's JSON. Pointer
// is an RFC 6901 JSON pointer relative to the entry ("/content/receipt/status").
type FieldError struct {
	Pointer string
	Msg     string
}

func (e *FieldError) Error() string {
	if e.Pointer == "" {
		return "entry: " + e.Msg
	}
	return fmt.Sprintf("entry %s: %s", e.Pointer, e.Msg)
}

func fieldErr(ptr, format string, args ...any) *FieldError {
	return &FieldError{Pointer: ptr, Msg: fmt.Sprintf(format, args...)}
}
