package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/tools/toolschema"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

// invoke runs one tool of the built-in set through a real host, the way
// the engine does, and returns the closure record.
func invoke(t *testing.T, ctx context.Context, dir, name, args string) toolview.Record {
	t.Helper()
	set, err := Builtin(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	tool, ok := set.Get(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	h := toolview.New(toolview.WithArtifactDir(filepath.Join(t.TempDir(), "artifacts")), toolview.WithCadence(0))
	t.Cleanup(func() { h.Close() })
	rec, err := h.Run(ctx, toolview.Spec{Tool: name, Producer: set.Manifest()}, []byte(args), tool.Run)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func payloadOf(t *testing.T, p *transcript.Presentation, v any) {
	t.Helper()
	if p == nil {
		t.Fatal("no retained presentation")
	}
	if err := json.Unmarshal(p.Payload, v); err != nil {
		t.Fatal(err)
	}
}

func TestShellOutputExitStatusAndArtifact(t *testing.T) {
	dir := t.TempDir()
	rec := invoke(t, context.Background(), dir, "shell", `{"command":"echo out; echo err >&2; exit 3"}`)
	if rec.Outcome.Status != transcript.ToolFailed || !rec.Result.IsError {
		t.Errorf("outcome %+v", rec.Outcome)
	}
	if !strings.HasPrefix(rec.Result.Text, "exit status 3\n") || !strings.Contains(rec.Result.Text, "out\n") || !strings.Contains(rec.Result.Text, "err\n") {
		t.Errorf("result %q", rec.Result.Text)
	}
	var v toolschema.ShellView
	payloadOf(t, rec.Presentation, &v)
	if v.ExitCode == nil || *v.ExitCode != 3 || v.Output != "out\nerr\n" && v.Output != "err\nout\n" || v.Command == "" {
		t.Errorf("view %+v", v)
	}
	a := rec.Presentation.Artifact
	if a == nil || !a.Final || a.CommittedBytes != 8 || rec.Presentation.Schema != toolschema.Shell {
		t.Errorf("artifact %+v", a)
	}
	ok := invoke(t, context.Background(), dir, "shell", `{"command":"pwd"}`)
	if ok.Outcome.Status != transcript.ToolOK || !strings.Contains(ok.Result.Text, dir) {
		t.Errorf("pwd in %s: %+v", dir, ok.Result)
	}
}

func TestShellLongOutputIsCutInTheMiddle(t *testing.T) {
	rec := invoke(t, context.Background(), t.TempDir(), "shell", `{"command":"seq 1 20000"}`)
	if !strings.Contains(rec.Result.Text, "bytes omitted") || !strings.Contains(rec.Result.Text, "\n1\n") || !strings.HasSuffix(rec.Result.Text, "20000\n") {
		t.Errorf("result head/tail wrong: %d bytes", len(rec.Result.Text))
	}
	if len(rec.Result.Text) > 2*shellResultBytes+200 {
		t.Errorf("result is %d bytes", len(rec.Result.Text))
	}
}

func TestShellTimeoutAndCancelKillTheCommand(t *testing.T) {
	rec := invoke(t, context.Background(), t.TempDir(), "shell", `{"command":"sleep 30 | cat","timeout_ms":100}`)
	if !rec.Result.IsError || !strings.HasPrefix(rec.Result.Text, "timed out") {
		t.Errorf("timeout: %+v", rec.Result)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	rec = invoke(t, ctx, t.TempDir(), "shell", `{"command":"sleep 30; echo never"}`)
	if rec.Outcome.Reason != "canceled" || time.Since(start) > 20*time.Second {
		t.Errorf("cancel: %+v", rec.Outcome)
	}
}

func TestWriteEditReadList(t *testing.T) {
	dir := t.TempDir()
	rec := invoke(t, context.Background(), dir, "write_file", `{"path":"sub/a.txt","content":"one\ntwo\nthree\n"}`)
	if rec.Outcome.Status != transcript.ToolOK {
		t.Fatalf("write: %+v", rec.Result)
	}
	var d toolschema.DiffView
	payloadOf(t, rec.Presentation, &d)
	if d.Path != "sub/a.txt" || strings.Count(d.Diff, "\n+") != 4 || rec.Presentation.Schema != toolschema.Diff || !strings.Contains(rec.Result.Text, "+3") {
		t.Errorf("write diff %+v", d)
	}
	rec = invoke(t, context.Background(), dir, "edit_file", `{"path":"sub/a.txt","old":"two","new":"TWO"}`)
	payloadOf(t, rec.Presentation, &d)
	want := "--- a/sub/a.txt\n+++ b/sub/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
	if d.Diff != want || !strings.Contains(rec.Result.Text, "+1 −1") {
		t.Errorf("edit diff:\n%s\nwant:\n%s", d.Diff, want)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "sub/a.txt")); string(b) != "one\nTWO\nthree\n" {
		t.Errorf("file %q", b)
	}
	rec = invoke(t, context.Background(), dir, "edit_file", `{"path":"sub/a.txt","old":"missing","new":"x"}`)
	if !rec.Result.IsError || !strings.Contains(rec.Result.Text, ErrNoMatch.Error()) {
		t.Errorf("no match: %+v", rec.Result)
	}
	invoke(t, context.Background(), dir, "write_file", `{"path":"b.txt","content":"x x"}`)
	rec = invoke(t, context.Background(), dir, "edit_file", `{"path":"b.txt","old":"x","new":"y"}`)
	if !rec.Result.IsError || !strings.Contains(rec.Result.Text, ErrAmbiguous.Error()) {
		t.Errorf("ambiguous: %+v", rec.Result)
	}
	rec = invoke(t, context.Background(), dir, "read_file", `{"path":"sub/a.txt","offset":2,"limit":1}`)
	if rec.Result.Text != "TWO\n" || rec.Presentation != nil {
		t.Errorf("read %q", rec.Result.Text)
	}
	rec = invoke(t, context.Background(), dir, "list_files", `{}`)
	if rec.Result.Text != "b.txt\nsub/" {
		t.Errorf("list %q", rec.Result.Text)
	}
	rec = invoke(t, context.Background(), dir, "read_file", `{"path":"../secret"}`)
	if !rec.Result.IsError || !strings.Contains(rec.Result.Text, ErrOutsideRoot.Error()) {
		t.Errorf("outside root: %+v", rec.Result)
	}
	// Arguments that break the schema never reach the tool.
	rec = invoke(t, context.Background(), dir, "write_file", `{"path":"c.txt"}`)
	if rec.Outcome.Reason != "invalid_arguments" {
		t.Errorf("schema: %+v", rec.Outcome)
	}
	if _, err := os.Stat(filepath.Join(dir, "c.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Error("a tool ran with invalid arguments")
	}
}

func TestApprovalFlags(t *testing.T) {
	set, _ := Builtin(t.TempDir(), nil)
	for name, want := range map[string]bool{"shell": true, "write_file": true, "edit_file": true, "read_file": false, "list_files": false} {
		tool, _ := set.Get(name)
		if tool.NeedsApproval() != want {
			t.Errorf("%s: NeedsApproval %v", name, !want)
		}
	}
	if _, ok := set.Without("shell").Get("shell"); ok {
		t.Error("Without kept the tool")
	}
}

// applyHunk rebuilds the new text from the old one and a diff of it.
func applyHunk(old, diff string) (string, bool) {
	if diff == "" {
		return old, true
	}
	a := splitLines(old)
	lines := strings.SplitAfter(diff, "\n")
	var start, n int
	if _, err := fmtSscanf(lines[2], &start, &n); err != nil {
		return "", false
	}
	if n == 0 {
		start++ // "-k,0" names the line before an empty range
	}
	var out strings.Builder
	for _, l := range a[:max(start-1, 0)] {
		out.WriteString(l)
	}
	consumed := max(start-1, 0)
	var last byte
	for _, l := range lines[3:] {
		if l == "" {
			continue
		}
		body := l[1:]
		if l[0] == '\\' && last == '-' {
			continue // the marker belongs to a removed line
		}
		last = l[0]
		switch l[0] {
		case ' ':
			out.WriteString(body)
			consumed++
		case '-':
			consumed++
		case '+':
			out.WriteString(body)
		case '\\':
			s := out.String()
			out.Reset()
			out.WriteString(strings.TrimSuffix(s, "\n"))
		}
	}
	for _, l := range a[min(consumed, len(a)):] {
		out.WriteString(l)
	}
	return out.String(), true
}

func FuzzUnifiedDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n")
	f.Add("", "new\n")
	f.Add("x", "x\ny")
	f.Add("one\ntwo", "one\n")
	f.Fuzz(func(t *testing.T, old, new string) {
		d, added, removed := unifiedDiff("p", old, new)
		if old == new {
			if d != "" {
				t.Fatal("diff of equal texts")
			}
			return
		}
		if strings.Count(d, "\n+")-1 != added || strings.Count(d, "\n-") != removed {
			t.Fatalf("counts %d/%d do not match:\n%s", added, removed, d)
		}
		got, ok := applyHunk(old, d)
		if ok && got != new {
			t.Fatalf("applying the diff gives %q, want %q\n%s", got, new, d)
		}
	})
}

type presenting struct{ Tool }

func (presenting) Adapters() []toolview.AdapterDecl {
	return []toolview.AdapterDecl{{Schema: "acme.progress", Version: 2}, {Schema: toolschema.Shell, Version: 1}}
}

// A tool with schemas of its own gets them declared in the set's manifest
// (once each), and With keeps the set's tools before the new ones.
func TestPresenterAdaptersAndWith(t *testing.T) {
	base, err := Builtin(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	extra := presenting{ListFiles{}}
	if _, err := base.With(extra); err == nil {
		t.Fatal("With accepted a second list_files")
	}
	renamed := presenting{renamedTool{ListFiles{}, "acme__list"}}
	set, err := base.With(renamed)
	if err != nil {
		t.Fatal(err)
	}
	names := set.Names()
	if names[len(names)-1] != "acme__list" || len(names) != len(base.Names())+1 {
		t.Fatalf("names %v", names)
	}
	count := func(m *toolview.Manifest, schema string) int {
		n := 0
		for _, a := range m.Adapters {
			if a.Schema == schema {
				n++
			}
		}
		return n
	}
	if count(set.Manifest(), "acme.progress") != 1 || count(base.Manifest(), "acme.progress") != 0 || count(set.Manifest(), toolschema.Shell) != 1 {
		t.Fatalf("adapters %+v", set.Manifest().Adapters)
	}
}

type renamedTool struct {
	Tool
	name string
}

func (r renamedTool) Decl() toolview.ToolDecl {
	d := r.Tool.Decl()
	d.Name = r.name
	return d
}
