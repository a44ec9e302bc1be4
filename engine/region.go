package engine

import (
	"github.com/foliodev/folio/transcript"
)

// region is where an agent writes: the main document through the turn's
// lease, or a child's region through its ChildWriter. A child can only name
// its own region, so it can never touch the main answer or footer.
type region struct {
	e     *Engine
	lease transcript.Lease
	child *transcript.ChildWriter // nil for the main region
	w     *transcript.StreamWriter
	// epoch is the engine's conversation epoch the region belongs to;
	// messages and saves of an older epoch are dropped (see Clear).
	epoch uint64
}

func (r *region) main() bool { return r.child == nil }

func (r *region) stream() (*transcript.StreamWriter, error) {
	if r.w != nil {
		return r.w, nil
	}
	if r.child != nil {
		w, err := r.child.Stream()
		if err != nil {
			return nil, err
		}
		r.w = w
		return w, nil
	}
	r.w = r.lease.Stream()
	return r.w, nil
}

// append adds a settled entry: to the main document, or to the child's
// own feed (a notice of the child's, say).
func (r *region) append(c transcript.Content) (string, error) {
	if r.child != nil {
		return r.child.Append(c)
	}
	return r.lease.Append(c)
}

// openTool opens the tool entry of a call and returns its ID, which is also
// the invocation ID. A child's calls open in the child's feed, never in the
// main document.
func (r *region) openTool(c transcript.Tool) (string, error) {
	if r.child != nil {
		return r.child.Open(c)
	}
	return r.lease.Open(c)
}

// update changes the open entry id of the region.
func (r *region) update(id string, c transcript.Content) error {
	if r.child != nil {
		return r.child.Update(id, c)
	}
	return r.lease.Update(id, c)
}

// settle settles the open entry id of the region with c.
func (r *region) settle(id string, c transcript.Content) error {
	if r.child != nil {
		return r.child.Settle(id, c)
	}
	return r.lease.Settle(id, c)
}

func (r *region) setActivity(a transcript.Activity) error {
	if r.child != nil {
		return r.child.SetActivity(a)
	}
	return r.lease.SetActivity(a)
}

func (r *region) setRetry(rt transcript.Retry) error {
	if r.child != nil {
		return nil // the retry state belongs to the main footer
	}
	return r.lease.SetRetry(rt)
}
