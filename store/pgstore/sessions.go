package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/jackc/pgx/v5"

	"github.com/foliodev/folio/server/auth"
)

// Sessions keeps folio serve's sign-in sessions in folio_sessions, so a
// session made on one replica is valid on every other and its end is seen
// by all at once. While the store's Mirror listens, each replica caches the
// sessions it read (authcache.go).
type Sessions struct{ s *Store }

var (
	_ auth.Store       = Sessions{}
	_ auth.EndNotifier = Sessions{}
)

// NewSessions returns the session store of s.
func NewSessions(s *Store) Sessions { return Sessions{s} }

// Put saves a session, and drops the expired ones now and then.
func (x Sessions) Put(ctx context.Context, key string, s auth.Session) error {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("pgstore: encode session: %w", err)
	}
	err = x.s.change(ctx, "p "+key, `WITH put AS (INSERT INTO folio_sessions (key, body, expires) VALUES ($1, $2, $3)
		ON CONFLICT (key) DO UPDATE SET body = excluded.body, expires = excluded.expires RETURNING 1)
		SELECT pg_notify($4, $5)`, key, b, s.Expires, authChannel)
	x.s.auth().sessions.Drop(key)
	if err != nil {
		return fmt.Errorf("pgstore: save session: %w", err)
	}
	x.s.pool.Exec(ctx, `DELETE FROM folio_sessions WHERE expires < now() - interval '1 hour'`)
	return nil
}

// Get returns a session that has not expired, from the replica's cache
// when it can.
func (x Sessions) Get(ctx context.Context, key string) (auth.Session, error) {
	c := x.s.auth()
	if c.on() {
		if s, ok := c.sessions.Get(key); ok {
			if !time.Now().Before(s.Expires) {
				return auth.Session{}, auth.ErrNoSession
			}
			return s, nil
		}
	}
	gen := c.sessions.Gen()
	var b []byte
	var exp time.Time
	err := x.s.pool.QueryRow(ctx, `SELECT body, expires FROM folio_sessions WHERE key = $1`, key).Scan(&b, &exp)
	if errors.Is(err, pgx.ErrNoRows) {
		return auth.Session{}, auth.ErrNoSession
	}
	if err != nil {
		return auth.Session{}, fmt.Errorf("pgstore: read session: %w", err)
	}
	var s auth.Session
	if err := json.Unmarshal(b, &s); err != nil {
		return auth.Session{}, fmt.Errorf("pgstore: session %.8s…: %w", key, err)
	}
	if !time.Now().Before(exp) {
		return auth.Session{}, auth.ErrNoSession
	}
	s.Expires = exp
	if c.on() {
		c.sessions.Put(key, s, gen)
	}
	return s, nil
}

// Delete ends a session on every replica: the row goes and the note that
// drops it from every replica's cache is sent in one statement; Delete
// returns once every listening replica dropped it (authcache.go).
func (x Sessions) Delete(ctx context.Context, key string) error {
	c := x.s.auth()
	err := x.s.change(ctx, "s "+key, `WITH d AS (DELETE FROM folio_sessions WHERE key = $1 RETURNING 1)
		SELECT pg_notify($2, $3)`, key, authChannel)
	c.sessions.Drop(key)
	if err != nil {
		return fmt.Errorf("pgstore: end session: %w", err)
	}
	c.tellEnded(key) // told again by the note; a listener that is down would not
	return nil
}

// OnEnded adds a function told the key of every session ended on any
// replica (heard on the Mirror's listener), and of those this replica ends.
func (x Sessions) OnEnded(fn func(key string)) {
	c := x.s.auth()
	c.mu.Lock()
	c.ended = append(c.ended, fn)
	c.mu.Unlock()
}
