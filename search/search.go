package search

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Bounds of a search.
const (
	DefaultLimit = 20
	MaxLimit     = 200
	// MaxFind bounds a Newest query's hits: finding in one conversation
	// steps through this many of its newest hits (the cost is the hits'
	// own, not a ranking's).
	MaxFind = 10000
	// Timeout bounds one query (catching up not included).
	Timeout = 2 * time.Second
	// snippetTokens is how many words a snippet shows around the hit.
	snippetTokens = 16
	// candidates bounds how many matches are ranked: the most recently
	// indexed ones.
	candidates = 1000
)

// Options tune Search.
type Options struct {
	// Limit is how many hits to return (DefaultLimit when 0, at most
	// MaxLimit, or MaxFind with Newest).
	Limit int
	// NoCatchUp searches the index as it is, without first reading what
	// the logs gained (a caller that keeps it current itself).
	NoCatchUp bool
	// Timeout bounds the query (Timeout when 0).
	Timeout time.Duration
	// Newest returns the newest indexed matches first, unranked: what
	// finding a query's hits inside one conversation steps through. The
	// engine walks its matches newest first and stops at Limit, so the
	// cost is that of the hits returned.
	Newest bool
}

// Hit is one entry that matched.
type Hit struct {
	Conversation string    `json:"conversation"`
	Title        string    `json:"title,omitempty"`
	Entry        string    `json:"entry,omitempty"` // empty for a hit on the title
	Role         string    `json:"role"`
	At           time.Time `json:"at,omitzero"`
	Snippet      []Span    `json:"snippet"`
	// Score is the engine's relevance (BM25; smaller is better).
	Score float64 `json:"score"`
}

// Span is a piece of a snippet; Hit marks the matched words.
type Span struct {
	Text string `json:"text"`
	Hit  bool   `json:"hit,omitempty"`
}

// SnippetText is the snippet as plain text, with the matched words
// between open and close.
func (h Hit) SnippetText(open, close string) string {
	var b strings.Builder
	for _, s := range h.Snippet {
		if s.Hit {
			b.WriteString(open + s.Text + close)
		} else {
			b.WriteString(s.Text)
		}
	}
	return b.String()
}

