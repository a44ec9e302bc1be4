package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// jazzFixtures are the logs shaped as Jazz writes them, kept with the
// export package's tests.
func jazzFixtures(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob("../../history/export/testdata/jazz/*.jsonl")
	if err != nil || len(paths) < 40 {
		t.Fatalf("fixtures: %v (%d)", err, len(paths))
	}
	return paths
}

// TestLogValidateJazzFixtures: validate exits 0 on every log Jazz accepts
// whole, and on a log Jazz does not, exits 1 naming line and pointer.
func TestLogValidateJazzFixtures(t *testing.T) {
	t.Parallel()
	for _, path := range jazzFixtures(t) {
		out, _, err := run(t, "log", "validate", path)
		if strings.HasSuffix(path, ".bad.jsonl") {
			if exitCode(err) != 1 || !strings.Contains(out, ".bad.jsonl:") || !strings.Contains(out, " at /") && !strings.Contains(out, "kept verbatim") {
				t.Errorf("%s: exit %d, out %q", path, exitCode(err), out)
			}
			continue
		}
		if exitCode(err) != 0 {
			t.Errorf("%s: exit %d: %v\n%s", filepath.Base(path), exitCode(err), err, out)
		}
	}
}

// TestLogUpgradeKeepsJazzHeaderValid: a version 2 header with members folio
// does not know (Jazz wrote cwd) still validates after folio log upgrade,
// with the member kept and the unreadable at kept as written.
func TestLogUpgradeKeepsJazzHeaderValid(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../../history/export/testdata/jazz/legacy-header-cwd.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "conv-1.jsonl")
	os.WriteFile(path, src, 0o600)
	if _, _, err := run(t, "log", "upgrade", path); err != nil {
		t.Fatal(err)
	}
	if out, _, err := run(t, "log", "validate", path); err != nil {
		t.Fatalf("validate after upgrade: %v\n%s", err, out)
	}
	up, _ := os.ReadFile(path)
	lines := strings.Split(string(up), "\n")
	if !strings.Contains(lines[0], `"version":3`) || !strings.Contains(lines[0], `"cwd":"/home/me/project"`) ||
		!strings.Contains(lines[3], `"at":"yesterday"`) {
		t.Fatalf("upgraded log:\n%s", up)
	}
}

