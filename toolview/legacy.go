package toolview

import (
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Placement is where a legacy envelope asked its contribution to go. New
// producers cannot choose placement: the Go API has no such parameter and
// the plugin protocol refuses the member.
type Placement string

// Legacy placements.
const (
	PlaceRequest      Placement = "request"
	PlaceProgress     Placement = "progress"
	PlaceResult       Placement = "result"
	PlaceSupplemental Placement = "supplemental"
	PlaceHidden       Placement = "hidden"
)

// Envelope is a legacy placement envelope, as older histories stored tool
// contributions: {"schema_version":1,"placement":…,"contribution":…}. It is
// decoded for compatibility only.
type Envelope struct {
	SchemaVersion int            `json:"schema_version"`
	Placement     Placement      `json:"placement,omitzero"`
	Contribution  jsontext.Value `json:"contribution,omitzero"`
}

// contribution is the shape of a compatible contribution. Others are kept
// invisible by the projection.
type contribution struct {
	Key     string         `json:"key,omitzero"`
	Schema  string         `json:"schema"`
	Version int64          `json:"version"`
	Payload jsontext.Value `json:"payload"`
}

// DecodeEnvelope decodes one legacy envelope strictly. An unknown member, an
// unsupported schema_version or an unknown placement is an error naming it;
// an absent placement is allowed (the contribution is unplaced).
func DecodeEnvelope(data []byte) (Envelope, error) {
	var e Envelope
	if err := json.Unmarshal(data, &e, strictJSON); err != nil {
		return Envelope{}, fmt.Errorf("%w: %v", ErrInvalidEnvelope, err)
	}
	if e.SchemaVersion != 1 {
		return Envelope{}, fmt.Errorf("%w: /schema_version: %d is not the supported version 1", ErrInvalidEnvelope, e.SchemaVersion)
	}
	switch e.Placement {
	case "", PlaceRequest, PlaceProgress, PlaceResult, PlaceSupplemental, PlaceHidden:
	default:
		return Envelope{}, fmt.Errorf("%w: /placement: %q is not request, progress, result, supplemental or hidden", ErrInvalidEnvelope, e.Placement)
	}
	return e, nil
}

// Projection is the compatibility view of one invocation's legacy envelopes:
// the current primary item and independent supplementals, as the host's own
// ItemState items.
type Projection struct {
	Items []ItemState // the primary ("") first when present, then supplementals in first-seen order
}

// ProjectLegacy folds envelopes in chronological order. The latest compatible
// request, progress or result contribution becomes the primary item's value;
// each keyed supplemental keeps its own latest value; hidden and unplaced
// contributions, incompatible contributions and supplementals without a key
// stay invisible. Revisions count the contributions each item took.
func ProjectLegacy(envs []Envelope) Projection {
	var p Projection
	index := map[string]int{}
	set := func(key string, c contribution) {
		v := &Value{Schema: c.Schema, Version: c.Version, Payload: c.Payload}
		i, ok := index[key]
		if !ok {
			i = len(p.Items)
			index[key] = i
			p.Items = append(p.Items, ItemState{Key: key})
		}
		p.Items[i].Revision++
		p.Items[i].Value = v
	}
	for _, e := range envs {
		var c contribution
		if len(e.Contribution) == 0 || json.Unmarshal(e.Contribution, &c, strictJSON) != nil ||
			c.Schema == "" || c.Version < 1 || len(c.Payload) == 0 {
			continue
		}
		switch e.Placement {
		case PlaceRequest, PlaceProgress, PlaceResult:
			set("", c)
		case PlaceSupplemental:
			if c.Key != "" {
				set(c.Key, c)
			}
		}
	}
	// Put the primary first, as the host does.
	if i, ok := index[""]; ok && i != 0 {
		prim := p.Items[i]
		copy(p.Items[1:i+1], p.Items[:i])
		p.Items[0] = prim
	}
	return p
}
