package server

import "net/http"

// When a replica loses its database: commands are refused with
// "store-unavailable" (nothing would be saved), and every tab is told with
// a status frame, told again when the database is back. Then each engine
// whose lease ended with the database's sessions is closed, so the next
// command reopens the conversation under a new lease from what the
// database holds, and its tabs, told the document was replaced, read it
// again from the replica's copy, which its listener caught up.

// Store states a status frame carries.
const (
	storeReachable   = "reachable"
	storeUnreachable = "unreachable"
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
	if r := s.rep.health; r != nil && !r.Reachable() {
		return ErrStoreUnavailable
	}
	return nil
}

// storeStatus is the Replica's OnStatus.
func (s *Server) storeStatus(reachable bool, lost []string) {
	st := storeUnreachable
	if reachable {
		st = storeReachable
		for _, id := range lost {
			s.lockLost(id)
		}
		// What other replicas streamed before the outage may never have
		// been saved.
		for _, c := range s.conversations() {
			c.mu.Lock()
			if c.remote != nil {
				c.dropRemoteLocked()
			}
			c.mu.Unlock()
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

// lockLost closes the engine of conversation id, whose hold on the log
// (its database lease) ended: the next command opens the log again. The
// engine published what it could not save (a turn cut short, its save
// failures), so its tabs, holding entries the log does not, start again
// from the log.
func (s *Server) lockLost(id string) {
	if s.turns != nil {
		s.forgetEngine(id)
	}
	if c := s.lookupConv(id); c != nil {
		c.mu.Lock()
		c.replaceLocked()
		c.mu.Unlock()
	}
}

// storeUnavailable answers a request that failed 503 "store-unavailable"
// when the replica's database is unreachable, and reports whether it did.
func (s *Server) storeUnavailable(w http.ResponseWriter) bool {
	if err := s.storeReachable(); err != nil {
		httpError(w, http.StatusServiceUnavailable, "store-unavailable", err.Error())
		return true
	}
	return false
}
