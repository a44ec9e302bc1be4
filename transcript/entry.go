package transcript

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// Entry is one fact of a conversation. Its ID is stable for life: a streamed
// answer keeps the ID it got with its first accepted text, and a hydrated
// entry keeps the ID it was saved with.
type Entry struct {
	ID        string
	Content   Content
	Timestamp time.Time
}

// Durable returns the entry as it may be persisted: a tool's ephemeral
// presentation values (Presentation.Ephemeral) left out. changed is false
// when there were none; e is then returned as is. Whatever writes entries
// to storage writes this view, so an open tool's draft or ephemeral item,
// which views show live, never reaches it.
func (e Entry) Durable() (d Entry, changed bool) {
	t, ok := e.Content.(Tool)
	if !ok {
		return e, false
	}
	if t, changed = t.Durable(); changed {
		e.Content = t
	}
	return e, changed
}

// Fingerprint identifies an entry's facts: the SHA-256 of its canonical JSON.
// Two entries with the same fingerprint are the same fact.
type Fingerprint [sha256.Size]byte

func (f Fingerprint) String() string { return hex.EncodeToString(f[:8]) }

// FingerprintOf hashes e's canonical encoding. An entry that cannot be
// encoded (it fails Validate) has the zero fingerprint.
func FingerprintOf(e Entry) Fingerprint {
	if e.Validate() != nil {
		return Fingerprint{}
	}
	b, err := e.appendJSON(make([]byte, 0, 256))
	if err != nil {
		return Fingerprint{}
	}
	return sha256.Sum256(b)
}
