package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/foliodev/folio/tools"
)

// The command-line edges a new user met (issue 30, item 7), each through
// Run as the binary runs it.

// usageMsg runs args and requires a usage error (exit 2); it returns the
// message.
func usageMsg(t *testing.T, args ...string) string {
	t.Helper()
	_, _, err := run(t, args...)
	ex, ok := err.(ExitError)
	if !ok || ex.Code != 2 {
		t.Fatalf("folio %s: exit %d (%v), want a usage error, exit 2", strings.Join(args, " "), exitCode(err), err)
	}
	return ex.Msg
}

// An unknown flag or command ends with the --help of the command it was
// given to, and names the nearest flag or command when one is close;
// nothing close, no guess.
func TestUnknownFlagsAndCommandsSuggest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args      []string
		want, try string
	}{
		{[]string{"--bogus"}, "unknown flag: --bogus", "folio --help"},
		{[]string{"--resum", "x"}, "(did you mean --resume?)", "folio --help"},
		{[]string{"--modle", "x"}, "(did you mean --model?)", "folio --help"},
		{[]string{"lgo"}, "(did you mean folio log?)", "folio --help"},
		{[]string{"srve"}, "(did you mean folio serve?)", "folio --help"},
		{[]string{"log", "shwo"}, "(did you mean folio log show?)", "folio log --help"},
		{[]string{"log", "ls", "--dat", "x"}, "(did you mean --data?)", "folio log ls --help"},
		{[]string{"log", "export", "--fromat", "log", "x"}, "(did you mean --format?)", "folio log export --help"},
	}
	for _, tt := range tests {
		msg := usageMsg(t, tt.args...)
		if !strings.Contains(msg, tt.want) || !strings.HasSuffix(msg, "\ntry: "+tt.try) {
			t.Errorf("folio %s:\n%s\nwant %q and the try line %q", strings.Join(tt.args, " "), msg, tt.want, tt.try)
		}
	}
	for _, args := range [][]string{{"--bogus"}, {"zzzzzz"}} {
		if msg := usageMsg(t, args...); strings.Contains(msg, "did you mean") {
			t.Errorf("folio %s guesses with nothing close:\n%s", args[0], msg)
		}
	}
}

// An unknown export format is a usage error that lists every format, log
// included, and it is found before the file is looked for: a missing file
// does not turn it into exit 1.
func TestExportFormatIsCheckedBeforeTheFile(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "missing.jsonl")
	for _, args := range [][]string{
		{"log", "export", "--format", "pdf", missing},
		{"log", "export", "--format", "pdf", "20260304-050607-a1b2c3"},
	} {
		msg := usageMsg(t, args...)
		first, _, _ := strings.Cut(msg, "\n")
		want := regexp.MustCompile(`"pdf" \(want ([^)]*)\)`).FindStringSubmatch(first)
		if want == nil {
			t.Fatalf("%v: %q does not name the format and what it wants", args, first)
		}
		for _, f := range []string{"log", "jazz", "markdown"} {
			if !slices.Contains(strings.FieldsFunc(want[1], func(r rune) bool { return r == ',' || r == ' ' }), f) {
				t.Errorf("%v: %q does not list %s", args, first, f)
			}
		}
		if strings.Contains(msg, "missing") || strings.Contains(msg, "no such") {
			t.Errorf("%v: the file is reported before the format:\n%s", args, msg)
		}
	}
}

