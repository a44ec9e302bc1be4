package pgstore

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Owners: with accounts, folio_conversations.owner is the subject of the
// person a conversation belongs to; NULL for a conversation from before
// accounts, which is the admins'. Kept in the database so every replica
// answers alike; it goes with its row.

// Owner returns id's owner, "" for none or no such conversation; from the
// replica's cache when it can (authcache.go).
func (s *Store) Owner(id string) (string, error) {
	c := s.auth()
	if c.on() {
		if o, ok := c.owners.Get(id); ok {
			return o, nil
		}
	}
	gen := c.owners.Gen()
	ctx, cancel := s.ctx()
	defer cancel()
	var o *string
	err := s.pool.QueryRow(ctx, `SELECT owner FROM folio_conversations WHERE id = $1`, id).Scan(&o)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("pgstore: owner of %s: %w", id, err)
	}
	owner := ""
	if err == nil && o != nil {
		owner = *o
	}
	if c.on() {
		c.owners.Put(id, owner, gen)
	}
	return owner, nil
}

// AllOwners maps every owned conversation to its owner.
func (s *Store) AllOwners() (map[string]string, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT id, owner FROM folio_conversations WHERE owner IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: owners: %w", err)
	}
	m := map[string]string{}
	var id, o string
	_, err = pgx.ForEachRow(rows, []any{&id, &o}, func() error { m[id] = o; return nil })
	if err != nil {
		return nil, fmt.Errorf("pgstore: owners: %w", err)
	}
	return m, nil
}

// SetOwner records id's owner ("" makes it nobody's) and tells every
// replica's cache, returning once every listening replica dropped its cached owner
// (authcache.go).
func (s *Store) SetOwner(id, subject string) error {
	ctx, cancel := s.ctx()
	defer cancel()
	var o *string
	if subject != "" {
		o = &subject
	}
	err := s.change(ctx, "o "+id, `WITH u AS (UPDATE folio_conversations SET owner = $2 WHERE id = $1 RETURNING 1)
		SELECT pg_notify($3, $4)`, id, o, authChannel)
	s.auth().owners.Drop(id)
	if err != nil {
		return fmt.Errorf("pgstore: set owner of %s: %w", id, err)
	}
	return nil
}

// Owner, AllOwners and SetOwner make a Mirror the owners of its replica.
func (m *Mirror) Owner(id string) (string, error)       { return m.s.Owner(id) }
func (m *Mirror) AllOwners() (map[string]string, error) { return m.s.AllOwners() }
func (m *Mirror) SetOwner(id, subject string) error     { return m.s.SetOwner(id, subject) }
