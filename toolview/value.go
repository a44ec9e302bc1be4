package toolview

import (
	"time"

	"github.com/foliodev/folio/transcript"
	"github.com/go-json-experiment/json/jsontext"
)

// Revision orders the values of one item. Every accepted update gets a
// revision strictly above the item's previous one.
type Revision int64

// Generation names one lifetime of the host's item state; changes and
// records carry it.
type Generation uint64

// Retention says what happens to an item's value at closure.
type Retention uint8

const (
	// Retained items keep one bounded current value while open and
	// checkpoint the latest accepted value at closure. Intermediate values
	// are never persisted.
	Retained Retention = iota
	// Ephemeral items show their value only while open. At closure the value
	// and the item's artifacts are removed; nothing of it is recorded.
	Ephemeral
)

func (r Retention) String() string {
	if r == Ephemeral {
		return "ephemeral"
	}
	return "retained"
}

// Payload is one replacement value for an item: an opaque JSON payload tagged
// with the schema and version of the adapter that can show it.
type Payload struct {
	Schema  string
	Version int64
	Data    []byte // JSON; the host copies it and never interprets it
	// Revision lets a producer that numbers its own updates have the host
	// validate them: zero asks the host to assign the next revision; any
	// other value must be above the item's current revision.
	Revision Revision
}

// ArtifactCheckpoint replaces an item's value with a reference to an artifact
// the item owns, declaring how many of its bytes are committed.
type ArtifactCheckpoint struct {
	Schema         string
	Version        int64
	Revision       Revision // as in Payload
	Ref            string   // from ArtifactWriter.Ref
	ContentType    string   // empty: the content type the artifact was made with
	CommittedBytes int64
	Final          bool
	Available      bool
	Data           []byte // optional small JSON shown beside the artifact
}

// Value is an item's current value. It is immutable once the host publishes
// it; holders must not modify Payload.
type Value struct {
	Schema   string
	Version  int64
	Payload  jsontext.Value
	Artifact *transcript.Artifact
	// Draft marks a value the host built from an argument draft. Drafts are
	// observation data and are never retained at closure.
	Draft bool
}

// Size is the value's encoded payload size in bytes, the quantity the host
// bounds.
func (v *Value) Size() int64 {
	if v == nil {
		return 0
	}
	return int64(len(v.Payload))
}

// checkpoint turns v into the transcript's presentation form.
func (v *Value) checkpoint(rev Revision) *transcript.Presentation {
	p := &transcript.Presentation{
		Schema:   v.Schema,
		Version:  v.Version,
		Revision: int64(rev),
		Payload:  transcript.RawJSON(v.Payload),
	}
	if v.Artifact != nil {
		a := *v.Artifact
		p.Artifact = &a
	}
	return p
}

// Change reports that an item's value or open state changed. Subscribers get
// the changes of one invocation in order. Value is nil when the item has no
// value, or when closure removed an ephemeral value.
type Change struct {
	Invocation string
	Tool       string
	Item       string // "" for the primary item, else the supplemental key
	Retention  Retention
	Generation Generation
	Revision   Revision
	Open       bool
	Value      *Value
	// Record is set on the last change of a closure: the terminal record,
	// with the timing that is now fixed.
	Record *Record
}

// ItemState is one item of an invocation's state.
type ItemState struct {
	Key       string
	Retention Retention
	Revision  Revision
	Value     *Value
}

// invState is the bounded state of one invocation: its items' current values
// with their revisions, and once closed its fixed timing and outcome.
// metaOf reads one for a view's fallback, and a legacy envelope parses into
// one.
type invState struct {
	Invocation string
	Tool       string
	Generation Generation
	Open       bool
	Start      time.Time
	// End and Duration are fixed at closure and zero while open.
	End      time.Time
	Duration time.Duration
	Outcome  Outcome // zero while open
	Items    []ItemState
}

// Item returns the state of the item with the given key.
func (s invState) Item(key string) (ItemState, bool) {
	for _, it := range s.Items {
		if it.Key == key {
			return it, true
		}
	}
	return ItemState{}, false
}
