package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/provider/providertest"
	"github.com/foliodev/folio/transcript"
)

func demoEnv(t *testing.T) (work, data string) {
	t.Helper()
	for _, k := range []string{"FOLIO_PROVIDER", "FOLIO_BASE_URL", "FOLIO_MODEL", "FOLIO_HOME"} {
		t.Setenv(k, "")
	}
	t.Setenv("FOLIO_DEMO_RATE", "0")
	work, data = t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "README.md"), []byte("# demo workspace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return work, data
}

// folio run drives the demo model through the real engine and tools and
// prints the classic projection; the receipt closes it.
func TestRunPrintsClassicProjection(t *testing.T) {
	work, data := demoEnv(t)
	out, errOut, err := run(t, "run", "--yes", "--dir", work, "--data", data, "--width", "80", "list the files here")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	for _, want := range []string{"› list the files here", "shell", "README.md", "tok/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "demo model") {
		t.Errorf("no demo notice on stderr: %q", errOut)
	}
}

// --json prints the entries; a failed turn exits 1 after printing them,
// with the partial answer and one failure entry.
func TestRunJSONFailureExitStatus(t *testing.T) {
	work, data := demoEnv(t)
	log := filepath.Join(data, "c.jsonl")
	out, _, err := run(t, "run", "--json", "--dir", work, "--data", data, "--log", log, "/demo fail rate-limit")
	var ex ExitError
	if !errors.As(err, &ex) || ex.Code != 1 || !strings.Contains(ex.Msg, "rate_limit") {
		t.Fatalf("got %v, want exit 1 naming the failure", err)
	}
	var res struct {
		State   string `json:"state"`
		Entries []struct {
			Content map[string]any `json:"content"`
		} `json:"entries"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var ks []string
	for _, e := range res.Entries {
		ks = append(ks, e.Content["kind"].(string))
	}
	if res.State != "failed" || ks[0] != "user" || ks[len(ks)-1] != "failure" || !strings.Contains(strings.Join(ks, " "), "agent") {
		t.Errorf("state %s, entries %v", res.State, ks)
	}
	// The log was saved, failure included, and the next run continues it.
	b, err := os.ReadFile(log)
	if err != nil || !strings.Contains(string(b), `"kind":"failure"`) {
		t.Fatalf("log: %v", err)
	}
	out, _, err = run(t, "run", "--json", "--dir", work, "--data", data, "--log", log, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"failure"`) || !strings.Contains(out, `"text":"hello"`) {
		t.Errorf("second run did not continue the log: %s", out)
	}
}

// Without --yes or --allow, a call that needs approval stops the turn:
// nothing was asked, so nothing says the user denied it, and the exit
// status is 1 with what would have allowed the call.
func TestRunNeedsApprovalWithoutYes(t *testing.T) {
	work, data := demoEnv(t)
	out, errOut, err := run(t, "run", "--dir", work, "--data", data, "list the files here")
	var ex ExitError
	if !errors.As(err, &ex) || ex.Code != 1 || ex.Msg != "run: shell needs approval; pass --yes or --allow shell" {
		t.Fatalf("got %v, want exit 1 saying shell needs approval", err)
	}
	if strings.Contains(out+errOut, "the user denied") {
		t.Errorf("folio run claims a user denied the call:\n%s\n%s", out, errOut)
	}
	out, _, err = run(t, "run", "--dir", work, "--data", data, "--allow", "shell", "list the files here")
	if err != nil || !strings.Contains(out, "README.md") {
		t.Fatalf("--allow shell: %v\n%s", err, out)
	}
}

// With no prompt argument, or "-", the prompt comes from standard input.
func TestRunReadsThePromptFromStdin(t *testing.T) {
	work, data := demoEnv(t)
	for _, args := range [][]string{{}, {"-"}} {
		var out, errOut bytes.Buffer
		argv := append([]string{"run", "--yes", "--dir", work, "--data", data}, args...)
		err := Run(context.Background(), argv, strings.NewReader("list the files here\n"), &out, &errOut)
		if err != nil {
			t.Fatalf("%q: %v\n%s", args, err, errOut.String())
		}
		if !strings.Contains(out.String(), "› list the files here") || !strings.Contains(out.String(), "README.md") {
			t.Errorf("%q: the prompt from stdin was not sent:\n%s", args, out.String())
		}
	}
}

// Output nobody can interact with carries no hint about keys: a failure's
// details are printed instead of "expand to show".
func TestRunPrintsNoInteractiveHints(t *testing.T) {
	work, data := demoEnv(t)
	out, _, err := run(t, "run", "--dir", work, "--data", data, "/demo fail rate-limit")
	if exitCode(err) != 1 {
		t.Fatalf("got %v, want exit 1", err)
	}
	if strings.Contains(out, "expand") || strings.Contains(out, "details hidden") {
		t.Errorf("folio run prints an interactive-only hint:\n%s", out)
	}
}

func TestRunUsage(t *testing.T) {
	_, _, err := run(t, "run")
	var ex ExitError
	if !errors.As(err, &ex) || ex.Code != 2 || !strings.Contains(ex.Msg, "try: folio run") {
		t.Fatalf("got %v", err)
	}
}

