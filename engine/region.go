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

// append adds a settled entry. A child's feed takes only its streamed
// reply, so other entries of a child are not recorded ("" and no error).
func (r *region) append(c transcript.Content) (string, error) {
	if r.child != nil {
		return "", nil
	}
	return r.lease.Append(c)
}

// openTool opens the tool entry of a call and returns its ID, which is also
// the invocation ID. A child's calls get an ID without an entry.
func (r *region) openTool(c transcript.Tool) (string, bool, error) {
	if r.child != nil {
		return r.e.store.IDs().Next(), false, nil
	}
	id, err := r.lease.Open(c)
	return id, true, err
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
