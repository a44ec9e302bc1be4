package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/receipt"
	"github.com/foliodev/folio/transcript"
)

var logT0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }

var testReceipt = transcript.TurnReceipt{
	FinishedAt: i64(logT0.UnixMilli()),
	Steps: []transcript.Step{{DurationMs: 1500, PromptTokens: i64(1200), CompletionTokens: i64(90),
		TotalTokens: i64(1290), GenerationDurationMs: f64(900)}},
}

// writeTestLog saves a small conversation with a receipt through the real
// writer and returns its path.
func writeTestLog(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "conversations", "c1.jsonl")
	l, err := history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	es := []transcript.Entry{
		{ID: "u1", Content: transcript.User{Text: "what is in the box?"}, Timestamp: logT0},
		{ID: "a1", Content: transcript.Agent{Markdown: "A small **cat**."}, Timestamp: logT0},
		{ID: "r1", Content: testReceipt, Timestamp: logT0},
	}
	msgs := []message.Message{message.Text(message.User, "what is in the box?"), message.Text(message.Assistant, "A small cat.")}
	if err := l.SaveEntries(es, msgs); err != nil {
		t.Fatal(err)
	}
	if err := l.SetTitle("The box"); err != nil {
		t.Fatal(err)
	}
	return path
}

func appendLine(t *testing.T, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}

func exitCode(err error) int {
	var ex ExitError
	if err == nil {
		return 0
	}
	if errors.As(err, &ex) {
		return ex.Code
	}
	return -1
}

func TestLogShowPlainText(t *testing.T) {
	path := writeTestLog(t, t.TempDir())
	out, _, err := run(t, "log", "show", "--width", "200", path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("plain output has escape sequences: %q", out)
	}
	for _, want := range []string{"what is in the box?", "cat", receipt.Line(testReceipt, time.Local)} {
		if !strings.Contains(out, want) {
			t.Errorf("show output lacks %q:\n%s", want, out)
		}
	}
}

func TestLogShowJSON(t *testing.T) {
	path := writeTestLog(t, t.TempDir())
	appendLine(t, path, `{"type":"ui-append","at":"2026-03-04T05:06:08.000Z","entries":[{"id":"n","content":{"kind":"notice","text":"x","tone":"loud"},"timestamp":"2026-03-04T05:06:07.000Z"}]}`)
	out, errOut, err := run(t, "log", "show", path, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		ConversationID string           `json:"conversationId"`
		Version        int              `json:"version"`
		Entries        []map[string]any `json:"entries"`
		Messages       []map[string]any `json:"messages"`
		Rejected       []map[string]any `json:"rejected"`
	}
	if err := json.Unmarshal([]byte(out), &got, json.RejectUnknownMembers(true)); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.ConversationID != "c1" || got.Version != 3 || len(got.Entries) != 3 || len(got.Messages) != 2 || len(got.Rejected) != 1 {
		t.Fatalf("%+v", got)
	}
	if r := got.Rejected[0]; r["pointer"] != "/entries/0/content/tone" || r["line"] != float64(6) || r["type"] != "ui-append" {
		t.Errorf("rejected %v", r)
	}
	if got.Entries[0]["id"] != "u1" {
		t.Errorf("entry 0 %v", got.Entries[0])
	}
	_ = errOut
}

func TestLogValidate(t *testing.T) {
	path := writeTestLog(t, t.TempDir())
	out, _, err := run(t, "log", "validate", path)
	if err != nil || !strings.Contains(out, "valid") {
		t.Fatalf("valid log: %q %v", out, err)
	}
	appendLine(t, path, `{"type":"ui-append","at":"2026-03-04T05:06:08.000Z","entries":[{"id":"ok","content":{"kind":"user","text":"x"},"timestamp":"2026-03-04T05:06:07.000Z"},{"id":"n","content":{"kind":"notice","text":"x","tone":"loud"},"timestamp":"2026-03-04T05:06:07.000Z"}]}`)
	appendLine(t, path, `garbage`)
	out, _, err = run(t, "log", "validate", path)
	if exitCode(err) != 1 {
		t.Fatalf("invalid log: exit %d (%v)", exitCode(err), err)
	}
	for _, want := range []string{path + ":6 (ui-append) entry 1 at /entries/1/content/tone: ", path + ":7: not a JSON record"} {
		if !strings.Contains(out, want) {
			t.Errorf("validate output lacks %q:\n%s", want, out)
		}
	}
}

