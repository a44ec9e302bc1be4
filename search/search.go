package search

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Bounds of a search.
const (
	DefaultLimit = 20
	MaxLimit     = 200
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
	// MaxLimit).
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
// defaults filled in and the limit capped at MaxLimit.
func (opts Options) bounds() (limit int, timeout time.Duration) {
	limit, timeout = opts.Limit, opts.Timeout
	if limit <= 0 {
		limit = DefaultLimit
	}
	if timeout <= 0 {
		timeout = Timeout
	}
	return min(limit, MaxLimit), timeout
}

// Run searches the index as it is for a parsed query (opts.NoCatchUp is
// implied).
func (ix *Index) Run(ctx context.Context, q Query, opts Options) ([]Hit, error) {
	limit, timeout := opts.bounds()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// FTS5 ranks every match of a query before it can sort: a common word
	// of a large corpus would cost seconds. So the newest candidates
	// matches (FTS5 walks its matches by rowid, newest indexed first,
	// without sorting, and stops at the limit) are ranked, which is every
	// match of any query that has fewer. The entries' texts are read and
	// their snippets cut for the hits returned only.
	var sb strings.Builder
	args := []any{q.match()}
	filtered := len(q.Roles) > 0 || q.Conversation != "" || !q.After.IsZero() || !q.Before.IsZero()
	if filtered {
		sb.WriteString(`SELECT c.id, c.title, c.first, d.entry, d.role, d.at, k.s, k.r
FROM (SELECT fts.rowid AS r, bm25(fts) AS s FROM fts JOIN docs d ON d.rowid = fts.rowid JOIN convs c ON c.n = d.conv
	WHERE fts MATCH ?`)
	} else {
		sb.WriteString(`SELECT c.id, c.title, c.first, d.entry, d.role, d.at, k.s, k.r
FROM (SELECT fts.rowid AS r, bm25(fts) AS s FROM fts WHERE fts MATCH ?`)
	}
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
	if opts.Newest {
		sb.WriteString(` ORDER BY fts.rowid DESC LIMIT ` + strconv.Itoa(limit) + `) k
JOIN docs d ON d.rowid = k.r JOIN convs c ON c.n = d.conv
ORDER BY k.r DESC LIMIT ?`)
	} else {
		sb.WriteString(` ORDER BY fts.rowid DESC LIMIT ` + strconv.Itoa(candidates) + `) k
JOIN docs d ON d.rowid = k.r JOIN convs c ON c.n = d.conv
ORDER BY k.s, d.at DESC LIMIT ?`)
	}
	args = append(args, limit)
	rows, err := ix.db.QueryContext(ctx, sb.String(), args...)
	if err != nil {
		return nil, ix.queryErr(ctx, err)
	}
	hits := []Hit{}
	var rowids []int64
	for rows.Next() {
		var h Hit
		var title, first string
		var at, rowid int64
		if err := rows.Scan(&h.Conversation, &title, &first, &h.Entry, &h.Role, &at, &h.Score, &rowid); err != nil {
			rows.Close()
			return nil, ix.queryErr(ctx, err)
		}
		h.Title = title
		if h.Title == "" {
			h.Title = first
		}
		if at != 0 {
			h.At = time.UnixMilli(at).UTC()
		}
		hits = append(hits, h)
		rowids = append(rowids, rowid)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, ix.queryErr(ctx, err)
	}
	for i, r := range rowids {
		var text string
		if err := ix.db.QueryRowContext(ctx, `SELECT body FROM docs WHERE rowid = ?`, r).Scan(&text); err != nil {
			return nil, ix.queryErr(ctx, err)
		}
		hits[i].Snippet = q.snippet(text)
	}
	return hits, nil
}

func (ix *Index) queryErr(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ErrTimeout
	}
	return err
}
