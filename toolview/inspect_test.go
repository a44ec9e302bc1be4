package toolview

import (
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/transcript"
)

// The inspection helpers below read an invocation's current bounded state in
// tests: for an open one each item's current value and revision, for a
// closed one (until Release) exactly what its record retained.

// attach returns the current state of invocation id.
func attach(h *Host, id string) (invState, error) {
	h.mu.Lock()
	inv, open := h.open[id]
	rec, closed := h.closed[id]
	h.mu.Unlock()
	switch {
	case open:
		return inv.snapshot(), nil
	case closed:
		return stateOfRecord(rec), nil
	}
	return invState{}, fmt.Errorf("%w: %q", ErrUnknownInvocation, id)
}

func (inv *Invocation) snapshot() invState {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if inv.record != nil {
		return stateOfRecord(inv.record)
	}
	s := invState{Invocation: inv.id, Tool: inv.tool, Generation: inv.host.gen, Open: true, Start: inv.start}
	for _, it := range inv.order {
		s.Items = append(s.Items, ItemState{Key: it.key, Retention: it.retention, Revision: it.rev, Value: it.cur})
	}
	return s
}

// terminalOfState reads the semantic item from a closed invocation's invState. It reports
// false while the invocation is open.
func terminalOfState(s invState) (Terminal, bool) {
	if s.Open {
		return Terminal{}, false
	}
	t := Terminal{
		Tool:       s.Tool,
		Status:     s.Outcome.Status,
		Reason:     s.Outcome.Reason,
		DurationMs: float64(s.Duration.Nanoseconds()) / 1e6,
	}
	for _, it := range s.Items {
		if it.Value == nil {
			continue
		}
		p := it.Value.checkpoint(it.Revision)
		if it.Key == "" {
			t.Primary = p
		} else {
			t.Supplementals = append(t.Supplementals, transcript.KeyedPresentation{Key: it.Key, Presentation: *p})
		}
	}
	return t, true
}

// stateOfRecord is the Attach answer for a closed invocation: exactly what
// the record retained, nothing of ephemeral items.
func stateOfRecord(r *Record) invState {
	s := invState{
		Invocation: r.Invocation,
		Tool:       r.Tool,
		Generation: r.Generation,
		Start:      r.Start,
		End:        r.End,
		Duration:   r.Duration,
		Outcome:    r.Outcome,
	}
	v, rev := valueOf(r.Presentation)
	s.Items = append(s.Items, ItemState{Key: "", Revision: rev, Value: v})
	for _, kp := range r.Supplementals {
		p := kp.Presentation
		v, rev := valueOf(&p)
		s.Items = append(s.Items, ItemState{Key: kp.Key, Revision: rev, Value: v})
	}
	return s
}

// valueOf is the inverse of checkpoint, used when a state is rebuilt from a
// record or a transcript entry.
func valueOf(p *transcript.Presentation) (*Value, Revision) {
	if p == nil {
		return nil, 0
	}
	v := &Value{Schema: p.Schema, Version: p.Version, Payload: jsontext.Value(p.Payload)}
	if p.Artifact != nil {
		a := *p.Artifact
		v.Artifact = &a
	}
	return v, Revision(p.Revision)
}