// An interrupt (the context ending) stops the turn: the partial reply and
// a stopped record are printed, and the exit status says it did not finish.
func TestRunInterruptStopsTheTurn(t *testing.T) {
	work, data := demoEnv(t)
	t.Setenv("FOLIO_DEMO_RATE", "20")
	// In a bubble the demo's streaming and the interrupt use virtual time.
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var out, errOut bytes.Buffer
		time.AfterFunc(10*time.Second, cancel)
		err := Run(ctx, []string{"run", "--json", "--yes", "--dir", work, "--data", data, "write a long essay"}, strings.NewReader(""), &out, &errOut)
		var ex ExitError
		if !errors.As(err, &ex) || ex.Code != 1 || !strings.Contains(ex.Msg, "stopped") {
			t.Fatalf("got %v\n%s", err, errOut.String())
		}
		if !strings.Contains(out.String(), `"kind":"stopped"`) || !strings.Contains(out.String(), `"state":"stopped"`) ||
			!strings.Contains(out.String(), `"kind":"agent"`) {
			t.Errorf("output %s", out.String())
		}
	})
}

// folio run against an OpenAI-compatible server (a loopback one replaying a
// recorded stream), chosen by flags alone.
func TestRunAgainstOpenAICompatibleServer(t *testing.T) {
	work, data := demoEnv(t)
	t.Setenv("OPENAI_API_KEY", "")
	srv := providertest.NewServer(t, providertest.Fixture(t, "../../engine/testdata/openai_answer.sse"))
	out, errOut, err := run(t, "run", "--provider", "openai", "--base-url", srv.URL, "--model", "local-model",
		"--dir", work, "--data", data, "--width", "80", "what is here?")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if !strings.Contains(out, "The folder has a README that says") || strings.Contains(errOut, "demo model") {
		t.Errorf("output %s\nstderr %s", out, errOut)
	}
	if reqs := srv.Requests(); len(reqs) != 1 || !strings.Contains(string(reqs[0]), `"local-model"`) || !strings.Contains(string(reqs[0]), "what is here?") {
		t.Errorf("request %s", reqs)
	}
}

// A retryable failure before any output is retried, and the wait is said on
// standard error while the transcript stays clean.
func TestRunShowsRetryWait(t *testing.T) {
	work, data := demoEnv(t)
	srv := providertest.NewServer(t,
		providertest.Reply{Status: 503, Header: map[string]string{"Content-Type": "application/json", "Retry-After-Ms": "100"},
			Body: []byte(`{"error":{"message":"overloaded","type":"server_error"}}`)},
		providertest.Fixture(t, "../../engine/testdata/openai_answer.sse"))
	out, errOut, err := run(t, "run", "--provider", "openai", "--base-url", srv.URL, "--model", "m",
		"--dir", work, "--data", data, "hello")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if !strings.Contains(errOut, "retrying in") || !strings.Contains(errOut, "attempt 2") {
		t.Errorf("stderr %q", errOut)
	}
	if strings.Contains(out, "retrying") || !strings.Contains(out, "The folder has a README") {
		t.Errorf("output %s", out)
	}
}

// folio run --log continues a long conversation from its end: the engine
// opens the log's tail (the output starts with the line counting the
// entries before it, and lists only the last ones), the model gets the
// prompt, and the log afterwards holds the whole conversation with the
// new turn after it.
func TestRunLogOpensTheTail(t *testing.T) {
	work, data := demoEnv(t)
	dir := filepath.Join(data, "conversations")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "20260101-000000-aaaaaa.jsonl")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gen.Write(f, gen.Options{Messages: 3000, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	before, err := history.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	n := before.Document.Len()
	out, _, err := run(t, "run", "--dir", work, "--data", data, "--log", log, "hello")
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(out, "\n")
	if !strings.HasPrefix(first, "⋯ ") || !strings.Contains(first, " earlier entries") {
		t.Errorf("the output does not start with the earlier entries' line: %q", first)
	}
	if !strings.Contains(out, "› hello") {
		t.Errorf("the turn is not printed:\n%s", out)
	}
	after, err := history.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if after.Document.Len() <= n || len(after.Problems) > 0 {
		t.Fatalf("the log has %d entries (%d problems) after the turn, had %d", after.Document.Len(), len(after.Problems), n)
	}
	for i := range n {
		if after.Document.At(i).ID != before.Document.At(i).ID {
			t.Fatalf("entry %d changed: %s, was %s", i, after.Document.At(i).ID, before.Document.At(i).ID)
		}
	}
	if u, ok := after.Document.At(n).Content.(transcript.User); !ok || u.Text != "hello" {
		t.Errorf("entry %d is %#v, want the prompt", n, after.Document.At(n).Content)
	}
	if !slices.ContainsFunc(after.Messages, func(m message.Message) bool { return m.Role == message.User && m.Content == "hello" }) {
		t.Errorf("the model's messages lack the prompt: %d messages", len(after.Messages))
	}
}
