package export_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/history/export"
	"github.com/foliodev/folio/transcript"
	"github.com/foliodev/folio/tui"
	"github.com/go-json-experiment/json"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/jazz")

// The fixtures in testdata/jazz are logs shaped as Jazz's own code writes
// them (its conversation-log writer, its presentation schema and the
// sample logs of its tests): one per record kind, content kind, report row
// kind, legacy rule and batch rule. A name ending in .bad is a log Jazz
// does not accept whole.
func fixtures(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob("testdata/jazz/*.jsonl")
	if err != nil || len(paths) < 40 {
		t.Fatalf("fixtures: %v (%d found)", err, len(paths))
	}
	return paths
}

func accepted(path string) bool { return !strings.HasSuffix(path, ".bad.jsonl") }

// describe is what a golden file holds: the conversation's title and date,
// every entry in its canonical JSON, every model message as folio writes it
// back, every problem, and the document as folio log show prints it, so
// receipt lines are checked as a person sees them.
func describe(t *testing.T, c *history.Conversation) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("title: " + history.DisplayTitle(c.Title, c.Messages) + "\n")
	if c.UpdatedAt.IsZero() {
		b.WriteString("updated: -\n")
	} else {
		b.WriteString("updated: " + string(transcript.AppendInstant(nil, c.UpdatedAt.UTC())) + "\n")
	}
	if len(c.Header.Missing) > 0 {
		b.WriteString("header lacks: " + strings.Join(c.Header.Missing, ", ") + "\n")
	}
	for _, e := range c.Document.All() {
		j, err := transcript.EncodeEntry(e)
		if err != nil {
			t.Fatalf("entry %s does not encode: %v", e.ID, err)
		}
		b.WriteString("entry " + string(j) + "\n")
	}
	for _, m := range c.Messages {
		j, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("message " + string(j) + "\n")
	}
	for _, p := range c.Problems {
		b.WriteString("problem " + p.Error() + "\n")
	}
	b.WriteString("--- shown\n")
	classic := tui.NewClassic(tui.NewPainter(tui.PlainTheme, tui.ForClassic(), tui.WithLocation(time.UTC)))
	classic.Mount()
	frame := classic.Sync(c.Document, 1, 80, 1<<30)
	for _, l := range append(frame.Print, frame.Live...) {
		b.WriteString(strings.TrimRight(l, " ") + "\n")
	}
	return b.String()
}

func TestJazzFixtures(t *testing.T) {
	t.Parallel()
	for _, path := range fixtures(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := history.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got := describe(t, c)
			golden := strings.TrimSuffix(path, ".jsonl") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s (go test ./history/export -update rewrites it)\n--- got\n%s--- want\n%s", path, golden, got, want)
			}
			if accepted(path) != (len(c.Problems) == 0) {
				t.Errorf("Jazz accepts %s whole: %v; folio found problems %v", name, accepted(path), c.Problems)
			}
		})
	}
}

// TestJazzFixturesUpgrade: upgrading a version 2 fixture changes no
// document or message folio shows, and leaves a log without problems.
func TestJazzFixturesUpgrade(t *testing.T) {
	t.Parallel()
	for _, path := range fixtures(t) {
		before, err := history.ReadFile(path)
		if err != nil || before.Header.Version != 2 {
			continue
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			data, _ := os.ReadFile(path)
			dst := filepath.Join(t.TempDir(), "conv-1.jsonl")
			if err := os.WriteFile(dst, data, 0o600); err != nil {
				t.Fatal(err)
			}
			l, err := history.Open(dst)
			if err != nil {
				t.Fatal(err)
			}
			if res, err := l.Upgrade(); err != nil || !res.Upgraded {
				t.Fatalf("upgrade %+v %v", res, err)
			}
			l.Close()
			after, err := history.ReadFile(dst)
			if err != nil {
				t.Fatal(err)
			}
			if after.Header.Version != 3 {
				t.Fatalf("version %d", after.Header.Version)
			}
			b, a := describe(t, before), describe(t, after)
			if accepted(path) && len(after.Problems) != 0 {
				t.Errorf("upgraded log has problems: %v", after.Problems)
			}
			// Only rejected records' problems may differ in wording; the
			// document and messages may not differ at all.
			if !accepted(path) {
				b, a = stripProblems(b), stripProblems(a)
			}
			if b != a {
				t.Errorf("upgrade changed what folio shows:\n--- before\n%s--- after\n%s", b, a)
			}
			// Every record keeps its at as written, readable or not.
			up, _ := os.ReadFile(dst)
			oldLines, newLines := bytes.Split(data, []byte("\n")), bytes.Split(up, []byte("\n"))
			if len(oldLines) != len(newLines) {
				t.Fatalf("upgrade moved lines: %d → %d", len(oldLines), len(newLines))
			}
			for i := 1; i < len(oldLines); i++ {
				var o, n struct {
					At *string `json:"at"`
				}
				if json.Unmarshal(oldLines[i], &o) != nil || o.At == nil {
					continue
				}
				if json.Unmarshal(newLines[i], &n) != nil || n.At == nil || *n.At != *o.At {
					t.Errorf("line %d: at %q became %s", i+1, *o.At, newLines[i])
				}
			}
		})
	}
}

