package history

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
)

// indexWriter keeps a log's page index current as its writer appends,
// off the writer's path: a goroutine, kicked after each write, reads the
// records the log gained with a Scanner resumed at the index's end and
// appends their frames and a commit to the index (with its own fsync).
// A save therefore waits for neither the index's fsync nor, on a writer's
// first save, the resume (every entry's ID). Close waits for the index to
// catch up with the log.
type indexWriter struct {
	path string   // the log
	log  *os.File // read handle on the log
	ix   *Index
	s    *Scanner // nil until opened, and after a failure
	// table, while s came from resumeLight, is the index's ID table that
	// the records s applies are checked against first (lightOK).
	table *idTable
	// live estimates the bytes of the index that are not superseded: all
	// of it when opened, then each commit's entries frames. Each commit's
	// state frame supersedes the one before, so the file outgrows live by
	// about a state frame per save; past twice live it is rebuilt.
	live int64

	kick chan struct{}      // a write happened (buffered: kicks coalesce)
	wait chan chan struct{} // catch up, then close the channel sent
	quit chan struct{}
	done chan struct{}
}

// startIndexWriter starts the goroutine that indexes the log at path.
func startIndexWriter(path string) *indexWriter {
	w := &indexWriter{path: path, kick: make(chan struct{}, 1), wait: make(chan chan struct{}),
		quit: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

func (w *indexWriter) run() {
	defer close(w.done)
	defer w.closeFiles()
	for {
		select {
		case <-w.kick:
			w.step()
		case ack := <-w.wait:
			w.step()
			if w.s != nil {
				w.step() // opening indexed what was there; catch up with the rest
			}
			close(ack)
		case <-w.quit:
			w.step() // what the log gained before Close
			return
		}
	}
}

// notify tells the goroutine the log grew.
func (w *indexWriter) notify() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// flush returns once the index has caught up with the log.
func (w *indexWriter) flush() {
	ack := make(chan struct{})
	w.wait <- ack
	<-ack
}

// close stops the goroutine once the index has caught up.
func (w *indexWriter) close() {
	close(w.quit)
	<-w.done
}

// step brings the index up to the log: the first time by opening it
// (OpenIndex extends or rebuilds it to the log's end) and resuming a
// Scanner there, then by catchUp. A failure drops the state; the next
// step opens the index afresh.
func (w *indexWriter) step() {
	if w.s == nil {
		f, err := os.Open(w.path)
		if err != nil {
			return
		}
		if w.openLight(f) {
			if err := w.catchUp(); err != nil {
				slog.Debug("history: extending a page index", "log", w.path, "err", err)
				w.closeFiles()
			}
			return
		}
		ix, err := OpenIndex(w.path, f, 0)
		if err != nil {
			f.Close()
			return
		}
		s, err := ix.resume()
		if err != nil {
			ix.Close()
			f.Close()
			return
		}
		w.log, w.ix, w.s, w.live = f, ix, idsOnly(s), ix.end
		if ix.f != nil {
			w.stepTable()
		}
		return
	}
	if err := w.catchUp(); err != nil {
		slog.Debug("history: extending a page index", "log", w.path, "err", err)
		w.closeFiles()
	}
}

// openLight starts from an index that matches the log and has an ID
// table, without reading every entry's ID back (resumeLight).
func (w *indexWriter) openLight(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	ix, err := readIndexFile(IndexPath(w.path))
	if err != nil {
		return false
	}
	if ix.matches(f, Inode(fi), fi.Size()) != nil {
		ix.Close()
		return false
	}
	s, table, err := ix.resumeLight()
	if err != nil {
		ix.Close()
		return false
	}
	ix.path, ix.log = w.path, f
	w.log, w.ix, w.s, w.table, w.live = f, ix, idsOnly(s), table, ix.end
	observed(evLightResume)
	return true
}

func (w *indexWriter) closeFiles() {
	if w.ix != nil {
		w.ix.Close()
	}
	if w.log != nil {
		w.log.Close()
	}
	w.log, w.ix, w.s, w.table = nil, nil, nil, nil
}

// catchUp indexes what the log holds past the Scanner, appending one
// commit to the index file.
func (w *indexWriter) catchUp() error {
	fi, err := w.log.Stat()
	if err != nil {
		return err
	}
	if fi.Size() <= w.s.off {
		return nil
	}
	if w.table != nil {
		data := make([]byte, fi.Size()-w.s.off)
		if _, err := w.log.ReadAt(data, w.s.off); err != nil {
			return err
		}
		if !lightOK(w.table, data) {
			// Something the light Scanner cannot judge: read every
			// entry's ID back, as a resume always did.
			observed(evFullResume)
			s, err := w.ix.resume()
			if err != nil {
				return err
			}
			w.s, w.table = idsOnly(s), nil
		}
	}
	b := &indexBuilder{st: w.ix.st, src: w.ix.frames(), base: w.ix.end, statePos: w.ix.pos}
	b.st.rewriteIno, b.st.rewriteSize = 0, 0
	frames, err := b.scan(w.s, w.log, w.s.off, fi.Size(), w.ix.st.inode)
	if err != nil {
		return err
	}
	if err := appendIndex(IndexPath(w.path), w.ix, frames); err != nil {
		return err
	}
	w.ix.end += int64(len(frames))
	w.ix.pos = b.statePos
	w.ix.mu.Lock()
	w.ix.data = nil
	w.ix.mu.Unlock()
	w.live += int64(len(frames) - b.stateBytes)
	if w.ix.end > 2*w.live+indexSlack {
		return w.compact(fi)
	}
	return w.stepTable()
}

// tableStep is how many of main's entries may follow the ID table before
// the writer adds a segment (idtable.go): the most IDs a writer holds.
var tableStep = 4096

// stepTable keeps the writer's Scanner light: once tableStep of main's
// entries follow the ID table, it appends a segment of their IDs (merged
// with the newest segments while they are no larger, so there are few)
// and a commit naming it, and resumes light from there, holding no ID of
// the entries the table holds. A Scanner that a full resume made whole
// becomes light again the same way. Failing to, it stays as it is.
func (w *indexWriter) stepTable() error {
	st := w.ix.st
	main := st.branches[0]
	if main.count-st.tableN() >= tableStep {
		if err := w.appendSegment(); err != nil {
			slog.Debug("history: adding to a page index's ID table", "log", w.path, "err", err)
			return nil
		}
	} else if w.table != nil || len(st.tables) == 0 {
		return nil
	}
	s, table, err := w.ix.resumeLight()
	if err != nil {
		return nil
	}
	w.s, w.table = idsOnly(s), table
	return nil
}

// appendSegment appends to the index a segment of the ID table holding
// main's entries after those of the segments it keeps, and a commit.
func (w *indexWriter) appendSegment() error {
	st := w.ix.st
	main := st.branches[0]
	if w.ix.f == nil || main.count == 0 || main.uiLines == 0 && main.msgs > 0 {
		return errNoIndexTail
	}
	// Merge while the newest kept segment holds no more entries than the
	// new one would.
	keep, from := len(st.tables), st.tableN()
	for keep > 0 {
		lo := 0
		if keep > 1 {
			lo = st.tables[keep-2].n
		}
		if st.tables[keep-1].n-lo > main.count-from {
			break
		}
		keep, from = keep-1, lo
	}
	// The IDs of main's entries from..count and the frames holding them,
	// read back along main's chain.
	src := w.ix.frames()
	ids, frames := make([]string, main.count-from), make([]uint32, main.count-from)
	for l, next := main.last, main.count; next > from; {
		ord, refs, prev, err := readRun(src, l)
		if err != nil {
			return err
		}
		if ord+len(refs) != next || l.pos >= 1<<32 {
			return fmt.Errorf("%w: main's chain does not run back to entry %d", ErrIndexDamaged, from)
		}
		for j := max(ord, from); j < next; j++ {
			ids[j-from], frames[j-from] = refs[j-ord].ID, uint32(l.pos)
		}
		next, l = ord, prev
	}
	var dropped int64
	for _, t := range st.tables[keep:] {
		dropped += int64(t.at.size)
	}
	// The segment, its commit's state and the trailer, in one buffer made
	// to their size: the segment is encoded straight into it.
	pos, size := w.ix.end, tableFrameLen(len(ids))
	nst := *st
	nst.tables = append(slices.Clone(st.tables[:keep]), tableSeg{at: link{pos: pos, size: uint32(size)}, n: main.count})
	nst.prev = w.ix.pos
	statePos := pos + int64(size)
	state := encodeState(&nst)
	out := appendTableFrame(make([]byte, 0, size+frameHeadLen+len(state)+4+trailerLen), ids, frames)
	out = appendFrame(out, frameState, state)
	out = appendTrailer(out, statePos)
	if err := appendIndex(IndexPath(w.path), w.ix, out); err != nil {
		return err
	}
	*st = nst
	w.ix.end += int64(len(out))
	w.ix.pos = statePos
	w.ix.mu.Lock()
	w.ix.data = nil
	w.ix.mu.Unlock()
	w.live += int64(statePos-pos) - dropped
	return nil
}

// idsOnly makes s keep each entry it applies as its ID alone, as a rebuild
// does: the index needs a record's entries only while it applies, and a
// writer's Scanner lives as long as the log is open, so whole entries (and
// the line buffers their strings point into) would pile up.
func idsOnly(s *Scanner) *Scanner {
	s.r.idsOnly = true
	return s
}

// indexSlack is how far an index may outgrow twice its live bytes before
// the writer rebuilds it.
var indexSlack int64 = 256 << 10

// compact rebuilds the index from the log, dropping superseded commits.
func (w *indexWriter) compact(fi os.FileInfo) error {
	ino, _ := changeStamp(fi)
	observed(evCompaction)
	ix, err := rebuildSpilled(IndexPath(w.path), w.log, ino, w.s.off, errors.New("superseded commits outgrew the index"))
	if err != nil {
		return err
	}
	// The rebuilt index has an ID table of main's settled entries: the
	// Scanner resumes light from it, holding only what follows.
	s, table, err := ix.resumeLight()
	if err != nil {
		table = nil
		if s, err = ix.resume(); err != nil {
			ix.Close()
			return err
		}
	}
	w.ix.Close()
	w.ix, w.s, w.table, w.live = ix, idsOnly(s), table, ix.end
	return nil
}
