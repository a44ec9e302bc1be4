package server

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/foliodev/folio/internal/lru"
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
//
// Owners read are cached (bounded) with the identity of their file; a
// lookup answers from the cache, and at most once a second (ownerRecheck)
// stats the file to check it is still the same. A reassignment renames a
// new file in place, so every process sharing the data folder sees it
// within the second.
type fileOwners struct {
	dir   string
	cache *lru.Cache[fileOwner]
	// recheck is how long a cached owner is used before its file is
	// looked at again (ownerRecheck when 0).
	recheck time.Duration
}

type fileOwner struct {
	owner   string
	fi      os.FileInfo
	checked time.Time // when fi was last found to be the file's
}

// ownerRecheck is how long a cached owner is used before its file is
// looked at again: a reassignment this process makes drops the entry at
// once; one another process sharing the data folder makes is seen within
// this time.
const ownerRecheck = time.Second

// maxCachedOwners bounds the owners a server keeps in memory.
const maxCachedOwners = 65536

func newFileOwners(dir string) *fileOwners {
	return &fileOwners{dir: dir, cache: lru.New[fileOwner](maxCachedOwners)}
}

func (f *fileOwners) path(id string) string { return filepath.Join(f.dir, id) }

func (f *fileOwners) Owner(id string) (string, error) {
	if validConversationID(id) != nil {
		return "", ErrInvalidID
	}
	recheck := f.recheck
	if recheck == 0 {
		recheck = ownerRecheck
	}
	cached, ok := f.cache.Get(id)
	if ok && time.Since(cached.checked) < recheck {
		return cached.owner, nil
	}
	gen := f.cache.Gen()
	p := f.path(id)
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		if ok {
			f.cache.Drop(id)
		}
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if ok && os.SameFile(fi, cached.fi) && fi.Size() == cached.fi.Size() && fi.ModTime().Equal(cached.fi.ModTime()) {
		f.cache.Put(id, fileOwner{cached.owner, fi, time.Now()}, gen)
		return cached.owner, nil
	}
	fh, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer fh.Close()
	if fi, err = fh.Stat(); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(fh, 4096))
	if err != nil {
		return "", err
	}
	f.cache.Put(id, fileOwner{string(b), fi, time.Now()}, gen)
	return string(b), nil
}

func (f *fileOwners) AllOwners() (map[string]string, error) {
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

func (f *fileOwners) SetOwner(id, subject string) error {
	if validConversationID(id) != nil {
		return ErrInvalidID
	}
	defer f.cache.Drop(id)
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
	return s.fileOwners
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
