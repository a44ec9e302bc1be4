package server

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/foliodev/folio/server/auth"
)

// Ownership. With accounts (Options.Auth) every conversation is someone's:
// the person who created it. One that has no owner was written before
// accounts, or by a terminal folio, and is the admins'. Every route that
// names a conversation goes through owned, and the WebSocket's open and
// commands through mayAccess, so a person who is not its owner gets the
// same not-found as for a conversation that does not exist.

// ownerStore records each conversation's owner: a subject of the identity
// provider, "" for none.
type ownerStore interface {
	Owner(id string) (string, error)
	// AllOwners is every recorded owner by conversation, for listings.
	AllOwners() (map[string]string, error)
	SetOwner(id, subject string) error
}

// replicaOwners is a Replica that keeps owners in its database, so every
// replica sees the same ones (pgstore's Mirror).
type replicaOwners interface {
	ownerStore
}

// fileOwners keeps owners in DataDir/owners, one file per conversation
// holding its owner's subject; written by rename, so a reader sees the
// old owner or the new.
type fileOwners struct{ dir string }

func (f fileOwners) path(id string) string { return filepath.Join(f.dir, id) }

func (f fileOwners) Owner(id string) (string, error) {
	if validConversationID(id) != nil {
		return "", ErrInvalidID
	}
	b, err := os.ReadFile(f.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return string(b), err
}

func (f fileOwners) AllOwners() (map[string]string, error) {
	ents, err := os.ReadDir(f.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(ents))
	for _, e := range ents {
		if validConversationID(e.Name()) != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(f.dir, e.Name())); err == nil {
			m[e.Name()] = string(b)
		}
	}
	return m, nil
}

func (f fileOwners) SetOwner(id, subject string) error {
	if validConversationID(id) != nil {
		return ErrInvalidID
	}
	if subject == "" {
		if err := os.Remove(f.path(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := os.MkdirAll(f.dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(f.dir, ".owner-*")
	if err != nil {
		return err
	}
	_, err = tmp.WriteString(subject)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), f.path(id))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// owners is where this server's owners are kept.
func (s *Server) owners() ownerStore {
	if o, ok := s.opts.Replica.(replicaOwners); ok {
		return o
	}
	return fileOwners{filepath.Join(s.opts.DataDir, "owners")}
}

// mayAccess reports whether the request's person may see conversation id.
// Without accounts everyone may. A failure to read the owner refuses.
func (s *Server) mayAccess(ctx context.Context, id string) bool {
	if conv, ok := s.sharedConversation(ctx); ok {
		return conv != "" && conv == id
	}
	who, ok := identityOf(ctx)
	if !ok {
		return s.opts.Auth == nil || localPeer(ctx)
	}
	owner, err := s.owners().Owner(id)
	if err != nil {
		s.opts.Logger.Error("cannot read a conversation's owner", "conversation", id, "err", err)
		return false
	}
	return allowed(who, owner)
}

func allowed(who auth.Identity, owner string) bool {
	return owner == who.Subject || (owner == "" && who.Admin)
}

// owned guards a route with {id}: a conversation the person may not see is
// not-found, worded as for one that does not exist.
func (s *Server) owned(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if validConversationID(id) == nil && !s.mayAccess(r.Context(), id) {
			httpError(w, http.StatusNotFound, "not-found", "no conversation "+id)
			return
		}
		h(w, r)
	}
}

// visibleFilter returns a test of whether the request's person may see a
// conversation, reading every owner once (for listings and search).
func (s *Server) visibleFilter(ctx context.Context) (func(id string) bool, error) {
	if conv, ok := s.sharedConversation(ctx); ok {
		return func(id string) bool { return conv != "" && id == conv }, nil
	}
	who, ok := identityOf(ctx)
	if !ok {
		all := s.opts.Auth == nil || localPeer(ctx)
		return func(string) bool { return all }, nil
	}
	all, err := s.owners().AllOwners()
	if err != nil {
		return nil, err
	}
	return func(id string) bool { return allowed(who, all[id]) }, nil
}

// claim records the request's person as the owner of a new conversation.
func (s *Server) claim(ctx context.Context, id string) error {
	who, ok := identityOf(ctx)
	if !ok {
		return nil
	}
	return s.owners().SetOwner(id, who.Subject)
}

// setOwner answers PUT /api/v2/conversations/{id}/owner {"owner": SUBJECT}:
// an admin gives a conversation (one of the admins' own, or one from before
// accounts) to someone.
func (s *Server) setOwner(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	who, _ := identityOf(r.Context())
	if s.opts.Auth == nil || !who.Admin {
		httpError(w, http.StatusForbidden, "forbidden", "only an admin (folio serve --admin) assigns owners")
		return
	}
	var body struct {
		Owner string `json:"owner"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	if strings.TrimSpace(body.Owner) == "" || len(body.Owner) > 255 {
		httpError(w, http.StatusBadRequest, "bad-request", "owner must be a subject of 1 to 255 bytes")
		return
	}
	if _, err := os.Stat(s.logPath(id)); err != nil {
		httpError(w, http.StatusNotFound, "not-found", "no conversation "+id)
		return
	}
	if err := s.owners().SetOwner(id, body.Owner); err != nil {
		s.opts.Logger.Error("cannot set an owner", "conversation", id, "err", err)
		httpError(w, http.StatusInternalServerError, "internal", "cannot record the owner")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": id, "owner": body.Owner})
}
