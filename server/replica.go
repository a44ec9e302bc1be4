package server

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"os"

	"github.com/foliodev/folio/history"
)

// Replica keeps the conversations in a database that several servers
// share (package pgstore's Mirror implements it). The server then serves
// local copies of the logs in DataDir, which the Replica keeps equal to the
// database: every request that names a conversation first brings its copy
// up to date (Sync), the follower publishes what other replicas appended
// from the copy, and writers (the engine, renames) write through OpenLog
// under the conversation's lease in the database.
type Replica interface {
	// Sync brings DataDir's copy of id up to the database (removing it
	// when the database has no such conversation) and keeps it current.
	Sync(ctx context.Context, id string) error
	// OpenLog opens id for writing under its lease; history.ErrLocked
	// while another replica holds it.
	OpenLog(id string, opts ...history.Option) (*history.Log, error)
	// List lists the database's conversations.
	List() ([]history.Summary, error)
	// Create writes a new conversation's header line.
	Create(id string, header []byte) error
	// Delete removes a conversation under its lease.
	Delete(id string) error
	// OnChange sets the function told after a copy changed.
	OnChange(func(id string))
}

// bindReplica pokes a conversation's follower when its copy changed, so
// tabs on this replica see another replica's appends without waiting for
// the follower's tick.
func (s *Server) bindReplica() {
	r := s.opts.Replica
	if r == nil {
		return
	}
	r.OnChange(func(id string) {
		// Not under the mirror's lock: the poll takes the conversation's.
		go func() {
			c := s.lookupConv(id)
			if c == nil {
				return
			}
			c.mu.Lock()
			if c.stop != nil && c.synced && !c.syncing {
				c.pollLocked()
			}
			c.mu.Unlock()
		}()
	})
}

// syncCopy brings a replica's copy of id up to date; without a Replica it
// does nothing.
func (s *Server) syncCopy(id string) {
	if r := s.opts.Replica; r != nil {
		if err := r.Sync(context.Background(), id); err != nil {
			s.opts.Logger.Warn("database unreachable; serving the local copy", "conversation", id, "err", err)
		}
	}
}

// openLog opens conversation id's log (at p in DataDir) for writing: the
// file's lock, or the database lease on a replica.
func (s *Server) openLog(id, p string) (*history.Log, error) {
	if r := s.opts.Replica; r != nil {
		return r.OpenLog(id)
	}
	return history.Open(p)
}

// logFiles lists the conversations: the data folder's logs, or on a
// replica the database's conversations, each at its copy.
func (s *Server) logFiles() ([]history.LogFile, error) {
	r := s.opts.Replica
	if r == nil {
		return history.Logs(s.opts.DataDir)
	}
	list, err := r.List()
	if err != nil {
		return nil, err
	}
	out := make([]history.LogFile, 0, len(list))
	for _, sum := range list {
		if validConversationID(sum.ID) != nil {
			continue
		}
		out = append(out, history.LogFile{ID: sum.ID, Path: s.logPath(sum.ID)})
	}
	return out, nil
}

// createLog writes a new log's header line on a replica; false without
// one, where the caller creates the file.
func (s *Server) createLog(id string, header []byte) (bool, error) {
	r := s.opts.Replica
	if r == nil {
		return false, nil
	}
	return true, r.Create(id, header)
}

// deleteReplica deletes a conversation on a replica and answers the
// request; false without one.
func (s *Server) deleteReplica(w http.ResponseWriter, id string) bool {
	r := s.opts.Replica
	if r == nil {
		return false
	}
	err := r.Delete(id)
	if errors.Is(err, history.ErrLocked) {
		httpError(w, http.StatusConflict, "locked", lockedText(err))
		return true
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.opts.Logger.Error("delete failed", "conversation", id, "err", err)
		httpError(w, http.StatusInternalServerError, "internal", "cannot delete the conversation")
		return true
	}
	os.RemoveAll(s.attachmentDir(id))
	s.announceDeleted(id)
	w.WriteHeader(http.StatusNoContent)
	return true
}
