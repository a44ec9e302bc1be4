package search

import (
	"errors"
	"fmt"
)

// ErrQuery is wrapped by every *QueryError: the query itself is wrong, and
// the message says how. Callers show it to the person who typed it.
var ErrQuery = errors.New("bad search query")

// ErrTimeout is returned by Search when a query ran past its time bound.
var ErrTimeout = errors.New("search took too long")

// QueryError says what is wrong with a query and where (a byte offset into
// it, counted from 0).
type QueryError struct {
	Offset int
	Msg    string
}

func (e *QueryError) Error() string {
	return fmt.Sprintf("search query: %s (at character %d)", e.Msg, e.Offset+1)
}

func (e *QueryError) Unwrap() error { return ErrQuery }
