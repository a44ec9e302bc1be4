package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/server/auth"
)

// Share links. With accounts, a conversation's owner makes read-only links
// to it: /s/TOKEN, where TOKEN is 256 random bits. Whoever opens one sees
// the conversation live, as it is at that moment and as it goes on, through
// the same pages and events as its owner (so the same rows), and can run no
// command and change nothing. The link carries its token to the API in
// X-Folio-Share, and to the WebSocket as the subprotocol offer
// "folio-share.TOKEN". Only the token's SHA-256 is stored, so the address is
// shown once, when it is made. Revoking removes it from the store every
// replica reads on each request, so it stops working everywhere at once;
// a link to a deleted conversation finds nothing.

// shareHeader carries a share link's token on API requests.
const shareHeader = "X-Folio-Share"

// shareSubprotocolPrefix starts the WebSocket offer carrying a share token.
const shareSubprotocolPrefix = "folio-share."

// shareTokenBytes is the token's length in random bytes (256 bits).
const shareTokenBytes = 32

// replicaShares is a Replica that keeps share links in its database.
type replicaShares interface{ auth.ShareStore }

func shareKey(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// fileShares keeps each link as DataDir/shares/<key>.json.
type fileShares struct{ dir string }

func (f fileShares) AddShare(key string, s auth.Share) error {
	if err := os.MkdirAll(f.dir, 0o700); err != nil {
		return err
	}
	b, _ := json.Marshal(s)
	tmp, err := os.CreateTemp(f.dir, ".share-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(f.dir, key+".json"))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

func (f fileShares) read(name string) (auth.Share, error) {
	b, err := os.ReadFile(filepath.Join(f.dir, name))
	if err != nil {
		return auth.Share{}, err
	}
	var s auth.Share
	if err := json.Unmarshal(b, &s); err != nil {
		return auth.Share{}, fmt.Errorf("share file %s: %w", name, err)
	}
	return s, nil
}

func (f fileShares) ResolveShare(key string) (string, bool, error) {
	s, err := f.read(key + ".json")
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return s.Conversation, true, nil
}

// each calls fn with every link's file name and link.
func (f fileShares) each(fn func(name string, s auth.Share)) error {
	ents, err := os.ReadDir(f.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if s, err := f.read(e.Name()); err == nil {
			fn(e.Name(), s)
		}
	}
	return nil
}

func (f fileShares) ListShares(conv string) ([]auth.Share, error) {
	out := []auth.Share{}
	err := f.each(func(_ string, s auth.Share) {
		if s.Conversation == conv {
			out = append(out, s)
		}
	})
	slices.SortFunc(out, func(a, b auth.Share) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, err
}

func (f fileShares) RevokeShare(conv, id string) (bool, error) {
	found := false
	var rmErr error
	err := f.each(func(name string, s auth.Share) {
		if s.Conversation == conv && (id == "" || s.ID == id) {
			if err := os.Remove(filepath.Join(f.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				rmErr = err
			}
			found = true
		}
	})
	if err == nil {
		err = rmErr
	}
	return found, err
}

func (s *Server) shares() auth.ShareStore {
	if x, ok := s.opts.Replica.(replicaShares); ok {
		return x
	}
	return fileShares{filepath.Join(s.opts.DataDir, "shares")}
}

type shareViewKey struct{}

// sharedConversation is the conversation a request's share link opens,
// read afresh from the store, so a link revoked meanwhile opens nothing
// ("" with ok true); ok is false for a request that came with no link.
func (s *Server) sharedConversation(ctx context.Context) (string, bool) {
	key, ok := ctx.Value(shareViewKey{}).(string)
	if !ok {
		return "", false
	}
	conv, found, err := s.shares().ResolveShare(key)
	if err != nil || !found {
		return "", true
	}
	return conv, true
}

// viaLink reports whether ctx is a share link's, without reading the store.
func viaLink(ctx context.Context) bool {
	_, ok := ctx.Value(shareViewKey{}).(string)
	return ok
}

// requestShareToken is the share token a request carries, if any.
func requestShareToken(r *http.Request) string {
	if t := r.Header.Get(shareHeader); t != "" {
		return t
	}
	if r.URL.Path != "/api/v2/ws" {
		return ""
	}
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(v, ",") {
			if t, ok := strings.CutPrefix(strings.TrimSpace(p), shareSubprotocolPrefix); ok {
				return t
			}
		}
	}
	return ""
}

// viaShare admits a request made through a share link, read-only and for
// its one conversation; on refusal it has answered.
func (s *Server) viaShare(w http.ResponseWriter, r *http.Request, token string) (*http.Request, bool) {
	if len(token) > 128 {
		httpError(w, http.StatusNotFound, "not-found", "no such link")
		return r, false
	}
	_, ok, err := s.shares().ResolveShare(shareKey(token))
	if err != nil {
		s.opts.Logger.Error("cannot read share links", "err", err)
		httpError(w, http.StatusServiceUnavailable, "unavailable", "share links cannot be read just now; try again")
		return r, false
	}
	if !ok {
		httpError(w, http.StatusNotFound, "not-found", "no such link (it may have been revoked)")
		return r, false
	}
	if stateChanging(r.Method) {
		httpError(w, http.StatusForbidden, "read-only", "a share link only shows the conversation")
		return r, false
	}
	return r.WithContext(context.WithValue(r.Context(), shareViewKey{}, shareKey(token))), true
}

func randomShareToken() string {
	b := make([]byte, shareTokenBytes)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// createShare answers POST /api/v2/conversations/{id}/shares.
func (s *Server) createShare(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	who, ok := identityOf(r.Context())
	if !ok {
		httpError(w, http.StatusNotFound, "not-found", "share links need accounts (folio serve --oidc-issuer)")
		return
	}
	if _, err := os.Stat(s.logPath(id)); err != nil {
		httpError(w, http.StatusNotFound, "not-found", "no conversation "+id)
		return
	}
	token := randomShareToken()
	sh := auth.Share{ID: randomID("s-", 8), Conversation: id, CreatedBy: who.Subject, CreatedAt: time.Now().UTC()}
	if err := s.shares().AddShare(shareKey(token), sh); err != nil {
		s.opts.Logger.Error("cannot save a share link", "conversation", id, "err", err)
		httpError(w, http.StatusInternalServerError, "internal", "cannot save the link")
		return
	}
	writeJSON(w, http.StatusCreated, struct {
		auth.Share
		Path string `json:"path"`
	}{sh, "/s/" + token})
}

// listShares answers GET /api/v2/conversations/{id}/shares.
func (s *Server) listShares(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	if viaLink(r.Context()) {
		httpError(w, http.StatusNotFound, "not-found", "no conversation "+id)
		return
	}
	list, err := s.shares().ListShares(id)
	if err != nil {
		s.opts.Logger.Error("cannot list share links", "conversation", id, "err", err)
		httpError(w, http.StatusInternalServerError, "internal", "cannot list the links")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"shares": list})
}

// revokeShare answers DELETE /api/v2/conversations/{id}/shares/{share}.
func (s *Server) revokeShare(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	sid := r.PathValue("share")
	if sid == "" || len(sid) > 64 {
		httpError(w, http.StatusNotFound, "not-found", "no such link")
		return
	}
	found, err := s.shares().RevokeShare(id, sid)
	if err != nil {
		s.opts.Logger.Error("cannot revoke a share link", "conversation", id, "err", err)
		httpError(w, http.StatusInternalServerError, "internal", "cannot revoke the link")
		return
	}
	if !found {
		httpError(w, http.StatusNotFound, "not-found", "no such link")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
