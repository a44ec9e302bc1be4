package history

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/transcript"
)

// The listing cache. Listing a data folder used to parse every log whole,
// which costs about a second per hundred megabytes. For each log the
// writer, and List when it had to read the log, keeps <id>.jsonl.summary
// (beside a flat log, in jazz-sidecars for a Jazz-layout one; see
// SummaryPath): what List would report for the log, stamped with the log's
// exact size and modification time. List trusts a
// summary only while both still match the file; anything else (a log written
// by an older folio or another tool, a summary left from a deleted log, a
// garbled summary) falls back to reading the log. The summary is a cache:
// it is written in place and never fsynced, never consulted for anything but listing, and losing
// it costs only time.

// summaryFormat versions the summary file itself; a summary of another
// format is ignored. Format 3 dated a conversation by its newest meta
// updatedAt even when records came after it.
const summaryFormat = 4

// summarySuffix is appended to a log's path to name its summary.
const summarySuffix = ".summary"

// SummaryPath returns the path of the listing cache of the log at logPath:
// beside it, or for a Jazz-layout log in the data folder's jazz-sidecars
// folder (see sidecarBase). Whoever deletes a log should delete this file
// too; a stray one is harmless but wastes space.
func SummaryPath(logPath string) string { return sidecarBase(logPath) + summarySuffix }

// summaryFile is the JSON of a summary file.
type summaryFile struct {
	Format int `json:"format"`
	// Size and ModTime (Unix nanoseconds) describe the log file the rest
	// was computed from; where the system has them, so do its inode and
	// status-change time (see changeStamp).
	Size           int64     `json:"size"`
	ModTime        int64     `json:"mtime"`
	Inode          uint64    `json:"inode,omitempty"`
	ChangeTime     int64     `json:"ctime,omitempty"`
	Version        int       `json:"version"`
	ConversationID string    `json:"conversationId"`
	Title          string    `json:"title,omitempty"`
	Entries        int       `json:"entries"`
	Messages       int       `json:"messages"`
	Problems       int       `json:"problems"`
	UpdatedAt      time.Time `json:"updatedAt"`
	StartedAt      time.Time `json:"startedAt"`
	Head           string    `json:"head"`
	Branched       bool      `json:"branched,omitempty"`
	// Check is the checksum of the summary encoded without it; a file torn
	// by concurrent rewrites does not match it.
	Check string `json:"check,omitempty"`
}

// listState is what a Log knows, beyond its document and messages, to say
// what a reader of the file would list: the newest title, the number of
// problems, and the two instants UpdatedAt is made of.
type listState struct {
	title            string
	problems         int
	lastAt, metaTime time.Time
}

func (s listState) updatedAt() time.Time { return updatedAt(s.lastAt, s.metaTime) }

// updatedAt is when a conversation last changed: its newest record's at, or
// the newest meta updatedAt when that is later (Jazz may date a change so).
// A title set at the first prompt must not pin "updated" there while the
// conversation goes on.
func updatedAt(lastAt, metaTime time.Time) time.Time {
	if metaTime.After(lastAt) {
		return metaTime
	}
	return lastAt
}

// instant is t as a reader gets it back from a record's "at": the written
// precision, parsed the reader's way.
func instant(t time.Time) time.Time {
	return looseInstant(string(transcript.AppendInstant(nil, t)))
}

// noteRecord updates the list state for a record stamped at that the writer
// just appended; meta says it was a meta record carrying title (which may
// be empty) and updatedAt == at.
func (l *Log) noteRecord(at time.Time, meta bool, title string) {
	t := instant(at)
	if t.After(l.list.lastAt) {
		l.list.lastAt = t
	}
	if meta {
		if title != "" {
			l.list.title = title
		}
		if t.After(l.list.metaTime) {
			l.list.metaTime = t
		}
	}
}

// storeSummary rewrites the summary for the log as this writer knows it, or
// removes it when the writer cannot say what a reader would list (a
// document derived from messages counts entries the writer does not hold).
// It is best effort: a failure leaves a summary that no longer matches the
// log, or none, and List reads the log instead.
func (l *Log) storeSummary() {
	if !l.uiOnDisk && len(l.msgs) > 0 {
		l.m.Noted(Summary{Err: errDerived})
		return
	}
	l.m.Noted(Summary{
		ID: l.header.ConversationID, Path: l.m.Name(), Version: l.header.Version,
		Title: DisplayTitle(l.list.title, stored(l.msgs, l.synth)), Entries: l.base + l.doc.Len(), Messages: len(l.msgs) - len(l.synth),
		Problems: l.list.problems, UpdatedAt: l.list.updatedAt(), Head: l.head,
		StartedAt: l.header.StartedAt, Branched: l.branches > 1,
	})
}

// errDerived marks a Summary the writer cannot give: its document is
// derived from messages, so it does not hold the entries a reader counts.
var errDerived = errors.New("history: the document is derived from messages")

// summaryOfConv is what a listing shows of a conversation just read, whole
// or its tail (the entries a tail leaves out count).
func summaryOfConv(c *Conversation) Summary {
	// What the log holds, less the failures a Log's read added.
	msgs := stored(c.Messages, c.synth)
	return Summary{
		ID: c.Header.ConversationID, Version: c.Header.Version,
		Title: DisplayTitle(c.Title, msgs), Entries: c.Document.Elided() + c.Document.Len(), Messages: len(msgs),
		Problems: len(c.Problems), UpdatedAt: c.UpdatedAt, Head: c.Head,
		StartedAt: c.Header.StartedAt, Branched: len(c.Branches) > 1,
	}
}

