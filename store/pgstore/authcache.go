package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foliodev/folio/internal/lru"
	"github.com/foliodev/folio/server/auth"
)

// The replica's cache of sessions and owners. Every request with a session
// needs its session and the owner of the conversation it names; reading
// both from the database each time costs two round trips. A replica keeps
// them in bounded caches instead, which are correct only while it hears
// every change: each change (a session saved or ended, an owner set, a
// conversation deleted) is notified on authChannel in the transaction that
// makes it, and the Mirror's listener drops the entry on every replica.
//
//   - The caches are used only while a listener is connected (LISTEN done);
//     when it drops, they are cleared and bypassed until it is back, since
//     notes sent meanwhile are lost.
//   - A value read before a note arrived is never cached after it (the
//     caches' fills are fenced by an invalidation count).
//   - Sign-out and reassignment are acknowledged: their note carries a
//     nonce, every listener answers "k <nonce>" once it dropped the entry,
//     and the change returns once as many listeners as were connected
//     (pg_stat_activity, by the listeners' application_name) answered,
//     bounded by noteWait. So when a sign-out's request is answered, no
//     replica serves the session from its cache any more.
//   - Expiry needs no note: a cached session carries its expiry.

// authChannel carries "s <session key> <nonce>" (ended), "p <session key>"
// (saved), "o <conversation id> <nonce>" (owner set) and "k <nonce>" (a
// listener's acknowledgement).
const authChannel = "folio_auth"

// listenerApp is the application_name of the Mirrors' listening
// connections, by which a change counts the replicas that must answer.
const listenerApp = "folio listener"

// noteWait bounds how long a sign-out or reassignment waits for its note.
const noteWait = 2 * time.Second

// Bounds of the caches, per replica.
const (
	maxCachedSessions = 16384
	maxCachedOwners   = 65536
)

type authCache struct {
	once      sync.Once
	listening atomic.Int32 // listeners connected (one per running Mirror)
	sessions  *lru.Cache[auth.Session]
	owners    *lru.Cache[string]

	mu    sync.Mutex
	waits map[string]*waiter // by nonce
	ended []func(key string)
}

// waiter counts the acknowledgements a change still needs.
type waiter struct {
	need int
	ch   chan struct{}
}

func (s *Store) auth() *authCache {
	a := &s.ac
	a.once.Do(func() {
		a.sessions = lru.New[auth.Session](maxCachedSessions)
		a.owners = lru.New[string](maxCachedOwners)
		a.waits = map[string]*waiter{}
	})
	return a
}

// on: the caches may answer.
func (a *authCache) on() bool { return a.listening.Load() > 0 }

// up is called once a listener LISTENs; down when it lost its connection.
// Both clear the caches: notes may have been missed while nobody listened.
func (a *authCache) up() {
	a.sessions.Clear()
	a.owners.Clear()
	a.listening.Add(1)
}

func (a *authCache) down() {
	a.listening.Add(-1)
	a.sessions.Clear()
	a.owners.Clear()
}

// note applies a notification of authChannel; ack answers a note that
// asks for it (the caller sends it).
func (a *authCache) note(p string) (ack string) {
	f := strings.Fields(p)
	if len(f) < 2 {
		return ""
	}
	switch f[0] {
	case "s":
		a.sessions.Drop(f[1])
		a.tellEnded(f[1])
	case "p":
		a.sessions.Drop(f[1])
	case "o":
		a.owners.Drop(f[1])
	case "k":
		a.mu.Lock()
		if w := a.waits[f[1]]; w != nil {
			if w.need--; w.need <= 0 {
				close(w.ch)
				delete(a.waits, f[1])
			}
		}
		a.mu.Unlock()
		return ""
	}
	if len(f) == 3 {
		return "k " + f[2]
	}
	return ""
}

func (a *authCache) tellEnded(key string) {
	a.mu.Lock()
	fns := a.ended
	a.mu.Unlock()
	for _, fn := range fns {
		fn(key)
	}
}

// change runs stmt, which must notify authChannel with note + " " + the
// nonce it is given as its last argument, and waits until every listener
// connected before it answered (at most noteWait).
func (s *Store) change(ctx context.Context, note, stmt string, args ...any) error {
	a := s.auth()
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE application_name = $1 AND datname = current_database()`, listenerApp).Scan(&n); err != nil {
		return err
	}
	nonce := randomNonce()
	w := &waiter{need: n, ch: make(chan struct{})}
	if n > 0 {
		a.mu.Lock()
		a.waits[nonce] = w
		a.mu.Unlock()
		defer func() {
			a.mu.Lock()
			delete(a.waits, nonce)
			a.mu.Unlock()
		}()
	}
	if _, err := s.pool.Exec(ctx, stmt, append(args, note+" "+nonce)...); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	t := time.NewTimer(noteWait)
	defer t.Stop()
	select {
	case <-w.ch:
	case <-t.C:
	case <-ctx.Done():
	}
	return nil
}

func randomNonce() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
