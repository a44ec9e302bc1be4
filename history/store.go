package history

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// Storage. A Log reads and writes its conversation through a Medium: the
// bytes of one log, its writer lease and its command receipts. A Store
// holds many logs by conversation ID and hands out Media. Files is the
// data folder; package pgstore keeps the same records in PostgreSQL. Both
// carry the log as the exact bytes folio writes, one record a line, so the
// Log's writer and the Scanner's reading loop are the one logic for both,
// and every rule of the format (strict batches, supersession, branches,
// compaction) holds wherever the log lives.

// Medium is the storage under one Log, held with the conversation's writer
// lease from the Store's Open until Close. It is used by one goroutine at a
// time.
type Medium interface {
	// Name says where the log lives, for messages: a file path, or a
	// store's name for the conversation.
	Name() string
	// Read returns the whole log, every record followed by its newline;
	// an error wrapping fs.ErrNotExist when there is none yet.
	Read() ([]byte, error)
	// Append adds records (whole lines, each ending in a newline) after
	// the log as last read, appended or replaced. They are durable when it
	// returns nil; after an error none of them is (a partial line a file
	// may keep is a torn last line, which readers ignore).
	Append(records []byte) error
	// Replace makes data the whole log atomically: it creates a log, and
	// installs an upgraded or compacted one.
	Replace(data []byte) error
	// Noted tells the medium what a listing shows after a write (title,
	// counts, instant, head). It is best effort.
	Noted(s Summary)
	// RecordCommand appends one command receipt (a JSON object, no
	// newline), durable when it returns nil; Commands returns every
	// receipt recorded, one a line, oldest first (nil when none).
	RecordCommand(line []byte) error
	Commands() ([]byte, error)
	// TookOverFrom is the process ID of a writer that died holding the
	// lease, when the medium can tell, or 0.
	TookOverFrom() int
	// Close releases the lease.
	Close() error
}

// CopyMedium is a Medium that also keeps the log, byte for byte, in a local
// file in a data folder's conversations folder, with a page index beside
// it like any log there (a replica's copy of a log kept in PostgreSQL).
// Log.LoadTail reads such a log's tail through the copy's index instead of
// reading the whole log from the medium.
type CopyMedium interface {
	Medium
	// ReadCopy brings the copy up to the log the medium holds and calls
	// read with the copy's path and the log's size, keeping the copy as
	// it is until read returns. When read returns nil the medium is left
	// as Read would leave it, so the next Append continues that log. An
	// error, from read or ReadCopy, says to Read the log instead.
	ReadCopy(read func(path string, size int64) error) error
}

// Store holds conversation logs by ID. Its methods are safe for concurrent
// use.
type Store interface {
	// Blobs keeps each conversation's attachments and artifacts; Delete
	// removes them with the log.
	Blobs
	// Open takes id's writer lease and returns its medium, creating
	// nothing until the first write. A second writer gets an error
	// wrapping ErrLocked.
	Open(id string) (Medium, error)
	// ReadLog returns id's log as Medium.Read does, without the lease,
	// and the name it goes by.
	ReadLog(id string) (data []byte, name string, err error)
	// List summarizes every log, newest first.
	List() ([]Summary, error)
	// Delete removes id's log, its receipts, its blobs and any cache of
	// it, under its writer lease; a missing log is not an error.
	Delete(id string) error
	// Close releases what the store holds (connections). Media stay
	// valid until their own Close only where the store says so.
	Close() error
}

// OpenStore opens conversation id of s for writing, as Open opens a file.
func OpenStore(s Store, id string, opts ...Option) (*Log, error) {
	m, err := s.Open(id)
	if err != nil {
		return nil, err
	}
	return OpenMedium(m, id, opts...), nil
}

// OpenMedium makes a Log over m, which holds conversation id's lease. The
// Log owns m from here on: its Close closes m.
func OpenMedium(m Medium, id string, opts ...Option) *Log {
	l := &Log{m: m, id: id, now: defaultNow}
	for _, o := range opts {
		o(l)
	}
	return l
}

