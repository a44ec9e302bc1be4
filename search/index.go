package search

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/foliodev/folio/history"
)

// schemaVersion changes whenever what the index holds changes; an index of
// another version is deleted and rebuilt.
const schemaVersion = "5"

const schema = `
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE convs(
	n INTEGER PRIMARY KEY,
	id TEXT NOT NULL UNIQUE,
	path TEXT NOT NULL,
	inode INTEGER NOT NULL,
	size INTEGER NOT NULL,
	head TEXT NOT NULL,
	title TEXT NOT NULL,
	first TEXT NOT NULL
);
CREATE TABLE docs(
	rowid INTEGER PRIMARY KEY,
	conv INTEGER NOT NULL,
	entry TEXT NOT NULL,
	role TEXT NOT NULL,
	at INTEGER NOT NULL,
	-- the text, for ranking and snippets (fts holds only terms): body is
	-- its first headBytes or so (see splitText), rest the remainder, so
	-- that ranking, which reads only the start, reads none of rest's pages
	body TEXT NOT NULL,
	rest TEXT NOT NULL,
	UNIQUE(conv, entry)
);
CREATE VIRTUAL TABLE fts USING fts5(text, content='', contentless_delete=1,
	tokenize='unicode61 remove_diacritics 2');
INSERT INTO fts(fts, rank) VALUES('automerge', 16);
-- every term of fts (words.go), for expanding prefixes
CREATE TABLE words(w TEXT PRIMARY KEY) WITHOUT ROWID;
`

// Path is where the index of a data folder lives.
func Path(dataDir string) string { return filepath.Join(dataDir, "search", "index.db") }

// Index is the search index of one data folder.
type Index struct {
	data string
	path string
	db   *sql.DB
	mu   sync.Mutex // catching up, within this process
	// rebuilt says Open found the index missing, damaged or of another
	// version and started it anew.
	rebuilt bool
	// warm keeps the Scanners of the conversations updated last, where
	// they stopped, so the next Update of one reads only what its save
	// appended, without setting a Scanner up from the log's page index.
	warm []warmScanner
	// checkpointing is set while a WAL checkpoint runs off the save path.
	checkpointing  atomic.Bool
	wg             sync.WaitGroup
	lastCheckpoint time.Time
}

// Open opens (creating or rebuilding when needed) the index of the data
// folder dataDir. It does not read any log: Search and CatchUp do.
func Open(dataDir string) (*Index, error) {
	ix := &Index{data: dataDir, path: Path(dataDir)}
	if err := os.MkdirAll(filepath.Dir(ix.path), 0o700); err != nil {
		return nil, err
	}
	err := ix.open()
	if err != nil {
		// Derived data: whatever is wrong with it, start again.
		ix.close()
		if err := ix.remove(); err != nil {
			return nil, err
		}
		ix.rebuilt = true
		if err := ix.open(); err != nil {
			ix.close()
			return nil, fmt.Errorf("search index %s: %w", ix.path, err)
		}
	}
	return ix, nil
}

// Rebuilt reports whether Open found no usable index and started anew.
func (ix *Index) Rebuilt() bool { return ix.rebuilt }

func (ix *Index) open() error {
	dsn := "file:" + ix.path + "?_txlock=immediate" +
		"&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)" +
		// Checkpoints run off the save path (checkpoint), not inside a
		// commit.
		"&_pragma=wal_autocheckpoint(0)" +
		// Queries read the index through memory, not a read call per page:
		// as much of it as SQLite maps (2 GiB less 64 KiB, its compiled-in
		// most). With 1 GiB the last 300 MB of a 3,000,000-message
		// corpus's index, where a build's merged FTS5 segments are
		// written, were read into each connection's page cache instead,
		// and a query's first run in a process cost half as much again.
		"&_pragma=mmap_size(2147418112)&_pragma=cache_size(-16384)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return err
	}
	ix.db = db
	db.SetMaxOpenConns(4)
	ctx := context.Background()
	var v string
	err = db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='version'`).Scan(&v)
	switch {
	case err == nil && v == schemaVersion:
		return nil
	case err == nil:
		return fmt.Errorf("index version %s, want %s", v, schemaVersion)
	case !isNoTable(err):
		return err
	}
	// A new file (or one without our tables): create the schema, unless a
	// concurrent opener just did.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(new(int)); err != nil {
		return err
	}
	var n int
	tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name='meta'`).Scan(&n)
	if n == 0 {
		if _, err := tx.ExecContext(ctx, schema); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES('version', ?)`, schemaVersion); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	return db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='version'`).Scan(&v)
}

