package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/foliodev/folio/history"
)

// This file is one conversation's log in the database as a history.Medium:
// read whole, appended or replaced under the writer's lease, which every
// write goes through.

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

// Name is "postgres:<id>".
func (m *Medium) Name() string { return convName(m.id) }

// TookOverFrom is the process ID of a writer whose lease row was left
// behind (it died holding the conversation), or 0.
func (m *Medium) TookOverFrom() int { return m.stale }

// BackendPID is the server process of the lease connection (tests end it
// with pg_terminate_backend to simulate a crash).
func (m *Medium) BackendPID() uint32 { return m.conn.PgConn().PID() }

func (m *Medium) fail(err error) error {
	if m.conn.IsClosed() {
		m.lost = true
		return fmt.Errorf("%w: %v", errLeaseLost, err)
	}
	return err
}

// Read reads the whole log on the lease connection.
func (m *Medium) Read() ([]byte, error) {
	wholeReads.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lost || m.conn.IsClosed() {
		return nil, errLeaseLost
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
		return p, errLeaseLost
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
		return errLeaseLost
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
		return errLeaseLost
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
// that does not is marked lost (its writes return errLeaseLost).
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
