package pgstore

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5"

	"github.com/foliodev/folio/history"
)

// Blobs (migration 3). A conversation's attachments and artifacts are rows
// of folio_blobs, one per distinct content (keyed by its sha256), named by
// rows of folio_blob_names; both are deleted with the conversation's row.
// The bytes are bytea, not large objects: history's caps keep each value
// to tens of MiB, which a bytea holds and pgx sends in one message, and
// bytea rows go with ON DELETE CASCADE and every pg_dump, where large
// objects would need lo_unlink on every delete and their own permissions.
// Blob writes need no lease: they go through the pool, so a replica that
// does not own the conversation stores what it received.

var _ history.Blobs = (*Store)(nil)

// PutBlob stores data under conv's kind/name in one transaction: the bytes
// once per conversation and digest, then the name. The conversation's row
// is locked against a concurrent delete meanwhile, but not against its
// writer's appends.
func (s *Store) PutBlob(conv string, b history.Blob, data []byte) (history.Blob, error) {
	if err := checkID(conv); err != nil {
		return b, err
	}
	b, err := history.CheckBlob(b, data)
	if err != nil {
		return b, err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var one int
		// KEY SHARE: it holds off a delete of the conversation, not the
		// appends its writer makes meanwhile.
		err := tx.QueryRow(ctx, `SELECT 1 FROM folio_conversations WHERE id = $1 FOR KEY SHARE`, conv).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%s %s: no conversation %s: %w", b.Kind, b.Name, convName(conv), fs.ErrNotExist)
		}
		if err != nil {
			return err
		}
		var have string
		err = tx.QueryRow(ctx, `SELECT digest FROM folio_blob_names WHERE conversation_id = $1 AND kind = $2 AND name = $3`,
			conv, string(b.Kind), b.Name).Scan(&have)
		switch {
		case err == nil && have == b.Digest:
			return nil // stored already
		case err == nil:
			return fmt.Errorf("%w: %s %s of %s holds sha256 %s", history.ErrBlobConflict, b.Kind, b.Name, convName(conv), have)
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		// The bytes travel only when the conversation lacks them.
		if _, err := tx.Exec(ctx, `INSERT INTO folio_blobs (conversation_id, digest, size, body)
			SELECT $1, $2, $3, $4 WHERE NOT EXISTS (SELECT 1 FROM folio_blobs WHERE conversation_id = $1 AND digest = $2)
			ON CONFLICT DO NOTHING`, conv, b.Digest, b.Size, data); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO folio_blob_names (conversation_id, kind, name, digest, meta)
			VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`, conv, string(b.Kind), b.Name, b.Digest, b.Meta)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			// Another put of this name committed meanwhile.
			if err := tx.QueryRow(ctx, `SELECT digest FROM folio_blob_names WHERE conversation_id = $1 AND kind = $2 AND name = $3`,
				conv, string(b.Kind), b.Name).Scan(&have); err != nil {
				return err
			}
			if have != b.Digest {
				return fmt.Errorf("%w: %s %s of %s holds sha256 %s", history.ErrBlobConflict, b.Kind, b.Name, convName(conv), have)
			}
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, history.ErrBlobConflict) {
			return b, err
		}
		return b, fmt.Errorf("pgstore: put %s %s of %s: %w", b.Kind, b.Name, conv, err)
	}
	return b, nil
}

// GetBlob reads conv's kind/name with its bytes.
func (s *Store) GetBlob(conv string, kind history.BlobKind, name string) (history.Blob, []byte, error) {
	b := history.Blob{Kind: kind, Name: name}
	if err := checkID(conv); err != nil {
		return b, nil, err
	}
	if err := history.CheckBlobName(kind, name); err != nil {
		return b, nil, err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	var data []byte
	err := s.pool.QueryRow(ctx, `SELECT n.digest, b.size, n.meta, b.body FROM folio_blob_names n
		JOIN folio_blobs b USING (conversation_id, digest)
		WHERE n.conversation_id = $1 AND n.kind = $2 AND n.name = $3`, conv, string(kind), name).Scan(&b.Digest, &b.Size, &b.Meta, &data)
	if errors.Is(err, pgx.ErrNoRows) {
		return b, nil, fmt.Errorf("no %s %s in %s: %w", kind, name, convName(conv), fs.ErrNotExist)
	}
	if err != nil {
		return b, nil, fmt.Errorf("pgstore: get %s %s of %s: %w", kind, name, conv, err)
	}
	return b, data, nil
}

// DeleteBlob removes the name, and the bytes when no other name of the
// conversation refers to them.
func (s *Store) DeleteBlob(conv string, kind history.BlobKind, name string) error {
	if err := checkID(conv); err != nil {
		return err
	}
	if err := history.CheckBlobName(kind, name); err != nil {
		return err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var digest string
		err := tx.QueryRow(ctx, `DELETE FROM folio_blob_names WHERE conversation_id = $1 AND kind = $2 AND name = $3 RETURNING digest`,
			conv, string(kind), name).Scan(&digest)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM folio_blobs b WHERE conversation_id = $1 AND digest = $2
			AND NOT EXISTS (SELECT 1 FROM folio_blob_names n WHERE n.conversation_id = $1 AND n.digest = $2)`, conv, digest)
		return err
	})
	if err != nil {
		return fmt.Errorf("pgstore: delete %s %s of %s: %w", kind, name, conv, err)
	}
	return nil
}

// ListBlobs describes conv's blobs by kind, then name (without their
// descriptions).
func (s *Store) ListBlobs(conv string) ([]history.Blob, error) {
	if err := checkID(conv); err != nil {
		return nil, err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT n.kind, n.name, n.digest, b.size FROM folio_blob_names n
		JOIN folio_blobs b USING (conversation_id, digest)
		WHERE n.conversation_id = $1 ORDER BY n.kind, n.name`, conv)
	if err != nil {
		return nil, fmt.Errorf("pgstore: list blobs of %s: %w", conv, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (history.Blob, error) {
		var b history.Blob
		var kind string
		err := r.Scan(&kind, &b.Name, &b.Digest, &b.Size)
		b.Kind = history.BlobKind(kind)
		return b, err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: list blobs of %s: %w", conv, err)
	}
	return out, nil
}

// Blobs is the database's blob store, for the server's attachments and
// artifacts on a replica.
func (m *Mirror) Blobs() history.Blobs { return m.s }
