package search

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/store/pgstore"
)

// PGIndex is the search index of a PostgreSQL store (pgstore), kept in the
// same database: folio_search_conversations says how far each log was read
// (its epoch and size), folio_search holds one row per entry of each
// conversation's head with its text and its terms as a tsvector under a
// GIN index (pgstore's migration 5). It is filled the way Index is, from
// history's Scanner over the store's records, and answers the same
// queries: the parsed query becomes a tsquery, hits are ranked by ts_rank
// with the newest first among equals, and snippets are cut here.
//
// A PGIndex is safe for concurrent use. Several processes may share the
// tables: each conversation is updated in one transaction under an
// advisory lock of its own.
type PGIndex struct {
	pool *pgxpool.Pool
	mu   sync.Mutex
	warm []pgWarm // Scanners left where they stopped, by conversation
}

type pgWarm struct {
	id         string
	epoch, off int64
	s          *history.Scanner
}

// OpenPostgres returns the search index of st, whose Open migrated its
// schema. Closing it leaves st open.
func OpenPostgres(st *pgstore.Store) *PGIndex { return &PGIndex{pool: st.Pool()} }

// Close forgets the Scanners kept; the store's pool stays open.
func (ix *PGIndex) Close() error {
	ix.mu.Lock()
	ix.warm = nil
	ix.mu.Unlock()
	return nil
}

// Search parses query and returns the best hits, after catching up with
// what the store's logs gained unless opts.NoCatchUp.
func (ix *PGIndex) Search(ctx context.Context, query string, opts Options) ([]Hit, error) {
	q, err := ParseQuery(query)
	if err != nil {
		return nil, err
	}
	if !opts.NoCatchUp {
		if _, err := ix.CatchUp(ctx); err != nil {
			return nil, err
		}
	}
	return ix.Run(ctx, q, opts)
}

// CatchUp indexes what every log of the store gained since it was read;
// conversations deleted from the store took their rows with them.
func (ix *PGIndex) CatchUp(ctx context.Context) (Stats, error) {
	var st Stats
	rows, err := ix.pool.Query(ctx, `SELECT c.id FROM folio_conversations c
		LEFT JOIN folio_search_conversations s ON s.conversation_id = c.id
		WHERE c.size > 0 AND (s.conversation_id IS NULL OR s.epoch <> c.epoch OR s.size <> c.size)
		ORDER BY c.id`)
	if err != nil {
		return st, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return st, err
	}
	for _, id := range ids {
		st.Conversations++
		if err := ix.update(ctx, id, &st); err != nil {
			if ctx.Err() != nil {
				return st, err
			}
			st.Failed = append(st.Failed, fmt.Errorf("%s: %w", id, err))
		}
	}
	if st.Entries >= analyzeAfter {
		// Without statistics of the new rows the planner cannot tell a
		// common word from a rare one, and reads every match of the
		// first: bring them up to date as part of a large catch-up.
		if _, err := ix.pool.Exec(ctx, `ANALYZE folio_search`); err != nil {
			return st, err
		}
	}
	return st, nil
}

// analyzeAfter is how many rows a catch-up writes before it analyzes the
// table (autovacuum does it in time; a build needs it now).
const analyzeAfter = 5000

// Rebuild forgets everything indexed and reads every log again.
func (ix *PGIndex) Rebuild(ctx context.Context) (Stats, error) {
	ix.mu.Lock()
	ix.warm = nil
	ix.mu.Unlock()
	// TRUNCATE rather than DELETE: a rebuild leaves no dead rows behind.
	if _, err := ix.pool.Exec(ctx, `TRUNCATE folio_search, folio_search_conversations`); err != nil {
		return Stats{}, err
	}
	return ix.CatchUp(ctx)
}

// Update brings one conversation's rows up to its log.
func (ix *PGIndex) Update(ctx context.Context, id string) error {
	var st Stats
	return ix.update(ctx, id, &st)
}

func (ix *PGIndex) takeWarm(id string, epoch, off int64) *history.Scanner {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for i, w := range ix.warm {
		if w.id == id {
			ix.warm = append(ix.warm[:i], ix.warm[i+1:]...)
			if w.epoch == epoch && w.off == off {
				return w.s
			}
			return nil
		}
	}
	return nil
}

func (ix *PGIndex) keepWarm(id string, epoch int64, s *history.Scanner) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if len(ix.warm) == maxWarm {
		ix.warm = ix.warm[1:]
	}
	ix.warm = append(ix.warm, pgWarm{id: id, epoch: epoch, off: s.Offset(), s: s})
}

