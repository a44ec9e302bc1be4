package search

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// warmScanner is a Scanner that stopped at off of the log path with inode ino.
type warmScanner struct {
	path string
	ino  uint64
	off  int64
	s    *history.Scanner
}

const maxWarm = 8

// takeWarm removes and returns the warm Scanner that continues path (inode
// ino) at off, if there is one.
func (ix *Index) takeWarm(path string, ino uint64, off int64) *history.Scanner {
	for i, w := range ix.warm {
		if w.path == path {
			ix.warm = slices.Delete(ix.warm, i, i+1)
			if w.ino == ino && w.off == off {
				return w.s
			}
			return nil
		}
	}
	return nil
}

func (ix *Index) keepWarm(path string, ino uint64, s *history.Scanner) {
	if len(ix.warm) == maxWarm {
		ix.warm = slices.Delete(ix.warm, 0, 1)
	}
	ix.warm = append(ix.warm, warmScanner{path: path, ino: ino, off: s.Offset(), s: s})
}

// checkpointEvery is how often at most a checkpoint moves the WAL into
// the database file.
const checkpointEvery = 2 * time.Second

// checkpoint copies the WAL into the database in the background, at most
// every checkpointEvery (or now when force), so that no save's update
// waits for it. Called with ix.mu held.
func (ix *Index) checkpoint(force bool) {
	if !force && time.Since(ix.lastCheckpoint) < checkpointEvery {
		return
	}
	if !ix.checkpointing.CompareAndSwap(false, true) {
		return
	}
	ix.lastCheckpoint = time.Now()
	ix.wg.Add(1)
	go func() {
		defer ix.wg.Done()
		defer ix.checkpointing.Store(false)
		ix.db.Exec(`PRAGMA wal_checkpoint(PASSIVE)`)
	}()
}

// firstLine is a prompt as a title: one line, at most 48 characters.
func firstLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 48 {
		return strings.TrimRight(string(r[:47]), " ") + "…"
	}
	return s
}

// writer puts one conversation's rows with prepared statements.
//
// fts numbers its rows downwards: a docs row with rowid r is the fts row
// topRowid-r, so the newest row has the smallest fts rowid. FTS5 walks a
// term's matches in ascending rowid order lazily and stops at the
// candidates wanted, newest first; walking them in descending order it
// first reads the term's whole list in every segment, which costs in
// proportion to the corpus. docs keeps its rowids ascending, so its pages
// fill as rows are appended. FTS5 starts a new segment whenever a rowid is
// not larger than the one before, so a writer puts its fts rows at the end
// (flush), the newest first.
type writer struct {
	ctx                   context.Context
	conv                  int64
	find, del, ins, insFT *sql.Stmt
	delFT                 *sql.Stmt
	pending               []ftsRow
	tx                    *sql.Tx
	words                 wordSet // the terms of the rows put
}

type ftsRow struct {
	rowid int64 // the docs row's
	text  string
}

// topRowid maps docs rowids to fts rowids (topRowid-r), the largest a
// varint stores in five bytes.
const topRowid = 1<<35 - 1

func newWriter(ctx context.Context, tx *sql.Tx, conv int64) (*writer, error) {
	w := &writer{ctx: ctx, conv: conv, tx: tx}
	var err error
	prep := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var s *sql.Stmt
		s, err = tx.PrepareContext(ctx, q)
		return s
	}
	w.find = prep(`SELECT rowid FROM docs WHERE conv=? AND entry=?`)
	w.del = prep(`DELETE FROM docs WHERE rowid=?`)
	w.delFT = prep(`DELETE FROM fts WHERE rowid=?`)
	w.ins = prep(`INSERT INTO docs(conv, entry, role, at, body, rest) VALUES(?, ?, ?, ?, ?, ?)`)
	w.insFT = prep(`INSERT INTO fts(rowid, text) VALUES(?, ?)`)
	if err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

func (w *writer) close() {
	for _, s := range []*sql.Stmt{w.find, w.del, w.ins, w.insFT, w.delFT} {
		if s != nil {
			s.Close()
		}
	}
}

// put writes one entry's text; replace says a row for it may exist. Its
// terms are written by flush.
func (w *writer) put(entry, role, text string, at time.Time, replace bool) error {
	if replace {
		var rowid int64
		err := w.find.QueryRowContext(w.ctx, w.conv, entry).Scan(&rowid)
		switch {
		case err == nil:
			if _, err := w.delFT.ExecContext(w.ctx, topRowid-rowid); err != nil {
				return err
			}
			if _, err := w.del.ExecContext(w.ctx, rowid); err != nil {
				return err
			}
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
	}
	if text == "" {
		return nil
	}
	var ms int64
	if !at.IsZero() {
		ms = at.UnixMilli()
	}
	head, rest := splitText(text)
	res, err := w.ins.ExecContext(w.ctx, w.conv, entry, role, ms, head, rest)
	if err != nil {
		return err
	}
	rowid, err := res.LastInsertId()
	if err != nil {
		return err
	}
	w.pending = append(w.pending, ftsRow{rowid, text})
	return nil
}

// splitText splits a text into the part ranking reads, its first
// headBytes extended to the start of a character, and the rest.
func splitText(text string) (head, rest string) {
	k := headBytes
	for k < len(text) && !startsRune(text[k]) {
		k++
	}
	if k >= len(text) {
		return text, ""
	}
	return text[:k], text[k:]
}

// flush writes the terms of the rows put, the newest first, and adds them
// to the words table.
func (w *writer) flush() error {
	for i := len(w.pending) - 1; i >= 0; i-- {
		r := w.pending[i]
		if _, err := w.insFT.ExecContext(w.ctx, topRowid-r.rowid, r.text); err != nil {
			return err
		}
		w.words.add(r.text)
	}
	w.pending = w.pending[:0]
	return w.words.write(w.ctx, w.tx)
}

// scanGain runs s over r, the log from some byte on, and says what the
// index must do: with replaced false, upsert ups (the entries that records
// starting at or after byte after appended or changed, last version of
// each); with replaced true (whole, or such a record replaced the head's
// document: a superseding snapshot, a branch switch), replace the
// conversation's rows with s.Document() once the log is read to its end
// by a Scanner that read it from its start.
func scanGain(ctx context.Context, s *history.Scanner, r io.Reader, after int64, whole bool) (ups []transcript.Entry, replaced bool, err error) {
	pending := map[string]int{} // entry ID → index in ups
	replaced = whole
	for rec, err := range s.Records(r) {
		if err != nil {
			return nil, false, err
		}
		if replaced || !rec.Accepted || rec.Start < after {
			continue
		}
		switch rec.Change.Kind {
		case history.Appended, history.Opened:
			for _, e := range rec.Change.Entries {
				if i, ok := pending[e.ID]; ok {
					ups[i] = e
				} else {
					pending[e.ID] = len(ups)
					ups = append(ups, e)
				}
			}
		case history.Replaced:
			replaced, ups = true, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
	}
	return ups, replaced, ctx.Err()
}