// folioOnlyLog is a log with every folio-only kind and field Jazz's schema
// has no room for.
func folioOnlyLog(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "conversations", "c1.jsonl")
	l, err := history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	e := func(id string, c transcript.Content) transcript.Entry {
		return transcript.Entry{ID: id, Content: c, Timestamp: logT0}
	}
	doc, err := transcript.NewDocument("c1", []transcript.Entry{
		e("u1", transcript.User{Text: "read the readme"}),
		e("t1", transcript.Tool{Receipt: transcript.ToolReceipt{App: "read_file", Summary: "README.md", Status: transcript.ToolOK, DurationMs: f64(12)},
			InvocationID: "inv-1", Presentation: &transcript.Presentation{Schema: "file.view", Version: 1, Revision: 2, Payload: transcript.RawJSON(`{"lines":3}`)}}),
		e("s1", transcript.Steering{Text: "only the first line", CommandID: "cmd-1"}),
		e("f1", transcript.Failure{Reason: "rate_limit", Headline: "Slow down", Retryable: true}),
		e("c1", transcript.Compaction{Summary: "they read the readme", Covers: transcript.CompactionRange{FromID: "u1", ToID: "t1"}}),
		e("r1", transcript.TurnReceipt{Steps: []transcript.Step{{DurationMs: 900, CompletionTokens: i64(9), GenerationDurationMs: f64(300), TimeToFirstTokenMs: f64(120)}}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []message.Message{message.Text(message.User, "read the readme"),
		{Role: message.Assistant, ToolCalls: []message.ToolCall{{ID: "call_1", Name: "read_file", Arguments: []byte(`{"path":"README.md"}`)}}},
		{Role: message.Tool, ToolCallID: "call_1", Name: "read_file", Content: "# hi", IsError: true}}
	if err := l.Save(doc, msgs); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLogExportJazzMapsFolioOnlyKinds(t *testing.T) {
	t.Parallel()
	path := folioOnlyLog(t, t.TempDir())
	out, errOut, err := run(t, "log", "export", "--format", "jazz", path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := history.Read(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Problems) != 0 || c.Header.AgentID != "folio" || len(c.Header.Missing) != 0 {
		t.Fatalf("exported header %+v problems %v\n%s", c.Header, c.Problems, out)
	}
	jazzKinds := map[transcript.Kind]bool{"user": true, "agent": true, "reasoning": true, "tool": true, "notice": true,
		"report": true, "header": true, "turn-receipt": true, "stopped": true, "expanded": true}
	var kinds []string
	for _, e := range c.Document.All() {
		if !jazzKinds[e.Content.Kind()] {
			t.Errorf("entry %s has folio-only kind %s", e.ID, e.Content.Kind())
		}
		kinds = append(kinds, e.ID+"="+string(e.Content.Kind()))
	}
	want := "u1=user t1=tool t1:folio=notice s1=user f1=notice c1=notice r1=turn-receipt r1:folio=notice"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("entries %s\nwant    %s", got, want)
	}
	for _, banned := range []string{`"invocationId"`, `"presentation":{`, `"timeToFirstTokenMs"`, `"toolCalls"`, `"toolCallId"`} {
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, `"type":"ui-append"`) && strings.Contains(line, banned) && !strings.Contains(line, `"kind":"notice"`) {
				t.Errorf("exported entry still carries %s: %s", banned, line)
			}
		}
	}
	if !strings.Contains(out, `"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"README.md\"}"}}]`) ||
		!strings.Contains(out, `"tool_call_id":"call_1"`) {
		t.Errorf("messages not in Jazz's spelling:\n%s", out)
	}
	for _, w := range []string{"entry t1: tool invocationId", "entry s1: steering", "entry f1: failure", "entry c1: compaction",
		"entry r1: steps' timeToFirstTokenMs", "message 2: isError"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}
}

func TestLogExportMarkdown(t *testing.T) {
	t.Parallel()
	path := folioOnlyLog(t, t.TempDir())
	out, _, err := run(t, "log", "export", "--format", "markdown", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"# read the readme", "**You**\n\n> read the readme", "- ✓ `read_file` README.md · 0.0s",
		"> **Slow down** (rate_limit)", "_0.9s · 0 in → 9 out · 30.0 tok/s"} {
		if !strings.Contains(out, w) {
			t.Errorf("markdown lacks %q:\n%s", w, out)
		}
	}
	if _, _, err := run(t, "log", "export", "--format", "pdf", path); exitCode(err) != 2 {
		t.Errorf("unknown format: exit %d", exitCode(err))
	}
	if _, _, err := run(t, "log", "export", path); exitCode(err) != 2 {
		t.Errorf("missing format: exit %d", exitCode(err))
	}
}

// TestLogListFindsJazzLayout: ls lists Jazz's conversations/<agent>/<id>.jsonl
// beside folio's flat logs, titles an untitled log by its first user message
// and invents no date for a header-only log.
func TestLogListFindsJazzLayout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jazz := filepath.Join(dir, "conversations", "agent-1")
	os.MkdirAll(jazz, 0o700)
	src, _ := os.ReadFile("../../history/export/testdata/jazz/message-tool-use.jsonl")
	os.WriteFile(filepath.Join(jazz, "conv-1.jsonl"), src, 0o600)
	os.WriteFile(filepath.Join(jazz, "conv-2.jsonl"), []byte(`{"type":"conversation","version":3,"agentId":"agent-1","conversationId":"conv-2","startedAt":"2026-08-01T10:00:00.000Z"}`+"\n"), 0o600)
	folioOnlyLog(t, dir)
	out, _, err := run(t, "log", "ls", "--data", dir)
	if err != nil {
		t.Fatal(err)
	}
	if again, _, err := run(t, "log", "ls", dir); err != nil || again != out {
		t.Fatalf("ls DIR differs from ls --data DIR: %v\n%s", err, again)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.Contains(out, "conv-1") || !strings.Contains(out, "plan the trip") || !strings.Contains(out, "c1") {
		t.Fatalf("ls:\n%s", out)
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "conv-2") && (!strings.HasSuffix(strings.TrimSpace(l), "-") || strings.Contains(l, "0001-01-01")) {
			t.Errorf("header-only log shows a date: %q", l)
		}
	}
	if p, _ := history.Locate(dir, "conv-1"); p != filepath.Join(jazz, "conv-1.jsonl") {
		t.Errorf("Locate = %q", p)
	}
}
