package history

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/go-json-experiment/json/jsontext"
)

// OpenIndex returns the page index of the log at path as of the first
// size bytes of log, an open handle on that log file (size 0: its current
// size). An index that matches the log (its inode, and the checksum of the
// last record it describes) is used as it is, or extended by reading only
// what was appended after it; any other (missing, damaged, of another
// file) is rebuilt in one pass over the log, which is logged at debug
// level. Either way the result is written back beside the log, best
// effort. A version 2 log, or a log without a valid header, has no index
// (ErrNotPaged, or the reader's error).
func OpenIndex(path string, log *os.File, size int64) (*Index, error) {
	fi, err := log.Stat()
	if err != nil {
		return nil, err
	}
	if size == 0 {
		size = fi.Size()
	}
	ino, _ := changeStamp(fi)
	ix, err := openIndex(path, log, ino, size, size == fi.Size())
	if err != nil {
		return nil, err
	}
	ix.path, ix.log = path, log
	return ix, nil
}

// openIndex is OpenIndex; persist says size is the whole file, so what is
// built or extended may be written back.
func openIndex(path string, log io.ReaderAt, ino uint64, size int64, persist bool) (*Index, error) {
	ipath := IndexPath(path)
	ix, err := readIndexFile(ipath)
	if err == nil && ix.st.inode != ino && rewriteRenaming(path, ino, ix.st) {
		// The index of the file a rewrite is renaming, or has renamed,
		// over this log: leave it alone.
		persist = false
	}
	reason := err
	if err == nil && ix.st.logSize > size {
		// The writer has indexed more than this reader looks at: use the
		// commit that describes what it looks at.
		if old, ok := ix.back(size); ok {
			ix = old
		}
	}
	if err == nil {
		reason = ix.matches(log, ino, size)
		if reason == nil && ix.st.logSize == size {
			return ix, nil
		}
		if reason == nil {
			ext, err := ix.extend(ipath, log, size, persist)
			if err == nil {
				return ext, nil
			}
			reason = err
		}
		ix.Close()
	}
	if persist && sidecarDir(ipath) == nil {
		// Written as it is built, so a long log's first open holds its
		// IDs, not its index; where it cannot be written (a log outside
		// a data folder, a read-only folder) it is built in memory.
		if ix, err := rebuildSpilled(ipath, log, ino, size, reason); err == nil {
			return ix, nil
		}
	}
	return rebuildIndex(ipath, log, ino, size, reason, persist)
}

// rewriteRenaming reports whether st, an index of another file than the
// log at path that the caller holds (inode ino), belongs to a file that a
// rewrite (compaction, upgrade) is renaming over that log, or has renamed
// over it: the rewrite wrote st naming this log as the one it was made
// from, or path no longer names this log. Any other index of another file
// (left from a log deleted or moved away, or copied with the data folder's
// sidecars) is stale, and the rebuilt one replaces it.
func rewriteRenaming(path string, ino uint64, st *ixState) bool {
	if st.rewriteIno == ino {
		return true
	}
	fi, err := os.Stat(path)
	return err != nil || Inode(fi) != ino
}

// recover replaces an index found damaged while reading it with one
// rebuilt from the log it describes.
func (ix *Index) recover(cause error) error {
	if ix.log == nil {
		return cause
	}
	fi, err := os.Stat(ix.path)
	persist := err == nil && fi.Size() == ix.st.logSize
	nix, err := rebuildIndex(IndexPath(ix.path), ix.log, ix.st.inode, ix.st.logSize, cause, persist)
	if err != nil {
		return err
	}
	ix.mu.Lock()
	old := ix.f
	ix.f, ix.mem, ix.end, ix.st, ix.data = nix.f, nix.mem, nix.end, nix.st, nil
	ix.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return nil
}

// matches reports why the index does not describe the log's first size
// bytes (nil: it does, up to its own logSize).
func (ix *Index) matches(log io.ReaderAt, ino uint64, size int64) error {
	st := ix.st
	if st.inode != ino {
		return fmt.Errorf("%w: it describes another file", ErrIndexStale)
	}
	if st.logSize > size {
		return fmt.Errorf("%w: it describes %d bytes; the log has %d", ErrIndexStale, st.logSize, size)
	}
	sum, err := lastRecordSum(log, st.lastStart, st.logSize)
	if err != nil || sum != st.lastSum {
		return fmt.Errorf("%w: the log's record at %d is not the one it describes", ErrIndexStale, st.lastStart)
	}
	return nil
}

