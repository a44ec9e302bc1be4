package search

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/store/pgstore"
)

// PGIndex is the search index of a PostgreSQL store (pgstore), kept in the
// same database: folio_search_conversations says how far each log was read
// (its epoch and size), folio_search holds one row per entry of each
// conversation's head with its text and the hashes of its distinct folded
// words (wordHash, an int4[]) under a GIN index, and folio_search_words
// lists the words, for prefixes (pgstore's migration 8). It is filled the
// way Index is, from history's Scanner over the store's records, and
// answers the same queries: the parsed query becomes conditions on the
// hashes, a prefix expanded to the words it starts; phrases are checked
// in the rows' text, and so is every hit (two words may share a hash);
// hits are ranked by BM25 with each word counted once (the shorter entry
// first) and the newest first among equals, and snippets are cut here.
//
// A PGIndex is safe for concurrent use. Several processes may share the
// tables: each conversation is updated in one transaction under an
// advisory lock of its own.
type PGIndex struct {
	pool *pgxpool.Pool
	mu   sync.Mutex
	warm []pgWarm // Scanners left where they stopped, by conversation
	st   pgStats  // the table's statistics, for Run
	// window is how many of the newest rows Run walks (pgWindow when 0;
	// tests make it small).
	window int64
	// known holds words this index wrote to folio_search_words (and saw
	// committed), so a save sends only words it has not; emptied when it
	// reaches maxKnown. Words are never deleted from the table.
	known map[string]struct{}
	// hash is wordHash; tests give words the same hash.
	hash func(string) int32
}

// maxKnown bounds PGIndex.known.
const maxKnown = 1 << 17

type pgWarm struct {
	id         string
	epoch, off int64
	s          *history.Scanner
}

