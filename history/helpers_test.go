package history

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// clock returns a clock that advances one second per call, so records are
// distinguishable and tests deterministic.
func clock() func() time.Time {
	t := t0
	return func() time.Time { t = t.Add(time.Second); return t }
}

func user(id, text string) transcript.Entry {
	return transcript.Entry{ID: id, Content: transcript.User{Text: text}, Timestamp: t0}
}

func agent(id, md string) transcript.Entry {
	return transcript.Entry{ID: id, Content: transcript.Agent{Markdown: md}, Timestamp: t0}
}

func entries(n int, prefix string) []transcript.Entry {
	out := make([]transcript.Entry, n)
	for i := range out {
		out[i] = agent(fmt.Sprintf("%s%d", prefix, i), fmt.Sprintf("answer %d", i))
	}
	return out
}

func doc(t testing.TB, es ...transcript.Entry) transcript.Document {
	t.Helper()
	d, err := transcript.NewDocument("c1", es)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func appendAll(t testing.TB, d transcript.Document, es ...transcript.Entry) transcript.Document {
	t.Helper()
	for _, e := range es {
		var err error
		if d, err = d.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func logPath(t testing.TB) string {
	return filepath.Join(t.TempDir(), "data", "conversations", "c1.jsonl")
}

func open(t testing.TB, path string) *Log {
	t.Helper()
	l, err := Open(path, WithClock(clock()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readConv(t testing.TB, data []byte) *Conversation {
	t.Helper()
	c, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("Read: %v\n%s", err, data)
	}
	return c
}

func ids(d transcript.Document) []string {
	var out []string
	for _, e := range d.All() {
		out = append(out, e.ID)
	}
	return out
}

func sameDoc(t testing.TB, got, want transcript.Document) {
	t.Helper()
	if got.Len() != want.Len() {
		t.Fatalf("document has %d entries %v, want %d %v", got.Len(), ids(got), want.Len(), ids(want))
	}
	for i := range want.Len() {
		if got.Fingerprint(i) != want.Fingerprint(i) {
			t.Fatalf("entry %d: got %+v, want %+v", i, got.At(i), want.At(i))
		}
	}
}

func lines(data []byte) []string {
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

func recordTypes(data []byte) []string {
	var out []string
	for _, l := range lines(data)[1:] {
		i := strings.Index(l, `"type":"`)
		if i < 0 {
			out = append(out, "?")
			continue
		}
		rest := l[i+8:]
		out = append(out, rest[:strings.IndexByte(rest, '"')])
	}
	return out
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

const v3Header = `{"type":"conversation","version":3,"conversationId":"c1","startedAt":"2026-03-04T05:06:07.000Z"}`

// logOf joins a header and record lines into a log.
func logOf(header string, recs ...string) []byte {
	return []byte(header + "\n" + strings.Join(recs, "\n") + "\n")
}

func entryJSON(t testing.TB, e transcript.Entry) string {
	t.Helper()
	b, err := transcript.EncodeEntry(e)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func uiRec(typ string, entries ...string) string {
	return `{"type":"` + typ + `","at":"2026-03-04T05:06:08.000Z","entries":[` + strings.Join(entries, ",") + `]}`
}

func problemsOf(c *Conversation, kind ProblemKind) []Problem {
	var out []Problem
	for _, p := range c.Problems {
		if p.Kind == kind {
			out = append(out, p)
		}
	}
	return out
}

func writeLog(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func openAppend(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
}

func statMode(path string) (os.FileMode, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Mode().Perm(), nil
}