// rebuildIndex reads the log's first size bytes in one pass and writes
// their index afresh.
func rebuildIndex(ipath string, log io.ReaderAt, ino uint64, size int64, reason error, persist bool) (*Index, error) {
	return rebuildFrom(ipath, log, ino, size, reason, persist, 0, 0)
}

// rebuildSpilled is rebuildIndex writing the new index as it goes (a
// temporary file renamed over the index at the end), so it holds at most
// spillBytes of it: the index writer's compaction of a long log, and the
// first open of a long log with no index. The index returned is opened
// from the temporary file before the rename, so it is the one this pass
// wrote even if another process replaces the index at once.
func rebuildSpilled(ipath string, log io.ReaderAt, ino uint64, size int64, reason error) (*Index, error) {
	slog.Debug("history: rebuilding a page index", "index", ipath, "reason", reason)
	observed(evRebuild)
	observed(evSpilled)
	var ix *Index
	err := writeIndexWith(ipath, func(f *os.File) error {
		if _, err := f.Write(indexMagic); err != nil {
			return err
		}
		s := rebuildScanner()
		b := newIndexBuilder()
		b.spill = f
		if _, err := b.scan(s, log, 0, size, ino); err != nil {
			return err
		}
		if err := b.spilled(); err != nil {
			return err
		}
		var err error
		ix, err = readIndexFile(f.Name())
		return err
	})
	if err != nil {
		if ix != nil {
			ix.Close()
		}
		return nil, err
	}
	return ix, nil
}

// rebuildFrom is rebuildIndex for a log a rewrite made from the log with
// inode oldIno and size oldSize (both 0: not a rewrite).
func rebuildFrom(ipath string, log io.ReaderAt, ino uint64, size int64, reason error, persist bool, oldIno uint64, oldSize int64) (*Index, error) {
	slog.Debug("history: rebuilding a page index", "index", ipath, "reason", reason)
	observed(evRebuild)
	s := rebuildScanner()
	b := newIndexBuilder()
	b.st.rewriteIno, b.st.rewriteSize = oldIno, oldSize
	data, err := b.scan(s, log, 0, size, ino)
	if err != nil {
		return nil, err
	}
	if !persist {
		return memIndex(data)
	}
	if err := writeIndexAtomic(ipath, data); err != nil {
		// The index could not be kept: serve this one from memory.
		slog.Debug("history: keeping a page index in memory", "index", ipath, "err", err)
		return memIndex(data)
	}
	return memIndexOr(ipath, data)
}

// rebuildScanner is the Scanner of a pass that builds a page index from
// the log's start: it keeps the documents' IDs in their ID sets and
// nothing else of their entries (noEntries), and works out no Change.
func rebuildScanner() *Scanner {
	s := NewScanner()
	s.quiet = true
	s.r.idsOnly, s.r.noEntries, s.r.entries = true, true, nil
	return s
}

