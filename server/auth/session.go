package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/internal/lru"
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

// EndNotifier is a Store that tells when sessions end (signed out, or
// rotated at a new sign-in), so the server can close their open
// connections. A store shared by replicas tells every replica.
type EndNotifier interface {
	OnEnded(func(key string))
}

// endHooks are the functions told about ended sessions.
type endHooks struct {
	mu  sync.Mutex
	fns []func(key string)
}

func (h *endHooks) add(fn func(string)) {
	h.mu.Lock()
	h.fns = append(h.fns, fn)
	h.mu.Unlock()
}

func (h *endHooks) tell(key string) {
	h.mu.Lock()
	fns := h.fns
	h.mu.Unlock()
	for _, fn := range fns {
		fn(key)
	}
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
//
// Sessions read are kept in a bounded cache with the identity of their
// file (device, inode, size, modification time). A Get stats the file and
// answers from the cache while it is the same file, looked at once a
// second (fileRecheck) rather than read and parsed on every request; a
// session ended by this process is refused at once, one ended by another
// process sharing the folder (its file removed) within the second.
type FileStore struct {
	Dir string
	// Now is the clock (time.Now when nil); tests move it.
	Now func() time.Time

	once  sync.Once
	cache *lru.Cache[fileSession]
	ended endHooks
	// recheck is how long a cached session is used before its file is
	// looked at again (fileRecheck when 0).
	recheck time.Duration
}

// fileSession is a cached session, the file it was read from and when
// that file was last found unchanged.
type fileSession struct {
	s       Session
	fi      os.FileInfo
	checked time.Time
}

// fileRecheck is how long a cached session is used before its file is
// looked at again. What this process changes it drops from its
// cache at once; a change another process sharing the folder makes is
// seen within this time. A stat on every request was most of what a
// session cost over a token.
const fileRecheck = time.Second

// maxCachedSessions bounds each store's cache of sessions (tests lower it).
var maxCachedSessions = 16384

func (f *FileStore) sessions() *lru.Cache[fileSession] {
	f.once.Do(func() { f.cache = lru.New[fileSession](maxCachedSessions) })
	return f.cache
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
	if err := f.writeOnly(key, s); err != nil {
		return err
	}
	f.sweep()
	return nil
}

// writeOnly is Put without the sweep.
func (f *FileStore) writeOnly(key string, s Session) error {
	p, err := f.path(key)
	if err != nil {
		return err
	}
	defer f.sessions().Drop(key)
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
	s, _, err := f.readStat(p)
	return s, err
}

// readStat reads a session file and the identity of the file it read
// (through one open file, so the two agree).
func (f *FileStore) readStat(p string) (Session, os.FileInfo, error) {
	fh, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return Session{}, nil, ErrNoSession
	}
	if err != nil {
		return Session{}, nil, fmt.Errorf("auth: read session: %w", err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return Session{}, nil, fmt.Errorf("auth: read session: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(fh, 1<<20))
	if err != nil {
		return Session{}, nil, fmt.Errorf("auth: read session: %w", err)
	}
	var s Session
	if err := json.Unmarshal(b, &s); err != nil {
		return Session{}, nil, fmt.Errorf("auth: session file %s: %w", filepath.Base(p), err)
	}
	return s, fi, nil
}

// sameFile: fi and was name the same file, unchanged.
func sameFile(fi, was os.FileInfo) bool {
	return os.SameFile(fi, was) && fi.Size() == was.Size() && fi.ModTime().Equal(was.ModTime())
}

// Get returns the session under key: from the cache while its file is the
// one it was read from (checked at most once every fileRecheck), else read
// from the file.
func (f *FileStore) Get(_ context.Context, key string) (Session, error) {
	p, err := f.path(key)
	if err != nil {
		return Session{}, ErrNoSession
	}
	c := f.sessions()
	var s Session
	cached, ok := c.Get(key)
	recheck := f.recheck
	if recheck == 0 {
		recheck = fileRecheck
	}
	if ok && time.Since(cached.checked) < recheck {
		s = cached.s
	} else {
		gen := c.Gen()
		fi, err := os.Stat(p)
		switch {
		case err == nil && ok && sameFile(fi, cached.fi):
			s = cached.s
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return Session{}, fmt.Errorf("auth: read session: %w", err)
		default:
			if ok {
				c.Drop(key)
				gen = c.Gen()
			}
			if s, fi, err = f.readStat(p); err != nil {
				return Session{}, err
			}
		}
		c.Put(key, fileSession{s, fi, time.Now()}, gen)
	}
	if !f.now().Before(s.Expires) {
		c.Drop(key)
		os.Remove(p)
		return Session{}, ErrNoSession
	}
	return s, nil
}

// Delete removes the session's file, and tells the functions given to
// OnEnded.
func (f *FileStore) Delete(_ context.Context, key string) error {
	p, err := f.path(key)
	if err != nil {
		return nil
	}
	f.sessions().Drop(key)
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("auth: end session: %w", err)
	}
	f.ended.tell(key)
	return nil
}

// OnEnded adds a function told the key of each session this process ends.
// Another process sharing the folder does not tell it; a holder of a
// long-lived connection asks Get again now and then (the server does, see
// Auth.StillValid).
func (f *FileStore) OnEnded(fn func(key string)) { f.ended.add(fn) }
