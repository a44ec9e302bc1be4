// Package storetest is the conformance suite for history.Store: every back
// end (the data folder, PostgreSQL) runs the same tests, which check that a
// Log over the store writes exactly the bytes a Log over a file writes and
// that every rule of the log format holds: appends, supersession,
// branches, compaction, strict rejection, one writer at a time, command
// receipts, attachments and artifacts (blobs), and (where the back end can be cut between steps) a crash at
// every step of a write.
//
// The suite uses the testing package only; it starts no goroutine that
// outlives a test.
package storetest

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// Harness describes a back end to the suite.
type Harness struct {
	// New returns an empty store; the suite closes it.
	New func(t *testing.T) history.Store
	// Crash, when set, arms s so that its next write is cut before step k
	// (the writer's connection ends there, as when its process dies). The
	// returned func reports, after the write, whether step k existed.
	Crash func(t *testing.T, s history.Store, k int) (fired func() bool)
	// Kill, when set, ends the writer holding m without letting it
	// release anything, as SIGKILL would.
	Kill func(t *testing.T, m history.Medium)
}

// Run runs the suite.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"AppendSameBytesAsAFile", testAppend},
		{"Supersede", testSupersede},
		{"Branches", testBranches},
		{"Compaction", testCompaction},
		{"StrictRejection", testStrict},
		{"ConcurrentWritersRefused", testWriters},
		{"CommandReceipts", testReceipts},
		{"ReceiptsBesideSaves", testReceiptsBesideSaves},
		{"ListAndDelete", testList},
		{"InterruptedAnswer", testInterrupted},
		{"Blobs", testBlobs},
		{"BlobsRefused", testBlobsRefused},
		{"BlobsRacingPuts", testBlobsRacing},
		{"BlobsGoWithTheConversation", testBlobsDeleted},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, h) })
	}
	if h.Crash != nil {
		t.Run("CrashAtEveryStep", func(t *testing.T) { testCrash(t, h) })
	}
}

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func clock() func() time.Time {
	t := t0
	var mu sync.Mutex
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

func newStore(t *testing.T, h Harness) history.Store {
	s := h.New(t)
	t.Cleanup(func() { s.Close() })
	return s
}

// pair is a Log over the store under test and one over a file, given the
// same calls; the store must end up holding the file's bytes.
type pair struct {
	t    *testing.T
	s    history.Store
	id   string
	log  *history.Log
	file *history.Log
	path string
}

func openPair(t *testing.T, s history.Store, id string) *pair {
	t.Helper()
	l, err := history.OpenStore(s, id, history.WithClock(clock()))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "conversations", id+".jsonl")
	f, err := history.Open(path, history.WithClock(clock()))
	if err != nil {
		t.Fatal(err)
	}
	p := &pair{t: t, s: s, id: id, log: l, file: f, path: path}
	t.Cleanup(func() { p.log.Close(); p.file.Close() })
	return p
}

// do runs fn on both logs and requires the same outcome.
func (p *pair) do(what string, fn func(l *history.Log) error) {
	p.t.Helper()
	e1, e2 := fn(p.log), fn(p.file)
	if (e1 == nil) != (e2 == nil) {
		p.t.Fatalf("%s: store says %v, file says %v", what, e1, e2)
	}
	if e1 != nil {
		p.t.Fatalf("%s: %v", what, e1)
	}
	p.same(what)
}

// same requires the store to hold the file's exact bytes.
func (p *pair) same(what string) {
	p.t.Helper()
	got, err := history.ReadRaw(p.s, p.id)
	if err != nil {
		p.t.Fatalf("%s: read the store: %v", what, err)
	}
	wantRaw := readBytes(p.t, p.path)
	if !bytes.Equal(got, wantRaw) {
		p.t.Fatalf("%s: the store holds\n%s\nthe file holds\n%s", what, got, wantRaw)
	}
}

func user(id, text string) transcript.Entry {
	return transcript.Entry{ID: id, Content: transcript.User{Text: text}, Timestamp: t0}
}

func agent(id, md string) transcript.Entry {
	return transcript.Entry{ID: id, Content: transcript.Agent{Markdown: md}, Timestamp: t0}
}

func doc(t *testing.T, id string, es ...transcript.Entry) transcript.Document {
	t.Helper()
	d, err := transcript.NewDocument(id, es)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func msgs(texts ...string) []message.Message {
	var out []message.Message
	for i, s := range texts {
		role := message.User
		if i%2 == 1 {
			role = message.Assistant
		}
		out = append(out, message.Text(role, s))
	}
	return out
}

func ids(d transcript.Document) string {
	var out []string
	for _, e := range d.Entries() {
		out = append(out, e.ID)
	}
	return strings.Join(out, ",")
}

func types(data []byte) string {
	var out []string
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		i := strings.Index(line, `"type":"`)
		if i < 0 {
			out = append(out, "?")
			continue
		}
		rest := line[i+8:]
		out = append(out, rest[:strings.IndexByte(rest, '"')])
	}
	return strings.Join(out, ",")
}

// uniqueID names a conversation for one test, so back ends that share a
// database between tests never see two tests' logs under one ID.
func uniqueID(t *testing.T) string {
	return fmt.Sprintf("c-%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano())
}