// scan reads log bytes from..to with s (positioned at from), folding each
// record into the builder, and commits. It returns the builder's bytes:
// the whole file for a fresh builder, else the frames to append.
func (b *indexBuilder) scan(s *Scanner, log io.ReaderAt, from, to int64, ino uint64) ([]byte, error) {
	lastStart, lastEnd := int64(-1), int64(0)
	if from > 0 {
		lastStart, lastEnd = b.st.lastStart, from
	}
	problems, unknown := len(s.r.conv.Problems), len(s.r.conv.Unknown)
	for rec, err := range s.Records(io.NewSectionReader(log, from, to-from)) {
		if err != nil {
			return nil, err
		}
		if s.r.version != Version {
			return nil, fmt.Errorf("%w: a version %d log", ErrNotPaged, s.r.version)
		}
		if err := b.apply(s, rec); err != nil {
			return nil, err
		}
		b.message(rec, s.msgCount(rec.Branch))
		b.problems(s.r.conv.Problems[problems:], s.r.conv.Unknown[unknown:], rec)
		problems, unknown = len(s.r.conv.Problems), len(s.r.conv.Unknown)
		lastStart = rec.Start
		if b.spill != nil && len(b.pending) >= spillBytes {
			if err := b.spilled(); err != nil {
				return nil, err
			}
		}
	}
	if s.lineNo == 0 {
		return nil, fmt.Errorf("%w: the log has no complete first line", ErrNoHeader)
	}
	lastEnd = s.off
	if frames, ok := b.mainFrames(s); ok && len(b.st.tables) == 0 {
		// This pass wrote every entry of main's chain (a pass over the
		// whole log, or one that read a snapshot) and knows their IDs:
		// keep them as a table.
		at, err := b.table(s.r.ids.keys, frames)
		if err != nil {
			return nil, err
		}
		b.st.tables = []tableSeg{{at: at, n: s.r.ids.len()}}
	}
	sum, err := lastRecordSum(log, lastStart, lastEnd)
	if err != nil {
		return nil, err
	}
	b.commit(s, ino, lastStart, sum)
	if b.base == int64(len(indexMagic)) && from == 0 {
		return append(bytes.Clone(indexMagic), b.pending...), nil
	}
	return b.pending, nil
}

// table adds a table frame of ids, entry i in the entries frame at
// frames[i], and returns where it is. A spilling builder writes it to its
// file as it encodes it, holding a bucket of it at a time.
func (b *indexBuilder) table(ids []string, frames []uint32) (link, error) {
	if b.spill == nil {
		pos, n := b.base+int64(len(b.pending)), len(b.pending)
		b.pending = appendTableFrame(b.pending, ids, frames)
		return link{pos: pos, size: uint32(len(b.pending) - n)}, nil
	}
	if err := b.spilled(); err != nil {
		return link{}, err
	}
	w := bufio.NewWriter(io.NewOffsetWriter(b.spill, b.base))
	if err := writeTableFrame(w, ids, frames); err != nil {
		return link{}, err
	}
	if err := w.Flush(); err != nil {
		return link{}, err
	}
	at := link{pos: b.base, size: uint32(tableFrameLen(len(ids)))}
	b.base += int64(at.size)
	b.src = fileFrames(b.spill, b.base)
	return at, nil
}

// problems counts the problems a record caused, and keeps them and the
// line if the reader keeps it verbatim, while the state keeps them.
func (b *indexBuilder) problems(ps []Problem, unknown []RawLine, rec Record) {
	st := b.st
	st.problems += len(ps)
	if st.extrasLost || len(ps) == 0 {
		return
	}
	if st.problems > maxTailProblems || len(unknown) > 1 {
		st.extrasLost = true
		return
	}
	st.problemList = append(st.problemList, ps...)
	if len(unknown) == 1 {
		// The line as the reader keeps it: its bytes, less a CR.
		n := int64(len(unknown[0].Bytes))
		if n != rec.End-rec.Start && n != rec.End-rec.Start-1 {
			st.extrasLost = true
			return
		}
		st.unknown = append(st.unknown, unknownRef{line: unknown[0].Line, typ: unknown[0].Type, start: rec.Start, end: rec.Start + n})
	}
}

// mainFrames returns, for each of main's settled entries as s holds
// their IDs, the entries frame this builder wrote it in; false when it
// did not write them all (or a frame lies past 4 GiB).
func (b *indexBuilder) mainFrames(s *Scanner) ([]uint32, bool) {
	main := b.st.branches[0]
	if s.r.ids == nil || s.r.ids.len() == 0 || s.r.ids.len() != main.count || b.mainFrom != 0 || len(b.mainAt) != main.count || b.mainFar {
		return nil, false
	}
	return b.mainAt, true
}

// memIndex serves an index held in memory (one that could not be written).
func memIndex(data []byte) (*Index, error) {
	st, pos, err := decodeTrailer(data)
	if err != nil {
		return nil, err
	}
	return &Index{f: nil, mem: data, end: int64(len(data)), st: st, pos: pos}, nil
}