// summaryOf is the summary of a conversation read from data, the whole
// content of a log file whose stat before the read was fi. It reports false
// when the file changed under the read, so the stamp would not describe c.
func summaryOf(c *Conversation, data []byte, fi fs.FileInfo) (summaryFile, bool) {
	if fi == nil || fi.Size() != int64(len(data)) {
		return summaryFile{}, false
	}
	ino, ctime := changeStamp(fi)
	return summaryFile{
		Format: summaryFormat, Size: fi.Size(), ModTime: fi.ModTime().UnixNano(), Inode: ino, ChangeTime: ctime,
		Version: c.Header.Version, ConversationID: c.Header.ConversationID,
		Title: DisplayTitle(c.Title, c.Messages), Entries: c.Document.Elided() + c.Document.Len(), Messages: len(c.Messages),
		Problems: len(c.Problems), UpdatedAt: c.UpdatedAt, Head: c.Head,
		StartedAt: c.Header.StartedAt, Branched: len(c.Branches) > 1,
	}, true
}

// writeSummary rewrites the summary at path in place: one write at offset
// zero, then a truncate to its length. Replacing it through a temporary file
// and a rename would be cleaner, but ext4 flushes a file renamed over
// another, which made every Save twice as slow. In place, a lister may read
// a half-written summary, or a writer and a lister refreshing it at once
// may leave a mix of both; the checksum makes every such file fail
// decoding, so it is ignored like any other bad summary.
func writeSummary(path string, s summaryFile) {
	// Summaries serve listings of a data folder; a log opened anywhere
	// else (folio log upgrade ~/old.jsonl) gets no extra file beside it.
	if sidecarDir(path) != nil {
		return
	}
	s.Check = ""
	body, err := json.Marshal(s)
	if err != nil {
		return
	}
	s.Check = checksum(body)
	data, err := json.Marshal(s)
	if err != nil {
		return
	}
	data = append(data, '\n')
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	if _, err := f.WriteAt(data, 0); err == nil {
		f.Truncate(int64(len(data)))
	}
	f.Close()
}

// checksum is the hex SHA-256 (first 16 bytes) of a summary encoded
// without its check member.
func checksum(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:16])
}

// cachedSummary returns the summary beside the log at path when it
// describes the file as it is now (fi, a fresh stat of it), else false. Any
// summary that cannot be read, does not decode, fails its checksum, is of
// another format, or claims impossible counts is ignored.
func cachedSummary(path string, fi fs.FileInfo) (summaryFile, bool) {
	data, err := os.ReadFile(SummaryPath(path))
	if err != nil || len(data) > 1<<20 {
		return summaryFile{}, false
	}
	var s summaryFile
	if err := json.Unmarshal(data, &s); err != nil {
		return summaryFile{}, false
	}
	check := s.Check
	s.Check = ""
	if body, err := json.Marshal(s); err != nil || check != checksum(body) {
		return summaryFile{}, false
	}
	ino, ctime := changeStamp(fi)
	if s.Format != summaryFormat || s.Size != fi.Size() || s.ModTime != fi.ModTime().UnixNano() ||
		s.Inode != ino || s.ChangeTime != ctime ||
		s.Entries < 0 || s.Messages < 0 || s.Problems < 0 || s.Version <= 0 || s.ConversationID == "" {
		return summaryFile{}, false
	}
	return s, true
}

// Summarize is List's summary of the one log at path, with its title by
// DisplayTitle: from the log's summary file when that matches the log, else
// by reading the log, refreshing the summary on the way.
func Summarize(path string) Summary { return listOne(path) }

// listOne summarizes the log at path: from its summary when that matches
// the file, else by reading the log, refreshing the summary on the way.
func listOne(path string) Summary {
	s := Summary{ID: idFromPath(path), Path: path}
	fi, err := os.Stat(path)
	if err == nil {
		if c, ok := cachedSummary(path, fi); ok {
			s.ID, s.Title, s.Entries, s.Messages = c.ConversationID, c.Title, c.Entries, c.Messages
			s.Problems, s.Version, s.UpdatedAt = c.Problems, c.Version, c.UpdatedAt
			s.StartedAt, s.Branched = c.StartedAt, c.Branched
			return s
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		s.Err = err
		return s
	}
	c, err := parseFile(path, data)
	if err != nil {
		s.Err = err
		return s
	}
	s.ID = c.Header.ConversationID
	// A copy: the title may be a slice of data, which the listing must not
	// keep alive.
	s.Title, s.Entries, s.Messages = strings.Clone(DisplayTitle(c.Title, c.Messages)), c.Document.Len(), len(c.Messages)
	s.Problems, s.Version, s.UpdatedAt = len(c.Problems), c.Header.Version, c.UpdatedAt
	s.StartedAt, s.Branched = c.Header.StartedAt, len(c.Branches) > 1
	if sf, ok := summaryOf(c, data, fi); ok {
		writeSummary(SummaryPath(path), sf)
	}
	return s
}