// OpenPostgres returns the search index of st, whose Open migrated its
// schema. Closing it leaves st open.
func OpenPostgres(st *pgstore.Store) *PGIndex {
	return &PGIndex{pool: st.Pool(), known: map[string]struct{}{}, hash: wordHash}
}

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
	// Conversations are read and written by pgWorkers at once, each in
	// its own transaction on its own connection: the database's work on
	// one (reading records, the GIN index) overlaps this process's on
	// another (parsing, folding words).
	var mu sync.Mutex
	next := 0
	var wg sync.WaitGroup
	for range min(pgWorkers, len(ids)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if next == len(ids) || ctx.Err() != nil {
					mu.Unlock()
					return
				}
				id := ids[next]
				next++
				mu.Unlock()
				var one Stats
				err := ix.update(ctx, id, &one)
				mu.Lock()
				st.Conversations++
				st.Read += one.Read
				st.Whole += one.Whole
				st.Bytes += one.Bytes
				st.Entries += one.Entries
				if err != nil && ctx.Err() == nil {
					st.Failed = append(st.Failed, fmt.Errorf("%s: %w", id, err))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return st, err
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

// pgWorkers is how many conversations a catch-up indexes at once.
const pgWorkers = 3

// analyzeAfter is how many rows a catch-up writes before it analyzes the
// table (autovacuum does it in time; a build needs it now).
const analyzeAfter = 5000

// Rebuild forgets everything indexed and reads every log again.
func (ix *PGIndex) Rebuild(ctx context.Context) (Stats, error) {
	ix.mu.Lock()
	ix.warm = nil
	ix.mu.Unlock()
	// TRUNCATE rather than DELETE: a rebuild leaves no dead rows behind.
	// folio_search_words is kept: other processes' PGIndexes remember
	// words they wrote there, and a word no row has does no harm.
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
	seen := map[string]struct{}{}
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
		puts = append(puts, pgRow{entry: e.ID, role: role, body: text, terms: rowTerms(text, ix.hash, seen), at: at})
	}
	entries := len(puts) // the title's row is not an entry
	title := pgClean(strings.TrimSpace(s.Title()))
	if title != c.title || whole {
		if title == "" {
			dels = append(dels, "")
		} else {
			puts = append(puts, pgRow{role: RoleTitle, body: title, terms: rowTerms(title, ix.hash, seen)})
		}
	}
	if s.Offset() != size {
		// A torn last record: the Scanner stops before it, and the next
		// catch-up reads it again (by its offset, from its seq on).
		next = 0
	}
	var k int32
	if err := tx.QueryRow(ctx, `INSERT INTO folio_search_conversations (conversation_id, epoch, size, next_seq, head, title, first)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (conversation_id) DO UPDATE SET epoch = $2, size = $3, next_seq = $4, head = $5, title = $6, first = $7
		RETURNING k`,
		id, epoch, s.Offset(), next, s.Head(), title, c.first).Scan(&k); err != nil {
		return err
	}
	if whole && known {
		if _, err := tx.Exec(ctx, `DELETE FROM folio_search WHERE conv = $1`, k); err != nil {
			return err
		}
	}
	if len(dels) > 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM folio_search WHERE conv = $1 AND entry = ANY($2)`, k, dels); err != nil {
			return err
		}
	}
	if err := putRows(ctx, tx, k, puts, !whole); err != nil {
		return err
	}
	words := ix.newWords(seen)
	if len(words) > 0 {
		// A transaction adding a word another one has added but not
		// committed waits for that one to end: the words go last, just
		// before the commit, to keep such waits short, and sorted, so
		// two transactions adding the same words take them in one order
		// and never wait for each other.
		if _, err := tx.Exec(ctx, `INSERT INTO folio_search_words (word) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING`, words); err != nil {
			return err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	ix.remember(words)
	st.Read++
	st.Bytes += read
	st.Entries += entries
	ix.keepWarm(id, epoch, s)
	return nil
}

// newWords returns the words of seen this index has not written to
// folio_search_words, sorted.
func (ix *PGIndex) newWords(seen map[string]struct{}) []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var out []string
	for w := range seen {
		if _, ok := ix.known[w]; !ok {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return out
}

// remember notes words as written (their transaction committed).
func (ix *PGIndex) remember(words []string) {
	if len(words) == 0 {
		return
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if len(ix.known)+len(words) > maxKnown {
		clear(ix.known)
	}
	for _, w := range words[:min(len(words), maxKnown)] {
		ix.known[w] = struct{}{}
	}
}

// pgBatch is how many rows one INSERT writes.
const pgBatch = 1000

// putRows inserts rows, pgBatch to a statement; replace says a row of
// the same entry may exist and is replaced.
func putRows(ctx context.Context, tx pgx.Tx, k int32, rows []pgRow, replace bool) error {
	q := `INSERT INTO folio_search (conv, entry, role, at, body, terms)
		SELECT $1, e, r, a, b, t::int4[] FROM unnest($2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[]) AS u(e, r, a, b, t)`
	if replace {
		q += ` ON CONFLICT (conv, entry) DO UPDATE SET role = excluded.role, at = excluded.at, body = excluded.body, terms = excluded.terms`
	}
	for len(rows) > 0 {
		n := min(len(rows), pgBatch)
		es, rs, bs, ts := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		ats := make([]int64, n)
		for i, r := range rows[:n] {
			es[i], rs[i], bs[i], ts[i], ats[i] = r.entry, r.role, r.body, r.terms, r.at
		}
		if _, err := tx.Exec(ctx, q, k, es, rs, ats, bs, ts); err != nil {
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
//
// The rows hold the hashes of their words without positions, so the
// hashes of the query's words (plan) find the rows that have them all,
// newest first (PostgreSQL walks the primary key backwards, or reads the
// GIN index when the words are rare). A query with a phrase, an excluded
// phrase or a prefix of too many words is then checked in each row's
// text, a batch at a time, until enough rows match; the other queries'
// hits are checked in their text when it is read for the snippets. Ranking
// is BM25 with every word counted once: among rows that all have the
// query's words, the shorter (fewer distinct words) first, then the newer.
func (ix *PGIndex) Run(ctx context.Context, q Query, opts Options) ([]Hit, error) {
	limit, timeout := opts.bounds()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	pq, err := ix.plan(ctx, q)
	if err != nil {
		return nil, pgQueryErr(ctx, err)
	}
	if pq.none {
		return []Hit{}, nil
	}
	verify := pq.verify
	var sb strings.Builder
	var args []any
	sb.WriteString(`SELECT n, conv, entry, role, at, cardinality(terms)`)
	if verify {
		sb.WriteString(`, body`)
	}
	sb.WriteString(` FROM folio_search WHERE true`)
	if len(pq.all) > 0 {
		args = append(args, pq.all)
		fmt.Fprintf(&sb, ` AND terms @> $%d::int4[]`, len(args))
	}
	for _, set := range pq.any {
		args = append(args, set)
		fmt.Fprintf(&sb, ` AND terms && $%d::int4[]`, len(args))
	}
	if len(pq.not) > 0 {
		args = append(args, pq.not)
		fmt.Fprintf(&sb, ` AND NOT (terms && $%d::int4[])`, len(args))
	}
	if len(q.Roles) > 0 {
		args = append(args, q.Roles)
		fmt.Fprintf(&sb, ` AND role = ANY($%d)`, len(args))
	}
	if q.Conversation != "" {
		args = append(args, q.Conversation)
		fmt.Fprintf(&sb, ` AND conv = (SELECT k FROM folio_search_conversations WHERE conversation_id = $%d)`, len(args))
	}
	if !q.After.IsZero() {
		args = append(args, q.After.UnixMilli())
		fmt.Fprintf(&sb, ` AND at >= $%d`, len(args))
	}
	if !q.Before.IsZero() {
		args = append(args, q.Before.UnixMilli())
		fmt.Fprintf(&sb, ` AND at < $%d`, len(args))
	}
	args = append(args, int64(math.MaxInt64), int64(0))
	fmt.Fprintf(&sb, ` AND n < $%d AND n >= $%d ORDER BY n DESC LIMIT %d`, len(args)-1, len(args), pgBatchRows)
	sql := sb.String()
	// How the rows are found: walking n backwards through a window of the
	// newest pgWindow rows, checking each (enable_bitmapscan off), which
	// costs the window at most; then, when the window held too few
	// matches, from the GIN index (enable_indexscan off), which costs the
	// matches older than the window, fewer than pgWindow×(1000/pgWindow)
	// of every pgWindow rows. When a word of the query is known to be
	// rare (the table's statistics), the GIN index is read from the start.
	// PostgreSQL's own choice goes by its estimate of how many rows have
	// all the words, which for common words that go together (a phrase)
	// is off by a hundred times.
	// Newest: the newest matches in order, unranked, up to the limit.
	want := candidates
	if opts.Newest {
		want = limit
	}
	cursor, lo := int64(math.MaxInt64), int64(0)
	// With no condition on the terms (only prefixes of too many words)
	// the GIN index has nothing to read: every row is walked.
	noTerms := len(pq.all) == 0 && len(pq.any) == 0
	walk := noTerms || ix.common(ctx, q)
	if walk {
		var top int64
		if err := ix.pool.QueryRow(ctx, `SELECT coalesce(max(n), 0) FROM folio_search`).Scan(&top); err != nil {
			return nil, pgQueryErr(ctx, err)
		}
		w := ix.window
		if w == 0 {
			w = pgWindow
		}
		if noTerms {
			w = top + 1
		}
		cursor, lo = top+1, max(0, top+1-w)
	}
	var pool []pgCand
	bodies := map[int64]string{}
	m := q.ranker()
	for {
		args[len(args)-2], args[len(args)-1] = cursor, lo
		got := 0
		err := pgx.BeginFunc(ctx, ix.pool, func(tx pgx.Tx) error {
			// Each way has a statement of its own (the comment), planned
			// for its arguments every time: a prepared statement's generic
			// plan, made for no words in particular, may read the whole
			// table.
			set, text := `SET LOCAL plan_cache_mode = force_custom_plan; SET LOCAL enable_indexscan = off`, sql+` /* gin */`
			if walk {
				set, text = `SET LOCAL plan_cache_mode = force_custom_plan; SET LOCAL enable_bitmapscan = off`, sql+` /* walk */`
			}
			if _, err := tx.Exec(ctx, set); err != nil {
				return err
			}
			rows, err := tx.Query(ctx, text, args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var c pgCand
				var body string
				dest := []any{&c.n, &c.conv, &c.entry, &c.role, &c.at, &c.words}
				if verify {
					dest = append(dest, &body)
				}
				if err := rows.Scan(dest...); err != nil {
					return err
				}
				got++
				cursor = c.n
				if verify {
					if !m.matches(body) {
						continue
					}
					bodies[c.n] = body
				}
				pool = append(pool, c)
			}
			return rows.Err()
		})
		if err != nil {
			return nil, pgQueryErr(ctx, err)
		}
		if walk && got < pgBatchRows {
			// The window is read: the older rows from the GIN index.
			more := lo > 0 && len(pool) < want && (!verify || len(pool) < limit)
			walk, cursor, lo = false, lo, 0
			if more {
				continue
			}
			break
		}
		// Without a check every row found is a match; with one, the
		// next batch is read until enough matched to rank, or enough
		// for the hits asked once a batch has been checked.
		// Newest reads on until it has its limit (more than a batch for a
		// find's hits).
		if got < pgBatchRows || len(pool) >= want || !opts.Newest && (!verify || len(pool) >= limit) {
			break
		}
	}
	pool = pool[:min(len(pool), want)] // the newest
	// BM25 with each word counted once orders the rows that have all the
	// words by their length alone; the newer first among equals.
	if !opts.Newest { // else as read: the newest first
		slices.SortStableFunc(pool, func(a, b pgCand) int {
			if a.words != b.words {
				return cmp.Compare(a.words, b.words)
			}
			if a.at != b.at {
				return cmp.Compare(b.at, a.at)
			}
			return cmp.Compare(b.n, a.n)
		})
	}
	pool = pool[:min(len(pool), limit)]
	if len(pool) == 0 {
		return []Hit{}, nil
	}
	ns, ks := make([]int64, 0, len(pool)), make([]int32, 0, len(pool))
	for _, c := range pool {
		if _, ok := bodies[c.n]; !ok {
			ns = append(ns, c.n)
		}
		ks = append(ks, c.conv)
	}
	if len(ns) > 0 {
		rows, err := ix.pool.Query(ctx, `SELECT n, body FROM folio_search WHERE n = ANY($1)`, ns)
		if err != nil {
			return nil, pgQueryErr(ctx, err)
		}
		for rows.Next() {
			var n int64
			var body string
			if err := rows.Scan(&n, &body); err != nil {
				rows.Close()
				return nil, pgQueryErr(ctx, err)
			}
			bodies[n] = body
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, pgQueryErr(ctx, err)
		}
	}
	type convInfo struct{ id, title, first string }
	convs := map[int32]convInfo{}
	rows, err := ix.pool.Query(ctx, `SELECT k, conversation_id, title, first FROM folio_search_conversations WHERE k = ANY($1)`, ks)
	if err != nil {
		return nil, pgQueryErr(ctx, err)
	}
	for rows.Next() {
		var k int32
		var c convInfo
		if err := rows.Scan(&k, &c.id, &c.title, &c.first); err != nil {
			rows.Close()
			return nil, pgQueryErr(ctx, err)
		}
		convs[k] = c
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, pgQueryErr(ctx, err)
	}
	hits := make([]Hit, 0, len(pool))
	for _, c := range pool {
		cv, ok := convs[c.conv]
		body, okb := bodies[c.n]
		if !ok || !okb {
			continue // removed since the query ran
		}
		if !verify && !m.matches(body) {
			// Another word of the row has the hash of a word of the
			// query: not a hit.
			continue
		}
		h := Hit{Conversation: cv.id, Title: cv.title, Entry: c.entry, Role: c.role, Snippet: q.snippet(body)}
		if h.Title == "" {
			h.Title = cv.first
		}
		if c.at != 0 {
			h.At = time.UnixMilli(c.at).UTC()
		}
		h.Score = -bm25Once(len(q.Terms), c.words)
		hits = append(hits, h)
	}
	return hits, nil
}

// pgQuery is a query's conditions on the hashes of a row's words.
type pgQuery struct {
	all []int32   // the row has all of these
	any [][]int32 // and one of each of these (a prefix's words)
	not []int32   // and none of these (excluded words and prefixes)
	// verify: the rows must still be checked in their text (a phrase, an
	// excluded phrase, a prefix of too many words to list).
	verify bool
	// none: no row can match (a prefix no word starts).
	none bool
}

// plan turns q's terms into conditions on the hashes of a row's words:
// every word of every term must be among them, a prefix as any of the
// words folio_search_words lists that start with it, and no excluded word
// or prefix. What the hashes cannot decide is left to the text (verify).
func (ix *PGIndex) plan(ctx context.Context, q Query) (pgQuery, error) {
	var pq pgQuery
	var all, not []string
	for _, t := range q.Terms {
		ws := tokens(t.Text)
		if len(ws) == 0 {
			pq.none = true // as matcher: a term without words matches nothing
			return pq, nil
		}
		if len(ws) > 1 {
			pq.verify = true
		}
		for i, w := range ws {
			if !t.Prefix || i < len(ws)-1 {
				all = append(all, w.folded)
				continue
			}
			exp, ok, err := ix.expand(ctx, w.folded)
			switch {
			case err != nil:
				return pq, err
			case !ok:
				pq.verify = true
			case len(exp) == 0:
				pq.none = true
				return pq, nil
			default:
				pq.any = append(pq.any, hashes(exp, ix.hash))
			}
		}
	}
	for _, t := range q.Excluded {
		ws := tokens(t.Text)
		switch {
		case len(ws) == 0:
		case len(ws) > 1:
			pq.verify = true
		case !t.Prefix:
			not = append(not, ws[0].folded)
		default:
			exp, ok, err := ix.expand(ctx, ws[0].folded)
			if err != nil {
				return pq, err
			}
			if !ok {
				pq.verify = true
			}
			not = append(not, exp...)
		}
	}
	if len(all) > 0 {
		pq.all = hashes(all, ix.hash)
	}
	if len(not) > 0 {
		pq.not = hashes(not, ix.hash)
	}
	return pq, nil
}

// expand returns the words of folio_search_words that start with the
// folded word p, when there are at most maxExpansion of them (ok).
func (ix *PGIndex) expand(ctx context.Context, p string) (ws []string, ok bool, err error) {
	hi, ok := above(p)
	if !ok {
		return nil, false, nil
	}
	// The words from p up to p with its last character raised: in byte
	// order (COLLATE "C", UTF-8's order of code points), those that start
	// with p.
	rows, err := ix.pool.Query(ctx, `SELECT word FROM folio_search_words
		WHERE word >= $1 COLLATE "C" AND word < $2 COLLATE "C" ORDER BY word COLLATE "C" LIMIT $3`, p, hi, maxExpansion+1)
	if err != nil {
		return nil, false, err
	}
	ws, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, false, err
	}
	if len(ws) > maxExpansion {
		return nil, false, nil
	}
	return ws, true, nil
}

// above returns the least string greater than every string that starts
// with p: p with its last character raised by one code point (a folded
// word ends in a letter, digit or mark, never in U+10FFFF).
func above(p string) (string, bool) {
	r, n := utf8.DecodeLastRuneInString(p)
	if r == utf8.RuneError || r >= unicode.MaxRune {
		return "", false
	}
	r++
	if 0xD800 <= r && r <= 0xDFFF { // surrogates are not characters
		r = 0xE000
	}
	return p[:len(p)-n] + string(r), true
}

// pgBatchRows is how many rows one query of Run reads.
const pgBatchRows = candidates

// pgWindow is how many of the newest rows Run walks before it reads the
// GIN index: about the square root of a thousand matches times the rows
// of a 3,000,000-message store, where walking the window and reading the
// matches of the rest cost the same at worst.
const pgWindow = 50000

// common reports whether every word of q is common, as far as the
// table's statistics tell (most_common_elems of the hashes; a word not
// among them is rarer than all of them): then a window of the newest rows
// is walked first. A prefix counts as common.
func (ix *PGIndex) common(ctx context.Context, q Query) bool {
	st := ix.stats(ctx)
	if st.freq == nil {
		return true
	}
	for _, t := range q.Terms {
		ws := tokens(t.Text)
		for i, w := range ws {
			if t.Prefix && i == len(ws)-1 {
				continue
			}
			f, ok := st.freq[ix.hash(w.folded)]
			if !ok {
				f = st.min
			}
			if float64(f)*st.rows < pgWindow {
				return false
			}
		}
	}
	return true
}

// pgStats are folio_search's statistics as Run uses them.
type pgStats struct {
	at   time.Time
	freq map[int32]float32 // of the most common words' hashes
	min  float32           // the least frequency among them
	rows float64
}

// stats returns the table's statistics, read at most once a minute.
func (ix *PGIndex) stats(ctx context.Context) pgStats {
	ix.mu.Lock()
	st := ix.st
	ix.mu.Unlock()
	if time.Since(st.at) < time.Minute {
		return st
	}
	st = pgStats{at: time.Now()}
	var elems []int32
	var freqs []float32
	err := ix.pool.QueryRow(ctx, `SELECT s.most_common_elems::text::int4[], s.most_common_elem_freqs, c.reltuples::float8
		FROM pg_stats s JOIN pg_class c ON c.oid = 'folio_search'::regclass
		WHERE s.schemaname = current_schema() AND s.tablename = 'folio_search' AND s.attname = 'terms'`).Scan(&elems, &freqs, &st.rows)
	if err == nil && len(freqs) >= len(elems)+2 && len(elems) > 0 {
		st.freq = make(map[int32]float32, len(elems))
		for i, e := range elems {
			st.freq[e] = freqs[i]
		}
		st.min = freqs[len(elems)]
	}
	ix.mu.Lock()
	ix.st = st
	ix.mu.Unlock()
	return st
}

// pgCand is a row Run found.
type pgCand struct {
	n     int64
	conv  int32
	entry string
	role  string
	at    int64
	words int32
}

// bm25Once is BM25 (k1 1.2, b 0.75) of a row with terms query words,
// each found once, that has words distinct words, against an average
// of 32 and an inverse document frequency of 1 for every word.
func bm25Once(terms int, words int32) float64 {
	const k1, b, avg = 1.2, 0.75, 32.0
	return float64(terms) * (k1 + 1) / (1 + k1*(1-b+b*float64(words)/avg))
}

func pgQueryErr(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ErrTimeout
	}
	return err
}