// extend reads what the log gained after the index and appends it to the
// index file.
func (ix *Index) extend(ipath string, log io.ReaderAt, size int64, persist bool) (*Index, error) {
	gained := appended(log, ix.st.logSize, size)
	if tornOnly(gained) {
		// Only a torn last line follows what the index describes (a
		// writer died mid-line): reading it applies nothing, so the index
		// stays as it is rather than gaining an empty commit at every
		// open until the line is completed or cut.
		return ix, nil
	}
	s, err := ix.resumeFor(gained)
	if err != nil {
		return nil, err
	}
	b := &indexBuilder{st: ix.st, src: ix.frames(), base: ix.end, statePos: ix.pos}
	b.st.rewriteIno, b.st.rewriteSize = 0, 0 // the log grew: it is no longer what the rewrite left
	tail, err := b.scan(s, log, ix.st.logSize, size, ix.st.inode)
	if err != nil {
		return nil, err
	}
	if persist {
		err := appendIndex(ipath, ix, tail)
		if err == nil {
			// Served from the file, whose new commit describes size
			// bytes (unless another writer appended one since).
			if nix, err := readIndexFile(ipath); err == nil && nix.st.logSize == size {
				ix.Close()
				return nix, nil
			} else if err == nil {
				nix.Close()
			}
		}
		slog.Debug("history: keeping an extended page index in memory", "index", ipath, "err", err)
	}
	data, err := ix.whole()
	if err != nil {
		return nil, err
	}
	all := append(bytes.Clone(data), tail...)
	ix.Close()
	return memIndex(all)
}

// appended returns the log's bytes from..to that the checks before an
// extension look at, or nil when there are none or more than 16 MiB (then
// the extension reads them only once, as it applies them).
func appended(log io.ReaderAt, from, to int64) []byte {
	if to <= from || to-from > 16<<20 {
		return nil
	}
	data := make([]byte, to-from)
	if _, err := log.ReadAt(data, from); err != nil {
		return nil
	}
	return data
}

// tornOnly reports whether gained (what the log holds past the index) is
// one unfinished line: no newline, and not a complete JSON value (an
// unterminated last record that is whole is applied like any other).
func tornOnly(gained []byte) bool {
	return len(gained) > 0 && bytes.IndexByte(gained, '\n') < 0 && !jsontext.Value(bytes.TrimSpace(gained)).IsValid()
}

// memIndexOr reopens the index file when it holds exactly data, else
// serves data from memory.
func memIndexOr(ipath string, data []byte) (*Index, error) {
	if f, err := os.Open(ipath); err == nil {
		if fi, err := f.Stat(); err == nil && fi.Size() == int64(len(data)) {
			st, pos, err := decodeTrailer(data)
			if err != nil {
				f.Close()
				return nil, err
			}
			return &Index{f: f, end: int64(len(data)), st: st, pos: pos}, nil
		}
		f.Close()
	}
	return memIndex(data)
}

