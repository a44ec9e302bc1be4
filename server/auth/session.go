package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
)

// Session is one signed-in person on one browser.
type Session struct {
	// Subject is the provider's stable ID of the person ("sub"); with the
	// issuer it names them for ownership.
	Subject string `json:"subject"`
	Email   string `json:"email,omitzero"`
	Name    string `json:"name,omitzero"`
	// CSRF is the token a write must carry in X-CSRF-Token (unless its
	// Origin shows it comes from folio's own page).
	CSRF    string    `json:"csrf"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
}

// Store keeps sessions where every replica of a deployment sees them. Keys
// are the SHA-256 (hex) of the cookie's value, never the value itself.
type Store interface {
	// Put saves s under key, replacing any session there.
	Put(ctx context.Context, key string, s Session) error
	// Get returns the session under key, or ErrNoSession; an expired one
	// is ErrNoSession too.
	Get(ctx context.Context, key string) (Session, error)
	// Delete ends the session under key; ending one that is gone is not an
	// error.
	Delete(ctx context.Context, key string) error
}

// randomToken is n random bytes in unpadded base64url.
func randomToken(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// keyOf is the store key of a cookie value.
func keyOf(cookie string) string {
	h := sha256.Sum256([]byte(cookie))
	return hex.EncodeToString(h[:])
}

// validKey: 64 lowercase hex digits, so a key is always a plain file name.
func validKey(k string) bool {
	if len(k) != 64 {
		return false
	}
	for _, c := range k {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// FileStore keeps each session as a file in one folder (0700, files 0600).
// Replicas sharing the folder share the sessions.
type FileStore struct {
	Dir string
	// Now is the clock (time.Now when nil); tests move it.
	Now func() time.Time
}

var _ Store = (*FileStore)(nil)

// NewFileStore makes dir (0700) and returns a store over it.
func NewFileStore(dir string) (*FileStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("auth: sessions folder: %w", err)
	}
	return &FileStore{Dir: dir}, nil
}

func (f *FileStore) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

func (f *FileStore) path(key string) (string, error) {
	if !validKey(key) {
		return "", fmt.Errorf("auth: session key is not 64 hex digits")
	}
	return filepath.Join(f.Dir, key+".json"), nil
}

// Put writes the session to a temporary file, syncs it and renames it in
// place, so a reader sees the whole session or none. It also removes
// sessions that expired, so the folder does not grow without end.
func (f *FileStore) Put(_ context.Context, key string, s Session) error {
	p, err := f.path(key)
	if err != nil {
		return err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("auth: encode session: %w", err)
	}
	tmp, err := os.CreateTemp(f.Dir, ".session-*")
	if err != nil {
		return fmt.Errorf("auth: write session: %w", err)
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("auth: write session: %w", err)
	}
	f.sweep()
	return nil
}

// sweep removes expired sessions' files; errors leave them for next time.
func (f *FileStore) sweep() {
	ents, err := os.ReadDir(f.Dir)
	if err != nil {
		return
	}
	now := f.now()
	for _, e := range ents {
		key, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !validKey(key) {
			continue
		}
		if s, err := f.read(filepath.Join(f.Dir, e.Name())); err == nil && !now.Before(s.Expires) {
			os.Remove(filepath.Join(f.Dir, e.Name()))
		}
	}
}

func (f *FileStore) read(p string) (Session, error) {
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return Session{}, ErrNoSession
	}
	if err != nil {
		return Session{}, fmt.Errorf("auth: read session: %w", err)
	}
	var s Session
	if err := json.Unmarshal(b, &s); err != nil {
		return Session{}, fmt.Errorf("auth: session file %s: %w", filepath.Base(p), err)
	}
	return s, nil
}

// Get reads the session under key.
func (f *FileStore) Get(_ context.Context, key string) (Session, error) {
	p, err := f.path(key)
	if err != nil {
		return Session{}, ErrNoSession
	}
	s, err := f.read(p)
	if err != nil {
		return Session{}, err
	}
	if !f.now().Before(s.Expires) {
		os.Remove(p)
		return Session{}, ErrNoSession
	}
	return s, nil
}

// Delete removes the session's file.
func (f *FileStore) Delete(_ context.Context, key string) error {
	p, err := f.path(key)
	if err != nil {
		return nil
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("auth: end session: %w", err)
	}
	return nil
}
