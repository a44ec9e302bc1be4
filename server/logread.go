package server

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"iter"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/server/pager"
	"github.com/foliodev/folio/transcript"
)

// This file reads history log version 3 as a stream, for two jobs that must
// not hold a whole conversation in memory: the one linear pass that captures
// a snapshot, and following the bytes another process appends. It applies
// the log's batch rule (a ui-append is accepted or rejected whole) and keeps
// each entry's bytes as stored, so pages can send them without re-encoding.

// maxLogLine bounds one log line; a longer one is reported and skipped.
const maxLogLine = 64 << 20

// logEntry is one decoded entry with its stored bytes.
type logEntry struct {
	entry transcript.Entry
	raw   []byte
}

// logRecord is what one complete line of a log means to the server.
type logRecord struct {
	typ     string // record type; "conversation" for the header
	at      time.Time
	entries []logEntry // ui-append and ui-transcript
	title   string     // header or meta
	version int        // header
	err     error      // the line was rejected; entries is empty
	branch  string     // on-branch and head records
	inner   []byte     // the record an on-branch record wraps
}

type recordWire struct {
	Type    string           `json:"type"`
	At      string           `json:"at"`
	Version int              `json:"version"`
	Title   string           `json:"title"`
	Entries []jsontext.Value `json:"entries"`
	Branch  string           `json:"branch"`
	Record  jsontext.Value   `json:"record"`
}

// idSet holds the IDs of a document as 64-bit hashes: a few bytes per entry
// instead of the whole string, for the batch rule's repeated-ID check.
type idSet struct {
	seed maphash.Seed
	m    map[uint64]struct{}
}

func newIDSet() *idSet { return &idSet{seed: maphash.MakeSeed(), m: map[uint64]struct{}{}} }

func (s *idSet) has(id string) bool {
	_, ok := s.m[maphash.String(s.seed, id)]
	return ok
}
func (s *idSet) add(id string) { s.m[maphash.String(s.seed, id)] = struct{}{} }
func (s *idSet) reset()        { clear(s.m) }

// parseLogLine decodes one line. ids holds the current document's IDs and is
// updated for an accepted batch. A rejected batch changes nothing.
func parseLogLine(line []byte, ids *idSet) logRecord {
	var w recordWire
	if err := json.Unmarshal(line, &w, json.RejectUnknownMembers(false)); err != nil {
		return logRecord{err: fmt.Errorf("not a JSON record: %w", err)}
	}
	rec := logRecord{typ: w.Type, title: w.Title, version: w.Version, branch: w.Branch}
	if w.Type == "on-branch" && w.Record.Kind() == '{' {
		rec.inner = w.Record
	}
	if w.At != "" {
		rec.at, _ = transcript.ParseInstant(w.At)
	}
	switch w.Type {
	case "ui-append", "ui-transcript":
	default:
		return rec
	}
	out := make([]logEntry, 0, len(w.Entries))
	var seen map[string]struct{} // for big batches (a ui-transcript snapshot)
	if len(w.Entries) > 16 {
		seen = make(map[string]struct{}, len(w.Entries))
	}
	for i, raw := range w.Entries {
		e, err := transcript.DecodeEntry(raw)
		if err != nil {
			return logRecord{typ: w.Type, err: fmt.Errorf("entries/%d: %w", i, err)}
		}
		// Most batches hold one entry: a linear scan beats a map there.
		repeated := false
		if seen != nil {
			_, repeated = seen[e.ID]
			seen[e.ID] = struct{}{}
		} else {
			for _, prev := range out {
				repeated = repeated || prev.entry.ID == e.ID
			}
		}
		if repeated {
			return logRecord{typ: w.Type, err: fmt.Errorf("entries/%d: id %q repeats in the batch", i, e.ID)}
		}
		if w.Type == "ui-append" && ids.has(e.ID) {
			return logRecord{typ: w.Type, err: fmt.Errorf("entries/%d: id %q is already in the document", i, e.ID)}
		}
		out = append(out, logEntry{entry: e, raw: raw})
	}
	if w.Type == "ui-transcript" {
		ids.reset()
	}
	for _, le := range out {
		ids.add(le.entry.ID)
	}
	rec.entries = out
	return rec
}

// item turns a log entry into a pager item.
func (le logEntry) item() pager.Item {
	it := pager.Item{ID: le.entry.ID, Kind: le.entry.Content.Kind(), Raw: le.raw}
	if c, ok := le.entry.Content.(transcript.Compaction); ok {
		cov := c.Covers
		it.Covers = &cov
	}
	return it
}

// errLogHeader is returned when a log does not start with a version 3 header.
var errLogHeader = errors.New("log does not start with a version 3 conversation header")

// logScan is the outcome of reading a log's complete lines.
type logScan struct {
	consumed int64  // bytes of complete lines read
	lastID   string // the document's last entry
}

// logItems yields the current document of the log in r as pager items, in
// one pass. A ui-transcript record supersedes what came before: it yields a
// Reset item. Rejected lines are skipped (the history reader reports them).
// ids receives the document's IDs and scan what was read; a torn last line
// is not consumed.
func logItems(r io.Reader, ids *idSet, scan *logScan) iter.Seq2[pager.Item, error] {
	return func(yield func(pager.Item, error) bool) {
		first := true
		err := scanLines(r, func(line []byte, end int64) bool {
			rec := parseLogLine(line, ids)
			if first {
				first = false
				if rec.typ != "conversation" || rec.version != 3 {
					yield(pager.Item{}, errLogHeader)
					return false
				}
			}
			if isBranchRecord(rec.typ) {
				yield(pager.Item{}, errBranched)
				return false
			}
			scan.consumed = end
			if rec.err != nil {
				return true
			}
			if rec.typ == "ui-transcript" {
				scan.lastID = ""
				if !yield(pager.Item{Reset: true}, nil) {
					return false
				}
			}
			for _, le := range rec.entries {
				scan.lastID = le.entry.ID
				if !yield(le.item(), nil) {
					return false
				}
			}
			return true
		})
		if err != nil {
			yield(pager.Item{}, err)
		}
	}
}

// scanLines calls fn with each complete, non-blank line of r (without its
// newline) and the offset just past it. A torn last line is left alone; a
// line over maxLogLine is skipped.
func scanLines(r io.Reader, fn func(line []byte, end int64) bool) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var off int64
	for {
		line, n, err := readLine(br)
		if err == io.EOF {
			return nil // whatever is left is torn
		}
		if err != nil {
			return err
		}
		off += n
		if t := bytes.TrimSpace(line); len(t) > 0 && !fn(t, off) {
			return nil
		}
	}
}

// readLine reads one newline-terminated line and how many bytes it took. A
// line over maxLogLine comes back nil. io.EOF means no complete line was
// left.
func readLine(br *bufio.Reader) ([]byte, int64, error) {
	line, err := br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, int64(len(line)), err
	}
	buf := append([]byte(nil), line...)
	n := int64(len(line))
	for {
		line, err = br.ReadSlice('\n')
		n += int64(len(line))
		if buf != nil && len(buf)+len(line) <= maxLogLine {
			buf = append(buf, line...)
		} else {
			buf = nil
		}
		if err != bufio.ErrBufferFull {
			return buf, n, err
		}
	}
}
