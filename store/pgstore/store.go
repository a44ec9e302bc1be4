package pgstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/foliodev/folio/history"
)

// Store is a PostgreSQL database holding conversation logs.
type Store struct {
	pool  *pgxpool.Pool
	cfg   *pgx.ConnConfig // for lease connections
	owner string
	// timeout bounds each operation that has no context of its own.
	timeout time.Duration
	// step, when set (tests), runs before each statement of a write with
	// its index, and may end the lease connection to simulate a crash.
	step func(m *Medium, i int)
	// ac caches sessions and owners while a Mirror listens (authcache.go).
	ac authCache
}

var _ history.Store = (*Store)(nil)

// Option configures Open.
type Option func(*Store)

// WithTimeout bounds each database operation (default 30 s).
func WithTimeout(d time.Duration) Option { return func(s *Store) { s.timeout = d } }

// IsURL reports whether s names a PostgreSQL database (postgres:// or
// postgresql://) rather than a folder.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Open connects to the database at url and migrates its schema.
func Open(ctx context.Context, url string, opts ...Option) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	host, _ := os.Hostname()
	var nonce [4]byte
	rand.Read(nonce[:])
	s := &Store{cfg: cfg.ConnConfig.Copy(), owner: fmt.Sprintf("%s pid %d %x", host, os.Getpid(), nonce), timeout: 30 * time.Second}
	for _, o := range opts {
		o(s)
	}
	s.pool, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		s.pool.Close()
		return nil, fmt.Errorf("pgstore: connect: %w", err)
	}
	err = migrate(ctx, conn.Conn())
	conn.Release()
	if err != nil {
		s.pool.Close()
		return nil, err
	}
	return s, nil
}

// Pool is the store's connection pool, for tests and tools.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close closes the pool. Media stay usable: each has its own connection.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

func (s *Store) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.timeout)
}

func checkID(id string) error {
	if id == "" || len(id) > 512 || strings.ContainsRune(id, 0) || !utf8Valid(id) {
		return fmt.Errorf("%w %q", ErrBadID, id)
	}
	return nil
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// Name is how the store names conversation id in messages.
func convName(id string) string { return "postgres:" + id }

// leaseKey is id's advisory lock key.
func leaseKey(id string) int64 {
	h := fnv.New64a()
	h.Write([]byte("folio lease\x00" + id))
	return int64(h.Sum64())
}

// Open takes id's lease on a connection of its own.
func (s *Store) Open(id string) (history.Medium, error) { return s.OpenMedium(id) }

// OpenMedium is Open with the concrete type.
func (s *Store) OpenMedium(id string) (*Medium, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, s.cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: connect: %w", err)
	}
	m := &Medium{s: s, id: id, conn: conn}
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, leaseKey(id)).Scan(&got); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("pgstore: lease %s: %w", id, err)
	}
	if !got {
		var pid int
		_ = conn.QueryRow(ctx, `SELECT pid FROM folio_leases WHERE conversation_id = $1`, id).Scan(&pid)
		conn.Close(ctx)
		return nil, &history.LockedError{Path: convName(id), PID: pid}
	}
	// A lease row left by a holder whose session is gone: that writer died
	// holding the conversation.
	var oldPID, oldBackend int
	err = conn.QueryRow(ctx, `SELECT pid, backend_pid FROM folio_leases WHERE conversation_id = $1`, id).Scan(&oldPID, &oldBackend)
	if err == nil {
		m.stale = oldPID
	}
	_, err = conn.Exec(ctx, `INSERT INTO folio_leases (conversation_id, owner, pid, backend_pid)
		VALUES ($1, $2, $3, pg_backend_pid())
		ON CONFLICT (conversation_id) DO UPDATE SET owner = $2, pid = $3, backend_pid = pg_backend_pid(), since = now()`,
		id, s.owner, os.Getpid())
	if err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("pgstore: lease %s: %w", id, err)
	}
	return m, nil
}

// ReadLog reads id's whole log through the pool, without the lease.
func (s *Store) ReadLog(id string) ([]byte, string, error) {
	if err := checkID(id); err != nil {
		return nil, "", err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	var data []byte
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		data, err = readLog(ctx, tx, id)
		return err
	})
	return data, convName(id), err
}