// readLog returns the log's bytes from byte from (its record seq on) to
// size, if the log is still at epoch, and the seq after the last record
// read; ok is false when the log changed meanwhile.
func readLog(ctx context.Context, tx pgx.Tx, id string, epoch, from, seq, size int64) (data []byte, next int64, ok bool, err error) {
	rows, err := tx.Query(ctx, `SELECT r.seq, r.body FROM folio_records r JOIN folio_conversations c ON c.id = r.conversation_id
		WHERE r.conversation_id = $1 AND r.seq >= $2 AND c.epoch = $3 AND r.off >= $4 AND r.off < $5 ORDER BY r.seq`, id, seq, epoch, from, size)
	if err != nil {
		return nil, 0, false, err
	}
	defer rows.Close()
	var buf bytes.Buffer
	next = seq
	for rows.Next() {
		if err := rows.Scan(&next, nil); err != nil {
			return nil, 0, false, err
		}
		next++
		buf.Write(rows.RawValues()[1])
		buf.WriteByte('\n')
	}
	if err := rows.Err(); err != nil {
		return nil, 0, false, err
	}
	return buf.Bytes(), next, int64(buf.Len()) == size-from, nil
}

// pgRow is one row to write.
type pgRow struct {
	entry, role, body, terms string
	at                       int64
}

func (ix *PGIndex) update(ctx context.Context, id string, st *Stats) error {
	tx, err := ix.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// Derived data: a commit lost to a crash is read again from the log
	// (the position commits with the rows), so it need not wait for its
	// WAL to reach the disk.
	if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('folio search ' || $1, 0))`, id); err != nil {
		return err
	}
	var epoch, size int64
	err = tx.QueryRow(ctx, `SELECT epoch, size FROM folio_conversations WHERE id = $1`, id).Scan(&epoch, &size)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // deleted: its rows went with it
	}
	if err != nil {
		return err
	}
	var c convRow
	var kEpoch, kSeq int64
	known := true
	err = tx.QueryRow(ctx, `SELECT epoch, size, next_seq, head, title, first FROM folio_search_conversations WHERE conversation_id = $1`, id).
		Scan(&kEpoch, &c.size, &kSeq, &c.head, &c.title, &c.first)
	if errors.Is(err, pgx.ErrNoRows) {
		known, err = false, nil
	}
	if err != nil {
		return err
	}
	if (known && kEpoch == epoch && c.size == size) || size == 0 {
		return nil
	}
	more := known && kEpoch == epoch && c.size < size
	s, from, seq, after, whole := (*history.Scanner)(nil), int64(0), int64(0), int64(0), true
	if more {
		whole, after = false, c.size
		if s = ix.takeWarm(id, epoch, c.size); s != nil {
			from, seq = c.size, kSeq
		}
	} else {
		ix.takeWarm(id, -1, -1)
	}
	if s == nil {
		s = history.NewScanner()
	}
	data, next, ok, err := readLog(ctx, tx, id, epoch, from, seq, size)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("the log changed while it was read; the next catch-up reads it")
	}
	ups, whole, err := scanGain(ctx, s, bytes.NewReader(data), after, whole)
	if err != nil {
		return err
	}
	read := size - from
	if whole && from > 0 {
		// As Index.updateLog: a replaced document needs a Scanner that
		// read the log from its start.
		s, from = history.NewScanner(), 0
		if data, next, ok, err = readLog(ctx, tx, id, epoch, 0, 0, size); err != nil || !ok {
			return errors.Join(err, errors.New("the log changed while it was read"))
		}
		if _, _, err := scanGain(ctx, s, bytes.NewReader(data), size, true); err != nil {
			return err
		}
		read += size
	}
	if whole {
		st.Whole++
		c.first = ""
		ups = s.Document()
	}
	var puts []pgRow
	var dels []string
	for _, e := range ups {
		text, role, ok := entryText(e)
		if !ok {
			if !whole {
				dels = append(dels, e.ID)
			}
			continue
		}
		if c.first == "" && role == RolePrompt {
			c.first = firstLine(text)
		}
		text = pgClean(text)
		var at int64
		if !e.Timestamp.IsZero() {
			at = e.Timestamp.UnixMilli()
		}
		puts = append(puts, pgRow{entry: e.ID, role: role, body: text, terms: tsvector(text), at: at})
	}
	entries := len(puts) // the title's row is not an entry
	title := pgClean(strings.TrimSpace(s.Title()))
	if title != c.title || whole {
		if title == "" {
			dels = append(dels, "")
		} else {
			puts = append(puts, pgRow{role: RoleTitle, body: title, terms: tsvector(title)})
		}
	}
	if s.Offset() != size {
		// A torn last record: the Scanner stops before it, and the next
		// catch-up reads it again (by its offset, from its seq on).
		next = 0
	}
	if _, err := tx.Exec(ctx, `INSERT INTO folio_search_conversations (conversation_id, epoch, size, next_seq, head, title, first)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (conversation_id) DO UPDATE SET epoch = $2, size = $3, next_seq = $4, head = $5, title = $6, first = $7`,
		id, epoch, s.Offset(), next, s.Head(), title, c.first); err != nil {
		return err
	}
	if whole {
		if _, err := tx.Exec(ctx, `DELETE FROM folio_search WHERE conversation_id = $1`, id); err != nil {
			return err
		}
	}
	if len(dels) > 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM folio_search WHERE conversation_id = $1 AND entry = ANY($2)`, id, dels); err != nil {
			return err
		}
	}
	if err := putRows(ctx, tx, id, puts); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	st.Read++
	st.Bytes += read
	st.Entries += entries
	ix.keepWarm(id, epoch, s)
	return nil
}