// Search parses query (see ParseQuery) and returns the best hits: by BM25
// relevance, the newest first among equals. Unless opts say otherwise, it
// first catches up with what the logs gained, so a hit never points at an
// entry its conversation no longer shows.
func (ix *Index) Search(ctx context.Context, query string, opts Options) ([]Hit, error) {
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

// bounds are the hit limit and the time bound opts ask for, with their
// defaults filled in and the limit capped at MaxLimit (MaxFind for
// Newest).
func (opts Options) bounds() (limit int, timeout time.Duration) {
	limit, timeout = opts.Limit, opts.Timeout
	if limit <= 0 {
		limit = DefaultLimit
	}
	if timeout <= 0 {
		timeout = Timeout
	}
	if opts.Newest {
		return min(limit, MaxFind), timeout
	}
	return min(limit, MaxLimit), timeout
}

// Run searches the index as it is for a parsed query (opts.NoCatchUp is
// implied).
//
// FTS5 walks a query's matches by ascending rowid, which is newest indexed
// first (see writer), and stops at the limit: the newest candidates
// matches are read, with their texts, which is every match of any query
// that has fewer. They are ranked here by BM25 (rank), not by FTS5's
// bm25(): that first counts every match of each word of the query for its
// inverse document frequency, which cost 50 ms of CPU for one common word
// on 3,000,000 messages and 175 ms for three, against 0.5 and 2 ms for
// walking the candidates.
func (ix *Index) Run(ctx context.Context, q Query, opts Options) ([]Hit, error) {
	limit, timeout := opts.bounds()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	m, err := ix.matchFor(ctx, q)
	if err != nil {
		return nil, ix.queryErr(ctx, err)
	}
	var sb strings.Builder
	args := []any{m}
	// Ranking reads the start of a text (body) and its size (octet_length
	// reads a column's header, not its pages): the rest of a candidate's
	// text is read only for the hits returned, once ranked. The
	// candidates of common words are often the longest entries, and
	// reading them whole was a fifth of a phrase's CPU.
	sb.WriteString(`SELECT d.rowid, d.conv, d.entry, d.role, d.at, d.body, octet_length(d.body) + octet_length(d.rest)
FROM fts JOIN docs d ON d.rowid = ` + topRowidSQL + ` - fts.rowid`)
	if q.Conversation != "" {
		sb.WriteString(` JOIN convs c ON c.n = d.conv`)
	}
	sb.WriteString(` WHERE fts MATCH ?`)
	if len(q.Roles) > 0 {
		sb.WriteString(` AND d.role IN (` + strings.Repeat("?,", len(q.Roles)-1) + `?)`)
		for _, r := range q.Roles {
			args = append(args, r)
		}
	}
	if q.Conversation != "" {
		sb.WriteString(` AND c.id = ?`)
		args = append(args, q.Conversation)
	}
	if !q.After.IsZero() {
		sb.WriteString(` AND d.at >= ?`)
		args = append(args, q.After.UnixMilli())
	}
	if !q.Before.IsZero() {
		sb.WriteString(` AND d.at < ?`)
		args = append(args, q.Before.UnixMilli())
	}
	// Newest: the newest matches in order, unranked, up to the limit.
	n := candidates
	if opts.Newest {
		n = limit
	}
	sb.WriteString(` ORDER BY fts.rowid LIMIT ` + strconv.Itoa(n))
	r := q.ranker()
	if !opts.Newest {
		if r.idf, err = ix.idfs(ctx, q); err != nil {
			return nil, ix.queryErr(ctx, err)
		}
	}
	// One read transaction, so the texts fetched after ranking are those
	// of the rows ranked.
	tx, err := ix.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, ix.queryErr(ctx, err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, sb.String(), args...)
	if err != nil {
		return nil, ix.queryErr(ctx, err)
	}
	var pool []ranked
	for rows.Next() {
		var c ranked
		if err := rows.Scan(&c.n, &c.conv, &c.entry, &c.role, &c.at, &c.body, &c.size); err != nil {
			rows.Close()
			return nil, ix.queryErr(ctx, err)
		}
		if !opts.Newest {
			c.score = r.scoreHead(c.body, c.size)
		}
		pool = append(pool, c)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, ix.queryErr(ctx, err)
	}
	if !opts.Newest { // else as read: the newest first
		slices.SortStableFunc(pool, func(a, b ranked) int {
			if a.score != b.score {
				return cmp.Compare(b.score, a.score)
			}
			if a.at != b.at {
				return cmp.Compare(b.at, a.at)
			}
			return cmp.Compare(b.n, a.n)
		})
	}
	pool = pool[:min(len(pool), limit)]
	if err := fetchBodies(ctx, tx, pool); err != nil {
		return nil, ix.queryErr(ctx, err)
	}
	hits := make([]Hit, 0, len(pool))
	convs := map[int64][3]string{}
	for _, c := range pool {
		cv, ok := convs[c.conv]
		if !ok {
			if err := tx.QueryRowContext(ctx, `SELECT id, title, first FROM convs WHERE n = ?`, c.conv).Scan(&cv[0], &cv[1], &cv[2]); err != nil {
				return nil, ix.queryErr(ctx, err)
			}
			convs[c.conv] = cv
		}
		h := Hit{Conversation: cv[0], Title: cv[1], Entry: c.entry, Role: c.role, Score: -c.score, Snippet: q.snippet(c.body)}
		if h.Title == "" {
			h.Title = cv[2]
		}
		if c.at != 0 {
			h.At = time.UnixMilli(c.at).UTC()
		}
		hits = append(hits, h)
	}
	return hits, nil
}

// ranked is a candidate of Index.Run: body holds the start of its text
// (see splitText), or all of it once fetchBodies read it; size is the
// text's length in bytes.
type ranked struct {
	n, conv, at       int64
	entry, role, body string
	size              int
	score             float64
}

// fetchBodies reads the rest of the text of the candidates of which body
// holds only the start.
func fetchBodies(ctx context.Context, tx *sql.Tx, pool []ranked) error {
	at := map[int64]int{}
	var ids strings.Builder
	for i, c := range pool {
		if len(c.body) == c.size {
			continue
		}
		if ids.Len() > 0 {
			ids.WriteByte(',')
		}
		ids.WriteString(strconv.FormatInt(c.n, 10))
		at[c.n] = i
	}
	if len(at) == 0 {
		return nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT rowid, rest FROM docs WHERE rowid IN (`+ids.String()+`)`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var n int64
		var rest string
		if err := rows.Scan(&n, &rest); err != nil {
			return err
		}
		c := &pool[at[n]]
		if c.body += rest; len(c.body) != c.size {
			return errors.New("search index: a text's parts do not add up to its size")
		}
		delete(at, n)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(at) > 0 {
		return errors.New("search index: a ranked row vanished within its read transaction")
	}
	return nil
}

var topRowidSQL = strconv.FormatInt(topRowid, 10)

func (ix *Index) queryErr(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ErrTimeout
	}
	return err
}

// idfs weighs q's terms (Query.idfs) by how many entries have each word,
// estimated from its newest matches: FTS5 walks a word's matches newest
// first, so the newest candidates of them are read at the cost of the
// candidates, and how many rows they span says how common the word is
// (exactly, for a word with fewer matches). Counting every match, as
// FTS5's bm25() does, cost 50 ms for one common word on 3,000,000
// messages.
func (ix *Index) idfs(ctx context.Context, q Query) ([]float64, error) {
	if len(q.Terms) < 2 {
		return nil, nil
	}
	var lo, hi sql.NullInt64
	if err := ix.db.QueryRowContext(ctx, `SELECT (SELECT min(rowid) FROM docs), (SELECT max(rowid) FROM docs)`).Scan(&lo, &hi); err != nil {
		return nil, err
	}
	if !hi.Valid {
		return nil, nil
	}
	n := float64(hi.Int64 - lo.Int64 + 1)
	newest := topRowid - hi.Int64 // the smallest fts rowid
	return q.idfs(n, func(t Term) (float64, error) {
		var last, got int64
		m, err := ix.matchFor(ctx, Query{Terms: []Term{t}})
		if err != nil {
			return 0, err
		}
		err = ix.db.QueryRowContext(ctx, `SELECT coalesce(max(rowid), 0), count(*) FROM
(SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rowid LIMIT `+strconv.Itoa(candidates)+`)`, m).Scan(&last, &got)
		if err != nil || got < candidates {
			return float64(got), err
		}
		return float64(got) * n / float64(max(1, last-newest+1)), nil
	})
}