// querier is a connection or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// readLog reads a log's records in order, each with its newline.
func readLog(ctx context.Context, q querier, id string) ([]byte, error) {
	var size int64
	if err := q.QueryRow(ctx, `SELECT size FROM folio_conversations WHERE id = $1`, id).Scan(&size); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("%s: %w", convName(id), fs.ErrNotExist)
		}
		return nil, fmt.Errorf("pgstore: read %s: %w", id, err)
	}
	if size == 0 {
		// A row made for receipts before the first record: no log yet.
		return nil, fmt.Errorf("%s: %w", convName(id), fs.ErrNotExist)
	}
	data := make([]byte, 0, size)
	rows, err := q.Query(ctx, `SELECT body FROM folio_records WHERE conversation_id = $1 ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("pgstore: read %s: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		raw := rows.RawValues()
		data = append(append(data, raw[0]...), '\n')
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgstore: read %s: %w", id, err)
	}
	return data, nil
}

// Tail is what Follow returns: the records after a sequence number.
type Tail struct {
	// Epoch is the log's epoch. When it differs from the one the caller
	// followed, the log was replaced: Records is then the whole log and
	// Reset is true.
	Epoch int64
	Reset bool
	// Records are the new records, each with its newline, starting at
	// byte Offset of the log; Seq is the last one's sequence number (the
	// caller's seq when there are none).
	Records []byte
	Offset  int64
	Seq     int64
}

// Follow returns id's records after sequence number seq of epoch, in one
// snapshot, so a follower never skips a record nor reads one twice: it
// passes back the Tail's Epoch and Seq next time. Seq 0 reads from the
// start.
func (s *Store) Follow(ctx context.Context, id string, epoch, seq int64) (Tail, error) {
	var t Tail
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT epoch FROM folio_conversations WHERE id = $1`, id).Scan(&t.Epoch); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("%s: %w", convName(id), fs.ErrNotExist)
			}
			return err
		}
		if t.Epoch != epoch {
			t.Reset, seq = true, 0
		}
		t.Seq = seq
		rows, err := tx.Query(ctx, `SELECT seq, off, body FROM folio_records WHERE conversation_id = $1 AND seq > $2 ORDER BY seq`, id, seq)
		if err != nil {
			return err
		}
		defer rows.Close()
		first := true
		for rows.Next() {
			var off int64
			var body []byte
			if err := rows.Scan(&t.Seq, &off, &body); err != nil {
				return err
			}
			if first {
				t.Offset, first = off, false
			}
			t.Records = append(append(t.Records, body...), '\n')
		}
		return rows.Err()
	})
	if err != nil {
		return Tail{}, fmt.Errorf("pgstore: follow %s: %w", id, err)
	}
	return t, nil
}

// List summarizes every conversation, newest first: from the row a writer
// keeps up to date, or by reading the log when the row does not say.
func (s *Store) List() ([]history.Summary, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT id, title, head, version, entries, messages, problems, listed_at,
		started, updated, branched, size FROM folio_conversations ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("pgstore: list: %w", err)
	}
	var out []history.Summary
	var unknown []string
	for rows.Next() {
		var sum history.Summary
		var version, entries, messages, problems *int32
		var at *time.Time
		var started, updated *string
		var branched *bool
		if err := rows.Scan(&sum.ID, &sum.Title, &sum.Head, &version, &entries, &messages, &problems, &at,
			&started, &updated, &branched, &sum.Size); err != nil {
			rows.Close()
			return nil, fmt.Errorf("pgstore: list: %w", err)
		}
		if entries == nil || version == nil || messages == nil || problems == nil || at == nil ||
			started == nil || updated == nil || branched == nil {
			unknown = append(unknown, sum.ID)
			continue
		}
		sum.StartedAt, _ = time.Parse(time.RFC3339Nano, *started)
		sum.Branched = *branched
		sum.Path = convName(sum.ID)
		sum.Version, sum.Entries, sum.Messages, sum.Problems = int(*version), int(*entries), int(*messages), int(*problems)
		sum.UpdatedAt, _ = time.Parse(time.RFC3339Nano, *updated)
		out = append(out, sum)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgstore: list: %w", err)
	}
	for _, id := range unknown {
		data, name, err := s.ReadLog(id)
		if err != nil {
			out = append(out, history.Summary{ID: id, Path: name, Err: err})
			continue
		}
		sum := history.SummarizeLog(id, name, data)
		sum.Size = int64(len(data))
		out = append(out, sum)
	}
	history.SortSummaries(out)
	return out, nil
}

// Delete removes id's log and receipts under its lease, and notifies
// AppendsChannel with epoch -1.
func (s *Store) Delete(id string) error {
	m, err := s.OpenMedium(id)
	if err != nil {
		return err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	// Deleted and announced in one transaction: replicas holding a copy
	// read the conversation again, find it gone and drop their copy.
	err = pgx.BeginFunc(ctx, m.conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM folio_conversations WHERE id = $1`, id); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, AppendsChannel, "-1 0 0 "+id)
		return err
	})
	if err != nil {
		err = fmt.Errorf("pgstore: delete %s: %w", id, err)
	}
	return errors.Join(err, m.Close())
}

var _ history.Medium = (*Medium)(nil)

// wholeReads counts Medium.Read calls, copyTails the tail reads a
// replica's writer made through its local copy instead (ReadCopy), so
// tests can tell which way a log was opened.
var wholeReads, copyTails atomic.Int64

// Commands reads every receipt recorded for conversation id, oldest first,
// one per line, without its lease.
func (s *Store) Commands(id string) ([]byte, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT body FROM folio_commands WHERE conversation_id = $1 ORDER BY n`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []byte
	for rows.Next() {
		out = append(append(out, rows.RawValues()[0]...), '\n')
	}
	return out, rows.Err()
}