// validate notes a missing agentId only for a log in Jazz's layout
// (conversations/<agent>/<id>.jsonl); folio writes none, and its own logs,
// by ID or by path, validate without the note.
func TestValidateNotesAgentIDOnlyInJazzLayout(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	saveConversation(t, home, "20261203-074856-935ef7", "notes", "hello", "hi")
	path := filepath.Join(home, "conversations", "20261203-074856-935ef7.jsonl")
	elsewhere := filepath.Join(t.TempDir(), "copy.jsonl")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "agentId") {
		t.Fatalf("folio wrote an agentId; the test needs a log without one:\n%s", b)
	}
	if err := os.WriteFile(elsewhere, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"log", "validate", "--data", home, "20261203-074856-935ef7"},
		{"log", "validate", path},
		{"log", "validate", elsewhere},
	} {
		out, errOut, err := run(t, args...)
		if err != nil || !strings.Contains(out, "valid") {
			t.Fatalf("%v: %v\n%s%s", args, err, out, errOut)
		}
		if strings.Contains(errOut, "agentId") || strings.Contains(errOut, "note:") {
			t.Errorf("%v: a note on a log folio wrote:\n%s", args, errOut)
		}
	}
	jazz := filepath.Join(home, "conversations", "agent-1", "conv-9.jsonl")
	if err := os.MkdirAll(filepath.Dir(jazz), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jazz, b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := run(t, "log", "validate", jazz)
	if err != nil || !strings.Contains(errOut, "note: the header has no agentId") {
		t.Errorf("a Jazz-layout log without agentId gets no note: %v\n%s", err, errOut)
	}
}

// A data folder named on the command line must exist and be a folder;
// only the default one may be missing (nothing was saved yet).
func TestLogListRefusesAMissingDataFolder(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	typo := filepath.Join(dir, "typo")
	for _, args := range [][]string{{"log", "ls", "--data", typo}, {"log", "ls", typo}} {
		if msg := usageMsg(t, args...); !strings.Contains(msg, typo) || !strings.Contains(msg, "no such folder") {
			t.Errorf("%v: %q does not name the missing folder", args, msg)
		}
	}
	if msg := usageMsg(t, "log", "ls", "--data", file); !strings.Contains(msg, file) || !strings.Contains(msg, "not a folder") {
		t.Errorf("a file as --data: %q", msg)
	}
	t.Setenv("FOLIO_DATABASE_URL", "")
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("FOLIO_HOME", filepath.Join(dir, "not-yet"))
	if out, _, err := run(t, "log", "ls"); err != nil || !strings.Contains(out, "no conversations") {
		t.Errorf("the default data folder before anything was saved: %v %q", err, out)
	}
}

// A --model the demo provider cannot honour is said to be ignored, once,
// naming where it came from; the demo's own name, or none, says nothing.
func TestDemoSaysItIgnoresTheModel(t *testing.T) {
	work, data := demoEnv(t)
	_, errOut, err := run(t, "run", "--dir", work, "--data", data, "--model", "gpt-9", "hello")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(errOut, `"gpt-9"`); n != 1 || !strings.Contains(errOut, "(--model) is ignored") {
		t.Errorf("--model gpt-9 with the demo: %d notes\n%s", n, errOut)
	}
	t.Setenv("FOLIO_MODEL", "gpt-9")
	if _, errOut, _ = run(t, "run", "--dir", work, "--data", data, "hello"); !strings.Contains(errOut, `"gpt-9" (env FOLIO_MODEL) is ignored`) {
		t.Errorf("FOLIO_MODEL=gpt-9 with the demo:\n%s", errOut)
	}
	t.Setenv("FOLIO_MODEL", "")
	for _, args := range [][]string{{"--model", "folio-demo"}, nil} {
		a := append([]string{"run", "--dir", work, "--data", data}, args...)
		if _, errOut, _ = run(t, append(a, "hello")...); strings.Contains(errOut, "ignored") {
			t.Errorf("%v: %s", args, errOut)
		}
	}
}

// complete runs cobra's __complete as a shell does and returns the
// candidates (without descriptions) and the directive line.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	out, _, err := run(t, append([]string{"__complete"}, args...)...)
	if err != nil {
		t.Fatalf("__complete %v: %v", args, err)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var got []string
	for _, l := range lines[:len(lines)-1] {
		v, _, _ := strings.Cut(l, "\t")
		got = append(got, v)
	}
	return got, lines[len(lines)-1]
}

