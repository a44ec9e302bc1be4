package transcript

import (
	"crypto/rand"
	"encoding/base32"
	"strconv"
	"strings"
	"sync/atomic"
)

// IDSource mints entry IDs in a namespace of its own: a random prefix chosen
// when it is made, then a counter. IDs from two sources, or from a source and
// a hydrated log, never collide. The zero IDSource is not usable; call
// NewIDSource.
type IDSource struct {
	prefix string
	n      atomic.Uint64
}

// NewIDSource returns a source with a fresh random 80-bit prefix.
func NewIDSource() *IDSource {
	var b [10]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	p := strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
	return &IDSource{prefix: p}
}

// Prefix returns the namespace this source mints in.
func (s *IDSource) Prefix() string { return s.prefix }

// observe makes sure Next never returns id: when id is in this source's
// namespace, the counter moves past it. The store calls it for every entry
// it did not mint itself (hydrated, replaced or appended with its own ID), so
// minting needs no lookup in the document.
func (s *IDSource) observe(id string) {
	p := len(s.prefix)
	if len(id) <= p+1 || id[p] != '-' || id[:p] != s.prefix {
		return
	}
	n, err := strconv.ParseUint(id[p+1:], 36, 64)
	if err != nil {
		return
	}
	for {
		cur := s.n.Load()
		if cur >= n || s.n.CompareAndSwap(cur, n) {
			return
		}
	}
}

// Next returns a new ID, "<prefix>-<n>".
func (s *IDSource) Next() string {
	return s.prefix + "-" + strconv.FormatUint(s.n.Add(1), 36)
}
