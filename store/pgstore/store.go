package pgstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
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
func Name(id string) string { return "postgres:" + id }

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
		return nil, &history.LockedError{Path: Name(id), PID: pid}
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
	return data, Name(id), err
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
			return nil, fmt.Errorf("%s: %w", Name(id), fs.ErrNotExist)
		}
		return nil, fmt.Errorf("pgstore: read %s: %w", id, err)
	}
	if size == 0 {
		// A row made for receipts before the first record: no log yet.
		return nil, fmt.Errorf("%s: %w", Name(id), fs.ErrNotExist)
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
				return fmt.Errorf("%s: %w", Name(id), fs.ErrNotExist)
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
		sum.Path = Name(sum.ID)
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

// Medium is one conversation's log held under its lease. Every write goes
// through the lease's own connection, so a writer whose lease ended can
// write nothing.
type Medium struct {
	s  *Store
	id string
	// mu serializes the lease connection: a Log saves from one goroutine
	// while an engine records command receipts from another.
	mu    sync.Mutex
	conn  *pgx.Conn
	stale int
	// What this writer last read or wrote: a write that finds the row
	// otherwise fails with ErrConflict.
	known            bool // the row exists
	size, next, epoc int64
	lost             bool
}

var _ history.Medium = (*Medium)(nil)

// Name is "postgres:<id>".
func (m *Medium) Name() string { return Name(m.id) }

// TookOverFrom is the process ID of a writer whose lease row was left
// behind (it died holding the conversation), or 0.
func (m *Medium) TookOverFrom() int { return m.stale }

// BackendPID is the server process of the lease connection (tests end it
// with pg_terminate_backend to simulate a crash).
func (m *Medium) BackendPID() uint32 { return m.conn.PgConn().PID() }

func (m *Medium) fail(err error) error {
	if m.conn.IsClosed() {
		m.lost = true
		return fmt.Errorf("%w: %v", ErrLeaseLost, err)
	}
	return err
}

// Read reads the whole log on the lease connection.
func (m *Medium) Read() ([]byte, error) {
	wholeReads.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lost || m.conn.IsClosed() {
		return nil, ErrLeaseLost
	}
	ctx, cancel := m.s.ctx()
	defer cancel()
	var data []byte
	err := pgx.BeginTxFunc(ctx, m.conn, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT size, next_seq, epoch FROM folio_conversations WHERE id = $1`, m.id).Scan(&m.size, &m.next, &m.epoc)
		if errors.Is(err, pgx.ErrNoRows) {
			m.known = false
			return fmt.Errorf("%s: %w", m.Name(), fs.ErrNotExist)
		}
		if err != nil {
			return err
		}
		m.known = true
		data, err = readLog(ctx, tx, m.id)
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, m.fail(err)
	}
	return data, err
}

// wholeReads counts Medium.Read calls, copyTails the tail reads a
// replica's writer made through its local copy instead (ReadCopy), so
// tests can tell which way a log was opened.
var wholeReads, copyTails atomic.Int64

// logPos is where a log is: its size in bytes, the sequence number its
// next record takes and its epoch, as the conversation's row says.
type logPos struct{ size, next, epoch int64 }

// position reads the log's position on the lease connection: what Read
// reads besides the records. A log without records is fs.ErrNotExist.
func (m *Medium) position(ctx context.Context) (logPos, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var p logPos
	if m.lost || m.conn.IsClosed() {
		return p, ErrLeaseLost
	}
	err := m.conn.QueryRow(ctx, `SELECT size, next_seq, epoch FROM folio_conversations WHERE id = $1`, m.id).Scan(&p.size, &p.next, &p.epoch)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && p.size == 0 {
		return p, fmt.Errorf("%s: %w", m.Name(), fs.ErrNotExist)
	}
	if err != nil {
		return p, m.fail(fmt.Errorf("pgstore: read %s: %w", m.id, err))
	}
	return p, nil
}

// readAt makes p what this writer last read, as Read does: its writes
// continue the log there, and fail with ErrConflict if it moved.
func (m *Medium) readAt(p logPos) {
	m.mu.Lock()
	m.known, m.size, m.next, m.epoc = true, p.size, p.next, p.epoch
	m.mu.Unlock()
}

// step runs the test hook before statement i of a write.
func (m *Medium) step(i int) {
	if m.s.step != nil {
		m.s.step(m, i)
	}
}

// Append writes records as rows in one transaction that also notifies the
// conversation's channel.
func (m *Medium) Append(records []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.write(records, !m.known) // no log yet: written whole
}

// Replace makes data the whole log in one transaction, with a new epoch.
func (m *Medium) Replace(data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.write(data, true)
}

// position is where a write left the log, for a replica's copy.
type position struct {
	fresh       bool  // the log did not exist before the write
	size, epoch int64 // before the write
	newEpoch    int64 // after it
	seq         int64 // the last record's sequence number after it
}

// writeAt is Append (replace false) or Replace, reporting where the log
// was and is.
func (m *Medium) writeAt(data []byte, replace bool) (position, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := position{fresh: !m.known, size: m.size, epoch: m.epoc}
	if err := m.write(data, replace || !m.known); err != nil {
		return p, err
	}
	p.newEpoch, p.seq = m.epoc, m.next-1
	return p, nil
}

// readCommitted reads the whole log on the lease connection, for a copy
// made right after this writer's own commit.
func (m *Medium) readCommitted(ctx context.Context) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return readLog(ctx, m.conn, m.id)
}

// write is Append (replace false) and Replace.
func (m *Medium) write(data []byte, replace bool) error {
	if m.lost || m.conn.IsClosed() {
		return ErrLeaseLost
	}
	var offs, seqs []int64
	var bodies [][]byte
	size, next := m.size, m.next
	if replace {
		size = 0
	}
	if !m.known {
		size, next = 0, 1 // sequence numbers start at 1, so Follow from 0 reads all
	}
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return fmt.Errorf("pgstore: %s: a record without its newline", m.Name())
		}
		offs, seqs, bodies = append(offs, size), append(seqs, next), append(bodies, data[:i])
		size += int64(i) + 1
		next++
		data = data[i+1:]
	}
	epoch := m.epoc
	if replace && m.known {
		epoch++
	}
	ctx, cancel := m.s.ctx()
	defer cancel()
	step := 0
	exec := func(tx pgx.Tx, sql string, args ...any) (int64, error) {
		m.step(step)
		step++
		tag, err := tx.Exec(ctx, sql, args...)
		return tag.RowsAffected(), err
	}
	m.step(step)
	step++
	tx, err := m.conn.Begin(ctx)
	if err != nil {
		return m.fail(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// The row as this writer knows it, locked; anything else means a write
	// without the lease.
	var n int64
	switch {
	case !m.known:
		n, err = exec(tx, `INSERT INTO folio_conversations (id, size, next_seq, epoch) VALUES ($1, $2, $3, 0)
			ON CONFLICT (id) DO NOTHING`, m.id, size, next)
	default:
		n, err = exec(tx, `UPDATE folio_conversations SET size = $2, next_seq = $3, epoch = $4, updated_at = now()
			WHERE id = $1 AND size = $5 AND next_seq = $6 AND epoch = $7`, m.id, size, next, epoch, m.size, m.next, m.epoc)
	}
	if err != nil {
		return m.fail(fmt.Errorf("pgstore: write %s: %w", m.id, err))
	}
	if n != 1 {
		return fmt.Errorf("%w (%s)", ErrConflict, m.Name())
	}
	if replace && m.known {
		if _, err := exec(tx, `DELETE FROM folio_records WHERE conversation_id = $1`, m.id); err != nil {
			return m.fail(fmt.Errorf("pgstore: write %s: %w", m.id, err))
		}
	}
	if len(bodies) > 0 {
		if _, err := exec(tx, `INSERT INTO folio_records (conversation_id, seq, off, body)
			SELECT $1, unnest($2::bigint[]), unnest($3::bigint[]), unnest($4::bytea[])`, m.id, seqs, offs, bodies); err != nil {
			return m.fail(fmt.Errorf("pgstore: write %s: %w", m.id, err))
		}
	}
	if _, err := exec(tx, `SELECT pg_notify($1, $2)`, AppendsChannel,
		strconv.FormatInt(epoch, 10)+" "+strconv.FormatInt(next-1, 10)+" "+strconv.FormatInt(size, 10)+" "+m.id); err != nil {
		return m.fail(fmt.Errorf("pgstore: write %s: %w", m.id, err))
	}
	m.step(step)
	if err := tx.Commit(ctx); err != nil {
		return m.fail(fmt.Errorf("pgstore: write %s: %w", m.id, err))
	}
	m.known, m.size, m.next, m.epoc = true, size, next, epoch
	return nil
}

// Noted keeps the listing columns up to date; a summary the writer cannot
// give clears them, so List reads the log.
func (m *Medium) Noted(s history.Summary) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lost || m.conn.IsClosed() || !m.known {
		return
	}
	ctx, cancel := m.s.ctx()
	defer cancel()
	if s.Err != nil {
		_, _ = m.conn.Exec(ctx, `UPDATE folio_conversations SET entries = NULL WHERE id = $1`, m.id)
		return
	}
	head := s.Head
	if head == "" {
		head = history.Main
	}
	_, _ = m.conn.Exec(ctx, `UPDATE folio_conversations SET title = $2, head = $3, version = $4, entries = $5,
		messages = $6, problems = $7, listed_at = $8, started = $9, updated = $10, branched = $11 WHERE id = $1`,
		m.id, s.Title, head, s.Version, s.Entries, s.Messages, s.Problems, s.UpdatedAt,
		instant(s.StartedAt), instant(s.UpdatedAt), s.Branched)
}

// instant is t as the listing's text columns keep it; NULL for a zero t
// (a log without the date), so List reads the log.
func instant(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339Nano)
	return &s
}

// RecordCommand appends a receipt row.
func (m *Medium) RecordCommand(line []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lost || m.conn.IsClosed() {
		return ErrLeaseLost
	}
	ctx, cancel := m.s.ctx()
	defer cancel()
	// Receipts belong to a conversation row; a command may come before
	// the first record, so the row is made here if need be.
	err := pgx.BeginFunc(ctx, m.conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO folio_conversations (id) VALUES ($1) ON CONFLICT (id) DO NOTHING`, m.id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO folio_commands (conversation_id, body) VALUES ($1, $2)`, m.id, line); err != nil {
			return err
		}
		if m.known {
			return nil
		}
		return tx.QueryRow(ctx, `SELECT size, next_seq, epoch FROM folio_conversations WHERE id = $1`, m.id).Scan(&m.size, &m.next, &m.epoc)
	})
	if err != nil {
		return m.fail(err)
	}
	m.known = true
	return nil
}

// Commands reads every receipt, oldest first.
func (m *Medium) Commands() ([]byte, error) { return m.s.Commands(m.id) }

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

// Close removes the lease row, frees the advisory lock and ends the lease
// connection.
func (m *Medium) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.conn.IsClosed() {
		return nil
	}
	ctx, cancel := m.s.ctx()
	defer cancel()
	_, _ = m.conn.Exec(ctx, `DELETE FROM folio_leases WHERE conversation_id = $1 AND backend_pid = pg_backend_pid()`, m.id)
	// Unlocked explicitly: the server frees a closed session's locks only
	// when its backend exits, after Close has returned.
	_, _ = m.conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, leaseKey(m.id))
	return m.conn.Close(ctx)
}

// alive reports whether the lease connection still answers; a connection
// that does not is marked lost (its writes return ErrLeaseLost).
func (m *Medium) alive(ctx context.Context) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lost || m.conn.IsClosed() {
		m.lost = true
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, m.s.timeout)
	defer cancel()
	if err := m.conn.Ping(ctx); err != nil {
		m.lost = true
		return false
	}
	return true
}
