package search

import (
	"context"
	"database/sql"
	"strings"
)

// The words table lists every term FTS5 holds, so a prefix can be turned
// into the words it starts. Without a prefix index (it would make the
// index half as large again) FTS5 answers "compac" * by merging the whole
// match lists of every term that starts with compac before it yields the
// first match, which costs in proportion to the corpus; the same words
// ORed together are walked lazily, newest first, and stop at the
// candidates wanted like any other query.
//
// A writer adds the terms of the rows it writes in the same transaction as
// the rows, so the table never lacks a term FTS5 has. Words are never
// deleted when rows are: a word no row has any more expands to a term that
// matches nothing.

// maxExpansion bounds how many words a prefix is expanded to; a prefix
// that starts more is left to FTS5.
const maxExpansion = 256

// maxTermBytes is how much of a token FTS5 keeps as a term
// (FTS5_MAX_TOKEN_SIZE).
const maxTermBytes = 32768

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// wordSet gathers the terms of the texts a writer writes.
//
// An ASCII byte that is not a letter or a digit always separates words in
// FTS5's unicode61 tokenizer, so a text splits on them into pieces that
// are tokenized independently. A piece of ASCII letters and digits is one
// term, lowercased, here. A piece with other characters is handed to FTS5
// itself (tokenize), so that what counts as a letter, how case and
// accents fold and where words end are FTS5's own, not a copy of them.
type wordSet struct {
	ascii map[string]struct{}
	// recent holds ASCII words as a text wrote them, at a hash of their
	// bytes, once their folded form is in ascii: most words of a text
	// were in the texts before it, and a look here costs less than one in
	// the map (and a capitalized word's lowercasing).
	recent [1024]string
	other  strings.Builder // the pieces with non-ASCII characters, spaced
}

func (ws *wordSet) add(s string) {
	if ws.ascii == nil {
		ws.ascii = map[string]struct{}{}
	}
	for i := 0; i < len(s); {
		if c := s[i]; c < 0x80 && !isAlnum(c) {
			i++
			continue
		}
		j, ascii := i, true
		h := uint32(2166136261) // FNV-1a of the piece's bytes
		for ; j < len(s); j++ {
			c := s[j]
			if c >= 0x80 {
				ascii = false
			} else if !isAlnum(c) {
				break
			}
			h = (h ^ uint32(c)) * 16777619
		}
		if w := s[i:j]; !ascii {
			ws.other.WriteString(w)
			ws.other.WriteByte(' ')
		} else if slot := &ws.recent[h%uint32(len(ws.recent))]; *slot != w {
			if _, ok := ws.ascii[w]; !ok {
				t := w[:min(len(w), maxTermBytes)]
				lw := strings.ToLower(t)
				if lw == t {
					lw = strings.Clone(t) // not the whole text's memory
				}
				ws.ascii[lw] = struct{}{}
			}
			*slot = w
		}
		i = j
	}
}

// write adds the words gathered to the words table in tx and empties the
// set.
func (ws *wordSet) write(ctx context.Context, tx *sql.Tx) error {
	if len(ws.ascii) > 0 {
		// One statement for them all: a JSON array (the words need no
		// escaping).
		var b strings.Builder
		b.WriteByte('[')
		for w := range ws.ascii {
			if b.Len() > 1 {
				b.WriteByte(',')
			}
			b.WriteByte('"')
			b.WriteString(w)
			b.WriteByte('"')
		}
		b.WriteByte(']')
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO words(w) SELECT value FROM json_each(?)`, b.String()); err != nil {
			return err
		}
		clear(ws.ascii)
		clear(ws.recent[:])
	}
	if ws.other.Len() > 0 {
		err := tokenize(ctx, tx, ws.other.String(), `INSERT OR IGNORE INTO main.words(w) SELECT term FROM temp.folio_tokv`)
		ws.other.Reset()
		return err
	}
	return nil
}

// tokenize has FTS5 tokenize text as fts does, in a temporary table of
// tx's connection, runs q (which reads the terms from temp.folio_tokv)
// and empties the table again.
func tokenize(ctx context.Context, tx *sql.Tx, text, q string) error {
	if _, err := tx.ExecContext(ctx, `CREATE VIRTUAL TABLE IF NOT EXISTS temp.folio_tok USING fts5(text, content='', tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE IF NOT EXISTS temp.folio_tokv USING fts5vocab(folio_tok, 'row');`); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO temp.folio_tok(text) VALUES(?)`, text); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, q); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO temp.folio_tok(folio_tok) VALUES('delete-all')`)
	return err
}

// asciiPrefix reports whether a prefix term can be expanded from the words
// table, and the term it is: one word of ASCII letters and digits (FTS5
// folds it to lowercase, as here).
func asciiPrefix(t Term) (string, bool) {
	if !t.Prefix || t.Phrase || t.Text == "" || len(t.Text) > maxTermBytes {
		return "", false
	}
	for i := 0; i < len(t.Text); i++ {
		if !isAlnum(t.Text[i]) {
			return "", false
		}
	}
	return strings.ToLower(t.Text), true
}

// expand finds the words of the index each of q's prefix terms starts,
// for the terms that have between one and maxExpansion of them; the
// others are left to FTS5's own prefix query (see Query.matchWith).
func (ix *Index) expand(ctx context.Context, q Query) (map[Term][]string, error) {
	var out map[Term][]string
	for _, ts := range [][]Term{q.Terms, q.Excluded} {
		for _, t := range ts {
			p, ok := asciiPrefix(t)
			if !ok {
				continue
			}
			if _, done := out[t]; done {
				continue
			}
			// The words from p up to above(p): those whose bytes start
			// with p (p is ASCII, so above has its bound; a word may go
			// on in any script).
			hi, _ := above(p)
			rows, err := ix.db.QueryContext(ctx, `SELECT w FROM words WHERE w >= ? AND w < ? ORDER BY w LIMIT ?`, p, hi, maxExpansion+1)
			if err != nil {
				return nil, err
			}
			var ws []string
			for rows.Next() {
				var w string
				if err := rows.Scan(&w); err != nil {
					rows.Close()
					return nil, err
				}
				ws = append(ws, w)
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return nil, err
			}
			if len(ws) == 0 || len(ws) > maxExpansion {
				continue
			}
			if out == nil {
				out = map[Term][]string{}
			}
			out[t] = ws
		}
	}
	return out, nil
}

// matchFor is q's FTS5 query with its prefixes expanded where the words
// table allows.
func (ix *Index) matchFor(ctx context.Context, q Query) (string, error) {
	exp, err := ix.expand(ctx, q)
	if err != nil {
		return "", err
	}
	return q.matchWith(exp), nil
}
