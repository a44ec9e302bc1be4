package toolview

// Replica is a client's local copy of one invocation's items, kept by
// applying live changes and replaced from Attach. It encodes the client half
// of the reconnect contract, so every view (terminal, web bridge) converges on
// the same item whatever order live changes and attach answers arrive in:
//
//   - A state from Attach replaces local state. Within the same generation an
//     item the client already holds at a higher revision keeps it, so a
//     snapshot taken before a live change cannot roll it back.
//   - A live change applies only if its generation matches and its revision
//     is above the item's; otherwise it is stale or asks for a resync.
//   - Closed is absorbing. Once a closing change or a closed state arrives, no
//     open state, duplicate, delayed or higher-revision live change alters the
//     items, and the timing stays the recorded one.
//
// A Replica is not safe for concurrent use; a client owns it.
type Replica struct {
	known  bool
	state  State
	closed bool
	// final is set once the terminal timing is known.
	final bool
}

// ApplyResult says what Apply did with a change.
type ApplyResult uint8

// Apply outcomes.
const (
	Applied    ApplyResult = iota
	Ignored                // stale, duplicate, or the invocation is closed
	NeedResync             // another generation: replace local state from Attach
)

// Reset replaces local state from an Attach answer. It reports whether the
// state was taken.
func (r *Replica) Reset(s State) bool {
	if r.closed && s.Open {
		return false // an older snapshot cannot reopen a closed item
	}
	if r.closed && r.final {
		return false // the terminal state is already complete
	}
	prev := r.state
	sameGen := r.known && prev.Generation == s.Generation
	next := s
	next.Items = append([]ItemState(nil), s.Items...)
	if sameGen && s.Open {
		for i, it := range next.Items {
			if old, ok := prev.Item(it.Key); ok && old.Revision > it.Revision {
				next.Items[i] = old
			}
		}
		for _, old := range prev.Items {
			if _, ok := next.Item(old.Key); !ok {
				next.Items = append(next.Items, old)
			}
		}
	}
	r.state = next
	r.known = true
	r.closed = !s.Open
	r.final = !s.Open
	return true
}

// Apply applies one live change.
func (r *Replica) Apply(c Change) ApplyResult {
	if r.final {
		return Ignored
	}
	if !r.known {
		r.state = State{Invocation: c.Invocation, Tool: c.Tool, Generation: c.Generation, Open: true}
		r.known = true
	}
	if c.Generation != r.state.Generation {
		return NeedResync
	}
	if r.closed && c.Open {
		return Ignored
	}
	i := -1
	for j, it := range r.state.Items {
		if it.Key == c.Item {
			i = j
		}
	}
	if c.Open && i >= 0 && c.Revision <= r.state.Items[i].Revision {
		return Ignored
	}
	it := ItemState{Key: c.Item, Retention: c.Retention, Revision: c.Revision, Value: c.Value}
	if i >= 0 {
		r.state.Items[i] = it
	} else {
		r.state.Items = append(r.state.Items, it)
	}
	if !c.Open {
		r.closed = true
		r.state.Open = false
	}
	if c.Record != nil {
		r.state.Start, r.state.End, r.state.Duration = c.Record.Start, c.Record.End, c.Record.Duration
		r.state.Outcome = c.Record.Outcome
		r.final = true
	}
	return Applied
}

// State returns the replica's current state. While the invocation is open,
// elapsed time is the viewer's clock minus Start; once closed, Duration is
// fixed and nothing a producer sends moves it.
func (r *Replica) State() State {
	s := r.state
	s.Items = append([]ItemState(nil), r.state.Items...)
	return s
}

// Closed reports whether the replica holds the terminal state.
func (r *Replica) Closed() bool { return r.final }