func TestLogUpgradeAndCompact(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "old.jsonl")
	v2 := `{"type":"conversation","version":2,"conversationId":"old","startedAt":"2026-01-01"}
{"type":"message","at":"2026-01-01","message":{"role":"user","content":"hi"}}
{"type":"ui-transcript","at":"2026-01-01","entries":[{"type":"user","message":"hi"}]}
{"type":"ui-transcript","at":"2026-01-02","entries":[{"type":"user","message":"hi"},{"type":"info","message":"\u001b[2mok\u001b[0m"}]}
`
	if err := os.WriteFile(path, []byte(v2), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "log", "upgrade", path)
	if err != nil || !strings.Contains(out, "upgraded "+path+" from version 2 to 3: 2 UI record(s) rewritten") {
		t.Fatalf("upgrade: %q %v", out, err)
	}
	out, _, err = run(t, "log", "upgrade", path)
	if err != nil || !strings.Contains(out, "already version 3") {
		t.Fatalf("second upgrade: %q %v", out, err)
	}
	out, _, err = run(t, "log", "compact", path)
	if err != nil || !strings.Contains(out, "dropped 1 superseded UI record(s)") {
		t.Fatalf("compact: %q %v", out, err)
	}
	out, _, err = run(t, "log", "compact", path)
	if err != nil || !strings.Contains(out, "nothing to compact") {
		t.Fatalf("second compact: %q %v", out, err)
	}
	out, _, err = run(t, "log", "show", "--json", path)
	if err != nil || !strings.Contains(out, `"id":"legacy:3:1"`) || !strings.Contains(out, `"text":"ok"`) {
		t.Fatalf("after compaction: %q %v", out, err)
	}
}

func TestLogRefusals(t *testing.T) {
	dir := t.TempDir()
	newer := filepath.Join(dir, "newer.jsonl")
	data := []byte(`{"type":"conversation","version":5,"conversationId":"n","startedAt":"2030-01-01T00:00:00.000Z"}` + "\n")
	if err := os.WriteFile(newer, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"show", "validate", "upgrade", "compact"} {
		_, _, err := run(t, "log", cmd, newer)
		if exitCode(err) != 1 || !strings.Contains(err.Error(), "newer folio") {
			t.Errorf("%s on a newer log: %v", cmd, err)
		}
	}
	if b, _ := os.ReadFile(newer); string(b) != string(data) {
		t.Error("a refused command changed the newer log")
	}

	path := writeTestLog(t, dir)
	l, err := history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = run(t, "log", "compact", path)
	l.Close()
	if exitCode(err) != 1 || !strings.Contains(err.Error(), fmt.Sprint(os.Getpid())) {
		t.Errorf("compact of a locked log: %v", err)
	}
}

func TestLogUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"log"}, {"log", "frobnicate"}, {"log", "show"}, {"log", "show", "a", "b"},
		{"log", "show", "--bogus", "a"}, {"log", "ls", "a", "b"}, {"log", "ls", "--data", "a", "b"},
	} {
		_, _, err := run(t, args...)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), "try: ") {
			t.Errorf("%v: exit %d %v, want a usage error", args, exitCode(err), err)
		}
	}
}

func TestLogList(t *testing.T) {
	dir := t.TempDir()
	writeTestLog(t, dir)
	out, _, err := run(t, "log", "ls", "--data", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "ID") || !strings.Contains(out, "c1") || !strings.Contains(out, "The box") || !strings.Contains(out, " 3 ") {
		t.Fatalf("ls:\n%s", out)
	}
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o700); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, "log", "ls", "--data", filepath.Join(dir, "empty"))
	if err != nil || !strings.Contains(out, "no conversations") {
		t.Fatalf("empty ls: %q %v", out, err)
	}
}
