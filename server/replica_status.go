package server

// When a replica loses its database: commands are refused with
// "store-unavailable" (nothing would be saved), and every tab is told with
// a status frame, told again when the database is back. Then each engine
// whose lease ended with the database's sessions is closed, so the next
// command reopens the conversation under a new lease from what the
// database holds, and the replica's copies are caught up by its listener.

// Store states a status frame carries.
const (
	StoreReachable   = "reachable"
	StoreUnreachable = "unreachable"
)

// statusFrame tells a tab whether the server can reach its conversation
// store. Sent when that changes, and after welcome while it is
// unreachable.
type statusFrame struct {
	Type  string `json:"type"`
	Store string `json:"store"`
}

// storeReachable is ErrStoreUnavailable while a replica's database is
// unreachable, else nil.
func (s *Server) storeReachable() error {
	if r := s.opts.Replica; r != nil && !r.Reachable() {
		return ErrStoreUnavailable
	}
	return nil
}

// storeStatus is the Replica's OnStatus.
func (s *Server) storeStatus(reachable bool, lost []string) {
	st := StoreUnreachable
	if reachable {
		st = StoreReachable
		if s.turns != nil {
			for _, id := range lost {
				s.turns.forget(id)
			}
		}
	}
	s.opts.Logger.Warn("conversation store", "state", st, "lost leases", len(lost))
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.mu.Lock()
		hello := c.hello
		c.mu.Unlock()
		if hello {
			c.reply(statusFrame{Type: "status", Store: st})
		}
	}
}