// Shell completion completes values: conversation IDs (newest first, with
// their titles) for --resume and each log command's FILE|ID, the export
// formats, the providers with the config file's sections, and the
// configured models; every shell's script is generated.
func TestCompletionsCompleteValues(t *testing.T) {
	home := modelsEnv(t, map[string]string{"ROUTER_KEY": "k"})
	t.Setenv("FOLIO_DATABASE_URL", "")
	if err := os.WriteFile(filepath.Join(home, "config.json"), []byte(`{"providers":{
		"router":{"type":"openai","baseURL":"http://127.0.0.1:9/v1","model":"meta/llama-9","apiKeyEnv":"ROUTER_KEY"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	saveConversation(t, home, "20261201-080000-aaaaaa", "older", "q", "a")
	saveConversation(t, home, "20261203-074856-935ef7", "newer", "q", "a")
	ids := []string{"20261203-074856-935ef7", "20261201-080000-aaaaaa"}

	for _, args := range [][]string{
		{"--resume", ""}, {"--classic", "--resume", ""}, {"log", "show", ""}, {"log", "validate", ""},
		{"log", "repair", ""}, {"log", "upgrade", ""}, {"log", "compact", ""}, {"log", "export", "--format", "log", ""},
	} {
		if got, _ := complete(t, args...); !slices.Equal(got, ids) {
			t.Errorf("folio %s<TAB> = %q, want the IDs newest first %q", strings.Join(args, " "), got, ids)
		}
	}
	if got, _ := complete(t, "--resume", "20261201"); !slices.Equal(got, ids[1:]) {
		t.Errorf("--resume 20261201<TAB> = %q", got)
	}
	out, _, _ := run(t, "__complete", "--resume", "")
	if !strings.Contains(out, "20261203-074856-935ef7\tnewer") {
		t.Errorf("an ID is not described by its title:\n%s", out)
	}
	// --data elsewhere completes that folder's IDs.
	other := t.TempDir()
	saveConversation(t, other, "20261202-000000-bbbbbb", "there", "q", "a")
	if got, _ := complete(t, "log", "show", "--data", other, ""); !slices.Equal(got, []string{"20261202-000000-bbbbbb"}) {
		t.Errorf("log show --data DIR <TAB> = %q", got)
	}
	if got, _ := complete(t, "log", "export", "--format", ""); !sameSet(got, []string{"log", "jazz", "markdown"}) {
		t.Errorf("--format<TAB> = %q", got)
	}
	if got, _ := complete(t, "--provider", ""); !sameSet(got, []string{"demo", "openai", "anthropic", "router"}) {
		t.Errorf("--provider<TAB> = %q", got)
	}
	for _, args := range [][]string{{"--model", ""}, {"run", "--model", ""}, {"serve", "--model", ""}} {
		if got, _ := complete(t, args...); !slices.Contains(got, "meta/llama-9") || !slices.Contains(got, "folio-demo") {
			t.Errorf("folio %s<TAB> = %q, want the configured models", strings.Join(args, " "), got)
		}
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		script, _, err := run(t, "completion", shell)
		if err != nil || !strings.Contains(script, "__complete") || !strings.Contains(script, "folio") {
			t.Errorf("completion %s: %v\n%.300s", shell, err, script)
		}
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// Every command's --allow help names the built-in tools that ask for
// approval, from the one registry: edit_file was once left out.
func TestAllowHelpListsTheRegistrysTools(t *testing.T) {
	t.Parallel()
	set, err := tools.Builtin("", nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, n := range set.Names() {
		if tl, ok := set.Get(n); ok && tl.NeedsApproval() {
			want = append(want, n)
		}
	}
	if !slices.Contains(want, "edit_file") || !slices.Contains(want, "shell") {
		t.Fatalf("the registry's approval tools: %v", want)
	}
	line := regexp.MustCompile(`--allow string\s+(.*)`)
	for _, cmd := range [][]string{nil, {"run"}, {"serve"}} {
		out, _, err := run(t, append(cmd, "--help")...)
		if err != nil {
			t.Fatal(err)
		}
		m := line.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("folio %v --help has no --allow:\n%s", cmd, out)
		}
		if !strings.Contains(m[1], "("+strings.Join(want, ",")+";") {
			t.Errorf("folio %v --help: --allow %q does not list %v", cmd, m[1], want)
		}
	}
}