func isNoTable(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no such table")
}

// isDamage reports whether err says the database file is not a sound
// SQLite database.
func isDamage(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return true
		}
	}
	return false
}

func (ix *Index) close() {
	ix.wg.Wait()
	if ix.db != nil {
		ix.db.Close()
		ix.db = nil
	}
}

func (ix *Index) remove() error {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if err := os.Remove(ix.path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Close closes the index.
func (ix *Index) Close() error {
	if ix.db == nil {
		return nil
	}
	ix.wg.Wait()
	ix.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	err := ix.db.Close()
	ix.db = nil
	return err
}

// Stats says what a catch-up did.
type Stats struct {
	Conversations int   // logs looked at
	Read          int   // logs read (some bytes or all of them)
	Whole         int   // of them, read from their start
	Bytes         int64 // log bytes read
	Entries       int   // entries written to the index
	Removed       int   // conversations dropped (their log is gone)
	Failed        []error
	logs          int64 // the size of every log looked at
}

// convRow is what the index remembers of one conversation.
type convRow struct {
	n           int64
	id, path    string
	inode       uint64
	size        int64
	head, title string
	first       string
}

// CatchUp brings the index up to every log of the data folder: it reads
// what each log gained since it was indexed, reads whole the logs that were
// rewritten, and drops the conversations whose log is gone. A log that
// cannot be read is reported in Stats.Failed and left out of results.
func (ix *Index) CatchUp(ctx context.Context) (Stats, error) {
	var st Stats
	ix.mu.Lock()
	defer ix.mu.Unlock()
	err := ix.catchUp(ctx, &st)
	if isDamage(err) {
		if err = ix.reset(); err == nil {
			st = Stats{}
			err = ix.catchUp(ctx, &st)
		}
	}
	if err == nil && st.Entries > 0 && st.Bytes*2 >= st.logs {
		// This catch-up wrote most of what the index holds (a build):
		// merge FTS5's segments into one as part of it, at a cost in
		// proportion to what it read. Left to FTS5, which merges a level's
		// segments once it holds 16, the save that tipped a level with the
		// build's segments on it paid for merging them (95 ms after a
		// 300,000-message conversation was indexed, against 0.5 ms for
		// the saves before and after it). Should it fail, FTS5 merges as
		// it goes, as before.
		ix.db.ExecContext(ctx, `INSERT INTO fts(fts) VALUES('optimize')`)
	}
	switch {
	case st.Bytes > 16<<20:
		// A large build: move its WAL into the database now, as part of
		// the build, rather than under the saves that follow.
		ix.wg.Wait()
		ix.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
		ix.lastCheckpoint = time.Now()
	case st.Read > 0:
		ix.checkpoint(false)
	}
	return st, err
}

// Rebuild forgets everything indexed and reads every log again (folio log
// reindex).
func (ix *Index) Rebuild(ctx context.Context) (Stats, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if err := ix.clear(ctx); err != nil {
		return Stats{}, err
	}
	var st Stats
	err := ix.catchUp(ctx, &st)
	if err == nil {
		_, err = ix.db.ExecContext(ctx, `INSERT INTO fts(fts) VALUES('optimize'); VACUUM;`)
	}
	return st, err
}

// clear empties the index (a damaged one is made anew).
func (ix *Index) clear(ctx context.Context) error {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err == nil {
		defer tx.Rollback()
		_, err = tx.ExecContext(ctx, `DELETE FROM docs; DELETE FROM convs; DELETE FROM words; INSERT INTO fts(fts) VALUES('delete-all');`)
		if err == nil {
			err = tx.Commit()
		}
	}
	if isDamage(err) {
		return ix.reset()
	}
	return err
}

// reset deletes a damaged index file and creates an empty one.
func (ix *Index) reset() error {
	ix.close()
	if err := ix.remove(); err != nil {
		return err
	}
	ix.rebuilt = true
	return ix.open()
}

func (ix *Index) known(ctx context.Context) (map[string]convRow, error) {
	rows, err := ix.db.QueryContext(ctx, `SELECT n, id, path, inode, size, head, title, first FROM convs`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]convRow{}
	for rows.Next() {
		var c convRow
		var ino int64
		if err := rows.Scan(&c.n, &c.id, &c.path, &ino, &c.size, &c.head, &c.title, &c.first); err != nil {
			return nil, err
		}
		c.inode = uint64(ino)
		out[c.id] = c
	}
	return out, rows.Err()
}

// batchBytes is how many log bytes a catch-up writes in one transaction:
// a build commits every few conversations rather than after each (each
// conversation's rows and position still change together: a savepoint
// each).
const batchBytes = 32 << 20

func (ix *Index) catchUp(ctx context.Context, st *Stats) error {
	logs, err := history.Logs(ix.data)
	if err != nil {
		return err
	}
	known, err := ix.known(ctx)
	if err != nil {
		return err
	}
	type todo struct {
		lf history.LogFile
		c  convRow
		ok bool
	}
	// A log whose path, inode and size are what was indexed is passed
	// over after one stat, without opening it: a search catches up first,
	// and most logs have not changed since the last one.
	todos := make([]todo, 0, len(logs))
	for _, lf := range logs {
		c, ok := known[lf.ID]
		delete(known, lf.ID)
		if ok {
			if fi, err := os.Stat(lf.Path); err == nil && current(c, ok, lf.Path, fi) {
				st.Conversations++
				st.logs += fi.Size()
				continue
			}
		}
		todos = append(todos, todo{lf, c, ok})
	}
	// The logs are read and turned into rows on a goroutine of its own,
	// a conversation or two ahead of the writer, so that on two cores
	// parsing and SQLite's work overlap.
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan *prepared, 2)
	go func() {
		defer close(ch)
		for _, t := range todos {
			if rctx.Err() != nil {
				return
			}
			ch <- ix.prepare(rctx, t.lf, t.c, t.ok, false)
		}
	}()
	defer func() {
		cancel()
		for range ch {
		}
	}()
	var tx *sql.Tx
	var batch []*prepared
	var size int64
	commit := func() error {
		if tx == nil {
			return nil
		}
		err := tx.Commit()
		tx, size = nil, 0
		if err == nil {
			for _, p := range batch {
				ix.keepWarm(p.lf.Path, p.ino, p.s)
			}
			// Move the WAL into the database while the build goes on,
			// on a goroutine (the other core), rather than letting it grow
			// to the index's size and copying it all at the end.
			ix.checkpoint(false)
		}
		batch = batch[:0]
		return err
	}
	defer func() {
		if tx != nil {
			tx.Rollback()
		}
	}()
	for p := range ch {
		if err := ctx.Err(); err != nil {
			return err
		}
		st.Conversations++
		st.logs += p.size
		if p.err == nil && p.skip {
			continue
		}
		if tx == nil {
			if tx, err = ix.db.BeginTx(ctx, nil); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `SAVEPOINT conv`); err != nil {
			return err
		}
		err := p.err
		if err == nil {
			err = ix.apply(ctx, tx, p, st)
		}
		if err == nil {
			if _, err := tx.ExecContext(ctx, `RELEASE conv`); err != nil {
				return err
			}
			if !p.skip {
				batch = append(batch, p)
				size += p.size - p.from
			}
		} else {
			if isDamage(err) || ctx.Err() != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `ROLLBACK TO conv; RELEASE conv`); err != nil {
				return err
			}
			st.Failed = append(st.Failed, fmt.Errorf("%s: %w", p.lf.Path, err))
			// A log the index cannot follow shows no hits.
			if err := ix.dropIn(ctx, tx, p.lf.ID); err != nil {
				return err
			}
		}
		if size >= batchBytes {
			if err := commit(); err != nil {
				return err
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(known) > 0 && tx == nil {
		if tx, err = ix.db.BeginTx(ctx, nil); err != nil {
			return err
		}
	}
	for id := range known {
		if err := ix.dropIn(ctx, tx, id); err != nil {
			return err
		}
		st.Removed++
	}
	return commit()
}

// Update brings one conversation's rows up to its log: what a save calls
// after it wrote, at the cost of what it appended.
func (ix *Index) Update(ctx context.Context, id string) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	path, err := history.Locate(ix.data, id)
	if errors.Is(err, fs.ErrNotExist) {
		return ix.drop(ctx, id)
	}
	if err != nil {
		return err
	}
	c, ok, err := ix.row(ctx, ix.db, id)
	if err != nil {
		return err
	}
	var st Stats
	err = ix.updateLog(ctx, history.LogFile{ID: id, Path: path}, c, ok, &st)
	if st.Read > 0 {
		ix.checkpoint(false)
	}
	return err
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (ix *Index) row(ctx context.Context, q querier, id string) (convRow, bool, error) {
	var c convRow
	var ino int64
	err := q.QueryRowContext(ctx, `SELECT n, id, path, inode, size, head, title, first FROM convs WHERE id=?`, id).
		Scan(&c.n, &c.id, &c.path, &ino, &c.size, &c.head, &c.title, &c.first)
	if errors.Is(err, sql.ErrNoRows) {
		return convRow{}, false, nil
	}
	c.inode = uint64(ino)
	return c, err == nil, err
}

func (ix *Index) drop(ctx context.Context, id string) error {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := ix.dropIn(ctx, tx, id); err != nil {
		return err
	}
	return tx.Commit()
}

// dropIn removes conversation id's rows in tx.
func (ix *Index) dropIn(ctx context.Context, tx *sql.Tx, id string) error {
	c, ok, err := ix.row(ctx, tx, id)
	if err != nil || !ok {
		return err
	}
	if err := clearConv(ctx, tx, c.n); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM convs WHERE n=?`, c.n)
	return err
}

func clearConv(ctx context.Context, tx *sql.Tx, n int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM fts WHERE rowid IN (SELECT ? - rowid FROM docs WHERE conv=?)`, topRowid, n); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM docs WHERE conv=?`, n)
	return err
}

// current reports whether c still describes the log f is open on.
func current(c convRow, ok bool, path string, fi fs.FileInfo) bool {
	return ok && c.path == path && c.inode == history.Inode(fi) && c.size == fi.Size()
}

// mergePages is how many pages of FTS5's segments a save's update merges.
const mergePages = 16

// updateLog indexes what lf gained since c (known says c is set), in a
// transaction of its own.
func (ix *Index) updateLog(ctx context.Context, lf history.LogFile, c convRow, known bool, st *Stats) error {
	p := ix.prepare(ctx, lf, c, known, true)
	if p.err != nil || p.skip {
		return p.err
	}
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := ix.apply(ctx, tx, p, st); err != nil {
		return err
	}
	// A step of FTS5's merging, a few pages at most, with every save.
	if _, err := tx.ExecContext(ctx, `INSERT INTO fts(fts, rank) VALUES('merge', ?)`, mergePages); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if p.s != nil {
		ix.keepWarm(lf.Path, p.ino, p.s)
	}
	return nil
}

// prepared is what one log gained, read and turned into rows, ready to be
// written (apply): the reading of the logs runs ahead of the writing.
type prepared struct {
	lf    history.LogFile
	c     convRow // the conversation's row the reading started from
	known bool
	size  int64 // the log's size when it was opened
	ino   uint64
	skip  bool // nothing to do: the row is current
	err   error
	s     *history.Scanner
	whole bool  // replace the conversation's rows
	from  int64 // the byte the reading started at
	rows  []docRow
	first string // the first prompt's first line, when the reading found it
}

// docRow is one entry's row to write.
type docRow struct {
	entry, role, text string
	at                time.Time
}

// prepare reads what lf gained since c. With warm it may continue a
// Scanner kept by an earlier update (the caller holds ix.mu); without, it
// touches nothing of ix and may run beside the writer.
func (ix *Index) prepare(ctx context.Context, lf history.LogFile, c convRow, known, warm bool) *prepared {
	p := &prepared{lf: lf, c: c, known: known}
	p.err = p.read(ctx, ix, warm)
	return p
}

func (p *prepared) read(ctx context.Context, ix *Index, warm bool) error {
	f, err := os.Open(p.lf.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	p.size, p.ino = fi.Size(), history.Inode(fi)
	c, known, lf := p.c, p.known, p.lf
	if current(c, known, lf.Path, fi) || fi.Size() == 0 {
		p.skip = true
		return nil
	}
	var s *history.Scanner
	whole := true
	from := int64(0)
	if known && c.path == lf.Path && c.inode == p.ino && c.size < fi.Size() {
		if warm {
			s = ix.takeWarm(lf.Path, p.ino, c.size)
		}
		if s != nil {
			whole, from = false, c.size
		} else if rs, err := history.ResumeScanner(lf.Path, f, c.size); err == nil {
			s, whole, from = rs, false, c.size
		}
	} else if warm {
		ix.takeWarm(lf.Path, 0, -1)
	}
	if s == nil {
		s = history.NewScanner()
	}
	if _, err := f.Seek(from, 0); err != nil {
		return err
	}
	upserts, whole, err := scanGain(ctx, s, f, from, whole)
	if err != nil {
		return err
	}
	if whole && from > 0 {
		// A resumed Scanner's document holds only the IDs of what came
		// before it; the head's new document (a snapshot, another
		// branch) may need any of them: read the log from its start.
		s, from = history.NewScanner(), 0
		if _, err := f.Seek(0, 0); err != nil {
			return err
		}
		for _, err := range s.Records(f) {
			if err != nil {
				return err
			}
		}
	}
	if whole {
		upserts = s.Document()
	}
	first := c.first
	if whole {
		first = ""
	}
	for _, e := range upserts {
		text, role, ok := entryText(e)
		if !ok {
			continue
		}
		if first == "" && role == RolePrompt {
			first = firstLine(text)
		}
		p.rows = append(p.rows, docRow{entry: e.ID, role: role, text: text, at: e.Timestamp})
	}
	p.s, p.whole, p.from, p.first = s, whole, from, first
	return nil
}

// apply writes what p read in tx. If the conversation's row changed since
// p was read (another process caught up meanwhile), the log is read again
// here.
func (ix *Index) apply(ctx context.Context, tx *sql.Tx, p *prepared, st *Stats) error {
	c, known, err := ix.row(ctx, tx, p.lf.ID)
	if err != nil {
		return err
	}
	if known != p.known || c != p.c {
		if q := ix.prepare(ctx, p.lf, c, known, false); q.err != nil || q.skip {
			p.skip = true
			return q.err
		} else {
			*p = *q
		}
	}
	lf := p.lf
	if !known {
		res, err := tx.ExecContext(ctx, `INSERT INTO convs(id, path, inode, size, head, title, first) VALUES(?, ?, 0, 0, '', '', '')`, lf.ID, lf.Path)
		if err != nil {
			return err
		}
		if c.n, err = res.LastInsertId(); err != nil {
			return err
		}
		c.id, c.path = lf.ID, lf.Path
	}
	w, err := newWriter(ctx, tx, c.n)
	if err != nil {
		return err
	}
	defer w.close()
	if p.whole {
		st.Whole++
		if known {
			if err := clearConv(ctx, tx, c.n); err != nil {
				return err
			}
		}
	}
	title := strings.TrimSpace(p.s.Title())
	if title != c.title || p.whole {
		if err := w.put("", RoleTitle, title, time.Time{}, true); err != nil {
			return err
		}
	}
	for _, r := range p.rows {
		if err := w.put(r.entry, r.role, r.text, r.at, !p.whole); err != nil {
			return err
		}
		st.Entries++
	}
	if err := w.flush(); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE convs SET path=?, inode=?, size=?, head=?, title=?, first=? WHERE n=?`,
		lf.Path, int64(p.ino), p.s.Offset(), p.s.Head(), title, p.first, c.n); err != nil {
		return err
	}
	st.Read++
	st.Bytes += p.s.Offset() - p.from
	return nil
}
