package pgstore

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/foliodev/folio/server/auth"
)

// Share links (folio_shares), read on every request by every replica, so a
// revoked link stops at once everywhere; they go with their conversation.

var _ auth.ShareStore = (*Mirror)(nil)

// AddShare records a link under the SHA-256 of its token.
func (s *Store) AddShare(key string, sh auth.Share) error {
	ctx, cancel := s.ctx()
	defer cancel()
	_, err := s.pool.Exec(ctx, `INSERT INTO folio_shares (key, conversation_id, id, created_by, created_at) VALUES ($1, $2, $3, $4, $5)`,
		key, sh.Conversation, sh.ID, sh.CreatedBy, sh.CreatedAt)
	if err != nil {
		return fmt.Errorf("pgstore: save share link: %w", err)
	}
	return nil
}

// ResolveShare returns the conversation of the link under key.
func (s *Store) ResolveShare(key string) (string, bool, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	var conv string
	err := s.pool.QueryRow(ctx, `SELECT conversation_id FROM folio_shares WHERE key = $1`, key).Scan(&conv)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("pgstore: read share link: %w", err)
	}
	return conv, true, nil
}

// ListShares lists a conversation's links, oldest first.
func (s *Store) ListShares(conv string) ([]auth.Share, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT id, conversation_id, created_by, created_at FROM folio_shares
		WHERE conversation_id = $1 ORDER BY created_at, id`, conv)
	if err != nil {
		return nil, fmt.Errorf("pgstore: list share links: %w", err)
	}
	out := []auth.Share{}
	var sh auth.Share
	_, err = pgx.ForEachRow(rows, []any{&sh.ID, &sh.Conversation, &sh.CreatedBy, &sh.CreatedAt}, func() error {
		sh.CreatedAt = sh.CreatedAt.UTC()
		out = append(out, sh)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: list share links: %w", err)
	}
	return out, nil
}

// RevokeShare removes link id of conv ("" removes them all).
func (s *Store) RevokeShare(conv, id string) (bool, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	tag, err := s.pool.Exec(ctx, `DELETE FROM folio_shares WHERE conversation_id = $1 AND ($2 = '' OR id = $2)`, conv, id)
	if err != nil {
		return false, fmt.Errorf("pgstore: revoke share link: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}

// A Mirror keeps its replica's share links in the database.
func (m *Mirror) AddShare(key string, sh auth.Share) error      { return m.s.AddShare(key, sh) }
func (m *Mirror) ResolveShare(key string) (string, bool, error) { return m.s.ResolveShare(key) }
func (m *Mirror) ListShares(conv string) ([]auth.Share, error)  { return m.s.ListShares(conv) }
func (m *Mirror) RevokeShare(conv, id string) (bool, error)     { return m.s.RevokeShare(conv, id) }