func stripProblems(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "problem ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestJazzRoundTrip: a Jazz log read by folio, put in folio's store, saved
// by folio's writer, exported with --format jazz and read again gives the
// same entries and messages. Two ways into folio's log: resuming the Jazz
// log where Jazz keeps it (folio's writer then appends to it, upgrading a
// version 2 log first), and saving into a new folio log.
func TestJazzRoundTrip(t *testing.T) {
	t.Parallel()
	for _, path := range fixtures(t) {
		if !accepted(path) {
			continue
		}
		for _, fresh := range []bool{false, true} {
			name := filepath.Base(path) + map[bool]string{false: "/resumed", true: "/new-log"}[fresh]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				if fresh && strings.Contains(path, "record-ui-transcript-empty") {
					// folio's writer saves an empty document with messages
					// as a message-only log, which reads back derived; only
					// a log that already holds UI records keeps it empty.
					t.Skip("known gap: a new folio log cannot say its screen was cleared")
				}
				roundTrip(t, path, fresh)
			})
		}
	}
}

func roundTrip(t *testing.T, path string, fresh bool) {
	c, err := history.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	logPath := filepath.Join(history.ConversationsDir(data), "agent-1", "conv-1.jsonl")
	if fresh {
		logPath, _ = history.Path(data, "conv-1")
	} else {
		raw, _ := os.ReadFile(path)
		os.MkdirAll(filepath.Dir(logPath), 0o700)
		if err := os.WriteFile(logPath, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		if got, _ := history.Locate(data, "conv-1"); got != logPath {
			t.Fatalf("Locate found %q, want Jazz's %q", got, logPath)
		}
	}
	os.MkdirAll(filepath.Dir(logPath), 0o700)
	l, err := history.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := c.Document
	if !fresh {
		loaded, err := l.Load()
		if err != nil {
			t.Fatal(err)
		}
		doc = loaded.Document
	}
	store := transcript.NewStore(transcript.WithDocument(doc))
	if err := l.Save(store.Snapshot().Document, c.Messages); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, err := os.Stat(logPath); err != nil {
		if c.Document.Len() == 0 && len(c.Messages) == 0 {
			return // nothing to write, nothing written
		}
		t.Fatal(err)
	}
	saved, err := history.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	mapped, err := export.Write(&out, saved, "jazz", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(mapped) != 0 {
		t.Errorf("a Jazz log needed mapping: %v", mapped)
	}
	back, err := history.Read(&out)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Problems) != 0 || len(back.Header.Missing) != 0 {
		t.Fatalf("exported log: problems %v, header lacks %v\n%s", back.Problems, back.Header.Missing, out.String())
	}
	if g, w := entriesAndMessages(t, back), entriesAndMessages(t, c); g != w {
		t.Errorf("round trip changed the conversation:\n--- got\n%s--- want\n%s", g, w)
	}
}

func entriesAndMessages(t *testing.T, c *history.Conversation) string {
	var b strings.Builder
	for _, line := range strings.Split(describe(t, c), "\n") {
		if strings.HasPrefix(line, "entry ") || strings.HasPrefix(line, "message ") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}