// pgBatch is how many rows one INSERT writes.
const pgBatch = 1000

// putRows inserts or replaces rows, pgBatch to a statement.
func putRows(ctx context.Context, tx pgx.Tx, id string, rows []pgRow) error {
	for len(rows) > 0 {
		n := min(len(rows), pgBatch)
		es, rs, bs, ts := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		ats := make([]int64, n)
		for i, r := range rows[:n] {
			es[i], rs[i], bs[i], ts[i], ats[i] = r.entry, r.role, r.body, r.terms, r.at
		}
		if _, err := tx.Exec(ctx, `INSERT INTO folio_search (conversation_id, entry, role, at, body, terms)
			SELECT $1, e, r, a, b, t::tsvector FROM unnest($2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[]) AS u(e, r, a, b, t)
			ON CONFLICT (conversation_id, entry) DO UPDATE SET role = excluded.role, at = excluded.at, body = excluded.body, terms = excluded.terms`,
			id, es, rs, ats, bs, ts); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// pgClean keeps NUL, which PostgreSQL's text refuses, out of indexed text.
func pgClean(s string) string {
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", " ")
	}
	return s
}

// Run searches the index as it is for a parsed query, as Index.Run does:
// the newest candidates matches are ranked.
func (ix *PGIndex) Run(ctx context.Context, q Query, opts Options) ([]Hit, error) {
	limit, timeout := opts.bounds()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var sb strings.Builder
	args := []any{q.tsquery()}
	sb.WriteString(`SELECT s.conversation_id, c.title, c.first, s.entry, s.role, s.at, ts_rank(s.terms, $1::tsquery) AS rank, s.body
FROM (SELECT n FROM folio_search WHERE terms @@ $1::tsquery`)
	if len(q.Roles) > 0 {
		args = append(args, q.Roles)
		fmt.Fprintf(&sb, ` AND role = ANY($%d)`, len(args))
	}
	if q.Conversation != "" {
		args = append(args, q.Conversation)
		fmt.Fprintf(&sb, ` AND conversation_id = $%d`, len(args))
	}
	if !q.After.IsZero() {
		args = append(args, q.After.UnixMilli())
		fmt.Fprintf(&sb, ` AND at >= $%d`, len(args))
	}
	if !q.Before.IsZero() {
		args = append(args, q.Before.UnixMilli())
		fmt.Fprintf(&sb, ` AND at < $%d`, len(args))
	}
	args = append(args, limit)
	if opts.Newest {
		fmt.Fprintf(&sb, ` ORDER BY n DESC LIMIT $%d) k
JOIN folio_search s ON s.n = k.n JOIN folio_search_conversations c ON c.conversation_id = s.conversation_id
ORDER BY s.n DESC`, len(args))
	} else {
		fmt.Fprintf(&sb, ` ORDER BY n DESC LIMIT %d) k
JOIN folio_search s ON s.n = k.n JOIN folio_search_conversations c ON c.conversation_id = s.conversation_id
ORDER BY rank DESC, s.at DESC, s.n DESC LIMIT $%d`, candidates, len(args))
	}
	rows, err := ix.pool.Query(ctx, sb.String(), args...)
	if err != nil {
		return nil, pgQueryErr(ctx, err)
	}
	defer rows.Close()
	hits := []Hit{}
	for rows.Next() {
		var h Hit
		var title, first, body string
		var at int64
		var rank float32
		if err := rows.Scan(&h.Conversation, &title, &first, &h.Entry, &h.Role, &at, &rank, &body); err != nil {
			return nil, pgQueryErr(ctx, err)
		}
		h.Title = title
		if h.Title == "" {
			h.Title = first
		}
		if at != 0 {
			h.At = time.UnixMilli(at).UTC()
		}
		h.Score = -float64(rank) // smaller is better, as BM25's
		h.Snippet = q.snippet(body)
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, pgQueryErr(ctx, err)
	}
	return hits, nil
}

func pgQueryErr(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ErrTimeout
	}
	return err
}