// ReadStore reads conversation id of s without taking its lease; see Read.
func ReadStore(s Store, id string) (*Conversation, error) {
	data, name, err := s.ReadLog(id)
	if err != nil {
		return nil, err
	}
	return parseNamed(name, id, data)
}

// ReadRaw is ReadStore's bytes: the exact log text, for exports and
// imports that copy a log from one store to another unchanged.
func ReadRaw(s Store, id string) ([]byte, error) {
	data, _, err := s.ReadLog(id)
	return data, err
}

// parseNamed reads data, the log of conversation id known as name.
func parseNamed(name, id string, data []byte) (*Conversation, error) {
	st, err := parse(data, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if st.conv.Header.ConversationID == "" {
		st.conv.Header.ConversationID = id
	}
	return st.conv, nil
}

// SummarizeLog is List's summary of one log given its bytes, for stores
// that list by reading (id names it when its header does not).
func SummarizeLog(id, name string, data []byte) Summary {
	s := Summary{ID: id, Path: name}
	c, err := parseNamed(name, id, data)
	if err != nil {
		s.Err = err
		return s
	}
	s.ID = c.Header.ConversationID
	s.Title, s.Entries, s.Messages = DisplayTitle(c.Title, c.Messages), c.Document.Len(), len(c.Messages)
	s.Problems, s.Version, s.UpdatedAt = len(c.Problems), c.Header.Version, c.UpdatedAt
	s.StartedAt, s.Branched, s.Head = c.Header.StartedAt, len(c.Branches) > 1, c.Head
	return s
}

// SortSummaries orders a listing newest first, as List does.
func SortSummaries(out []Summary) {
	sort.SliceStable(out, func(i, j int) bool { return out[i].UpdatedAt.After(out[j].UpdatedAt) })
}

// Files is the data folder as a Store: conversations/<id>.jsonl (and
// Jazz's layout, by Locate's rule), locked with the sidecar lock.
type Files struct{ Dir string }

var _ Store = Files{}

// Open locates id's log and takes its lock.
func (f Files) Open(id string) (Medium, error) {
	p, err := Locate(f.Dir, id)
	if err != nil {
		return nil, err
	}
	return openFile(p)
}

// ReadLog reads id's log file.
func (f Files) ReadLog(id string) ([]byte, string, error) {
	p, err := Locate(f.Dir, id)
	if err != nil {
		return nil, "", err
	}
	data, err := os.ReadFile(p)
	return data, p, err
}

// List is List(f.Dir).
func (f Files) List() ([]Summary, error) { return List(f.Dir) }

// Delete removes id's log with its sidecars and blobs, holding its lock,
// and the side file a repair moved its unusable lines to (they belong to
// the conversation and go with it).
func (f Files) Delete(id string) error {
	p, err := Locate(f.Dir, id)
	if err != nil {
		return err
	}
	unlock, err := Lock(p)
	if err != nil {
		return err
	}
	errs := []error{f.deleteBlobs(id)}
	for _, q := range []string{p, SummaryPath(p), CommandsPath(p), IndexPath(p), RemovedPath(p)} {
		if err := os.Remove(q); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if sidecarBase(p) != p {
		// A Jazz agent's sidecar folder goes when its last log's sidecars
		// do (Remove refuses a folder that still holds some).
		os.Remove(filepath.Dir(IndexPath(p)))
	}
	return errors.Join(append(errs, unlock())...)
}

// Close does nothing: a data folder holds no connections.
func (Files) Close() error { return nil }

// openFile takes the lock of the log file at path and returns its medium.
func openFile(path string) (Medium, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	unlock, stale, err := acquire(path)
	if err != nil {
		return nil, err
	}
	return &fileMedium{path: path, unlock: unlock, stale: stale}, nil
}

// fileMedium is one log file: appended with O_APPEND and fsync, replaced
// by writeAtomic, receipts in the <log>.commands sidecar, and its page
// index (<log>.index) kept current by an indexWriter after each append.
type fileMedium struct {
	path   string
	unlock func() error
	stale  int
	f      *os.File // append handle, opened on first append
	size   int64    // the file's size as last read or written
	ixw    *indexWriter
}

// settleIndex waits for this writer's index goroutine to index what was
// written, so a read of the index that follows is not an extension racing
// the goroutine's own (one of which would lose, and the goroutine would
// start over by reading every ID back).
func (m *fileMedium) settleIndex() {
	if m.ixw != nil {
		m.ixw.flush()
	}
}

func (m *fileMedium) Name() string      { return m.path }
func (m *fileMedium) TookOverFrom() int { return m.stale }

func (m *fileMedium) Read() ([]byte, error) {
	data, err := os.ReadFile(m.path)
	m.size = int64(len(data))
	return data, err
}

func (m *fileMedium) Append(records []byte) error {
	if m.f == nil {
		f, err := os.OpenFile(m.path, os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		m.f = f
	}
	if _, err := m.f.Write(records); err != nil {
		m.f.Truncate(m.size) // best effort: take back a partial record
		return err
	}
	if err := m.f.Sync(); err != nil {
		return err
	}
	m.size += int64(len(records))
	m.indexWrites()
	return nil
}

func (m *fileMedium) Replace(data []byte) error {
	if m.f != nil {
		m.f.Close() // the append handle refers to the old file
		m.f = nil
	}
	// The index described the old file. The new file's is written before
	// the new file is renamed into place, saying which file at which size
	// it holds the same documents as, so a follower of the old file finds
	// it as soon as it sees the new one.
	var oldIno uint64
	if fi, err := os.Stat(m.path); err == nil {
		oldIno, _ = changeStamp(fi)
	}
	oldSize := m.size
	m.dropIndexWriter()
	if err := writeAtomicThen(m.path, data, func(tmp string) { indexRewrite(m.path, tmp, oldIno, oldSize) }); err != nil {
		return err
	}
	m.size = int64(len(data))
	return nil
}

// indexWrites has the page index extended by what the log just gained, in
// the background (indexWriter). It is best effort: an index that cannot be
// kept current is extended or rebuilt by its next reader.
func (m *fileMedium) indexWrites() {
	if !inConversations(filepath.Dir(m.path)) {
		return
	}
	if m.ixw == nil {
		m.ixw = startIndexWriter(m.path)
	}
	m.ixw.notify()
}

func (m *fileMedium) dropIndexWriter() {
	if m.ixw != nil {
		m.ixw.close()
		m.ixw = nil
	}
}

// Noted rewrites the listing summary beside the log (see storeSummary).
func (m *fileMedium) Noted(s Summary) {
	sp := SummaryPath(m.path)
	fi, err := os.Stat(m.path)
	if s.Err != nil || err != nil || fi.Size() != m.size {
		os.Remove(sp)
		return
	}
	ino, ctime := changeStamp(fi)
	writeSummary(sp, summaryFile{
		Format: summaryFormat, Size: fi.Size(), ModTime: fi.ModTime().UnixNano(), Inode: ino, ChangeTime: ctime,
		Version: s.Version, ConversationID: s.ID, Title: s.Title, Entries: s.Entries, Messages: s.Messages,
		Problems: s.Problems, UpdatedAt: s.UpdatedAt, Head: s.Head,
		StartedAt: s.StartedAt, Branched: s.Branched,
	})
}

func (m *fileMedium) RecordCommand(line []byte) error {
	f, err := os.OpenFile(CommandsPath(m.path), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(append(line, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (m *fileMedium) Commands() ([]byte, error) {
	f, err := os.Open(CommandsPath(m.path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func (m *fileMedium) Close() error {
	m.dropIndexWriter()
	var errs []error
	if m.f != nil {
		errs = append(errs, m.f.Close())
	}
	return errors.Join(append(errs, m.unlock())...)
}

// splitLines calls fn with each line of data, without its newline.
func splitLines(data []byte, fn func(line []byte)) {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			fn(data)
			return
		}
		fn(data[:i])
		data = data[i+1:]
	}
}
