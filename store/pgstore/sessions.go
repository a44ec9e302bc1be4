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
// by all at once.
type Sessions struct{ s *Store }

var _ auth.Store = Sessions{}

// NewSessions returns the session store of s.
func NewSessions(s *Store) Sessions { return Sessions{s} }

// Put saves a session, and drops the expired ones now and then.
func (x Sessions) Put(ctx context.Context, key string, s auth.Session) error {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("pgstore: encode session: %w", err)
	}
	_, err = x.s.pool.Exec(ctx, `INSERT INTO folio_sessions (key, body, expires) VALUES ($1, $2, $3)
		ON CONFLICT (key) DO UPDATE SET body = excluded.body, expires = excluded.expires`, key, b, s.Expires)
	if err != nil {
		return fmt.Errorf("pgstore: save session: %w", err)
	}
	x.s.pool.Exec(ctx, `DELETE FROM folio_sessions WHERE expires < now() - interval '1 hour'`)
	return nil
}

// Get reads a session that has not expired.
func (x Sessions) Get(ctx context.Context, key string) (auth.Session, error) {
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
	return s, nil
}

// Delete ends a session.
func (x Sessions) Delete(ctx context.Context, key string) error {
	if _, err := x.s.pool.Exec(ctx, `DELETE FROM folio_sessions WHERE key = $1`, key); err != nil {
		return fmt.Errorf("pgstore: end session: %w", err)
	}
	return nil
}