// appendIndex appends frames to the index file ix was read from, under
// the file's lock, if nobody changed it since: then fsyncs.
func appendIndex(ipath string, ix *Index, frames []byte) error {
	f, err := os.OpenFile(ipath, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	unlock, err := lockIndex(f)
	if err != nil {
		return err
	}
	defer unlock()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if ix.f != nil {
		if old, err := ix.f.Stat(); err != nil || !os.SameFile(old, fi) {
			return fmt.Errorf("%w: the index file was replaced", ErrIndexStale)
		}
	}
	if fi.Size() != ix.end {
		return fmt.Errorf("%w: the index file changed", ErrIndexStale)
	}
	if _, err := f.WriteAt(frames, ix.end); err != nil {
		f.Truncate(ix.end)
		return err
	}
	return f.Sync()
}

// writeIndexAtomic replaces the index file with data.
func writeIndexAtomic(ipath string, data []byte) error {
	return writeIndexWith(ipath, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// writeIndexWith replaces the index file with what write writes:
// temporary file, fsync, rename; on an error the index is left as it was.
// Indexes are kept only for logs in a data folder's conversations (see
// IndexPath and sidecarDir).
func writeIndexWith(ipath string, write func(*os.File) error) error {
	if err := sidecarDir(ipath); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(ipath), ".index-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, ipath)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

func (ix *Index) frames() frameSource {
	if ix.mem != nil {
		return bytesFrames(ix.mem)
	}
	return fileFrames(ix.f, ix.end)
}

// forwardFrames is frames for a reader that goes forwards through the file.
func (ix *Index) forwardFrames() frameSource {
	if ix.mem != nil {
		return bytesFrames(ix.mem)
	}
	return forwardFrames(ix.f, ix.end)
}

// indexRewrite writes the index of the log at path that a rewrite is about
// to rename into place from tmp, made from the log that had inode oldIno and
// size oldSize, saying so, so that a follower of the old file can carry on
// with the new one.
func indexRewrite(path, tmp string, oldIno uint64, oldSize int64) {
	if !inConversations(filepath.Dir(path)) {
		return
	}
	f, err := os.Open(tmp)
	if err != nil {
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return
	}
	ino, _ := changeStamp(fi)
	if ix, err := rebuildFrom(IndexPath(path), f, ino, fi.Size(), errors.New("the log was rewritten"), true, oldIno, oldSize); err == nil {
		ix.Close()
	}
}

// Inode is the inode of a file (0 where the system has none), as page
// indexes record it.
func Inode(fi fs.FileInfo) uint64 {
	ino, _ := changeStamp(fi)
	return ino
}

// parseIndexing is parse for a writer's whole read of its log file at
// path: when the log has no page index that matches it, the same pass
// builds one and writes it, so the first save does not read it again.
func parseIndexing(path string, data []byte, track bool) (*reader, error) {
	if !inConversations(filepath.Dir(path)) {
		return parse(data, track)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Size() != int64(len(data)) {
		return parse(data, track)
	}
	ino, _ := changeStamp(fi)
	src := bytes.NewReader(data)
	if ix, err := readIndexFile(IndexPath(path)); err == nil {
		ok := ix.matches(src, ino, int64(len(data))) == nil
		ix.Close()
		if ok {
			return parse(data, track) // current, or extended at the first save
		}
	}
	s := newScanner(track, bytes.Count(data, []byte{'\n'})+1)
	b := newIndexBuilder()
	idx, err := b.scan(s, src, 0, int64(len(data)), ino)
	if err != nil {
		// A version 2 log has no index; any other fault is the reader's
		// to report.
		return parse(data, track)
	}
	slog.Debug("history: rebuilding a page index", "index", IndexPath(path), "reason", "the writer read a log without a matching index")
	observed(evRebuild)
	if err := writeIndexAtomic(IndexPath(path), idx); err != nil {
		slog.Debug("history: writing a page index", "err", err)
	}
	return s.finish()
}

// OpenIndexAnywhere is OpenIndex (size as there) for a log that has an
// index beside it or can have one (a data folder's log); for any other log
// it builds one in a temporary folder for this read, leaving nothing beside
// the log: how `folio log show` streams a log kept anywhere. The temporary
// build writes the index as it goes, so it holds the duplicate check's
// IDs, not the index, and its file is removed once open (the Index keeps
// it open until Close). Such an index found damaged later is not rebuilt:
// the read fails.
func OpenIndexAnywhere(path string, log *os.File, size int64) (*Index, error) {
	ipath := IndexPath(path)
	if _, err := os.Stat(ipath); err == nil || sidecarDir(ipath) == nil {
		return OpenIndex(path, log, size)
	}
	return indexAside(path, log, size)
}

func indexAside(path string, log *os.File, size int64) (*Index, error) {
	fi, err := log.Stat()
	if err != nil {
		return nil, err
	}
	if size == 0 {
		size = fi.Size()
	}
	dir, err := os.MkdirTemp("", "folio-index-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	// Sidecars are only ever written in a conversations folder; the
	// temporary folder gets one of its own.
	conv := filepath.Join(dir, conversationsDirName)
	if err := os.Mkdir(conv, 0o700); err != nil {
		return nil, err
	}
	ino, _ := changeStamp(fi)
	return rebuildSpilled(filepath.Join(conv, filepath.Base(IndexPath(path))), log, ino, size, errors.New("a log without an index, read aside"))
}
