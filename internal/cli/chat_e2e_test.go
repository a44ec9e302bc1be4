package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// requireSuites reports whether a missing tool must fail the test rather
// than skip it: in CI, or when FOLIO_REQUIRE_SUITES=1.
func requireSuites() bool {
	return os.Getenv("CI") == "true" || os.Getenv("FOLIO_REQUIRE_SUITES") == "1"
}

// tmux runs a tmux command on the test's own server socket.
type tmux struct {
	t      *testing.T
	socket string
}

func (x tmux) run(args ...string) string {
	x.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", x.socket}, args...)...).CombinedOutput()
	if err != nil {
		x.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// pane returns the visible pane as text.
func (x tmux) pane() string { return x.run("capture-pane", "-p", "-t", "chat") }

// waitPane polls the pane until cond holds, for at most limit: the binary
// runs in its own process, so polling its screen is the only way to see it.
func (x tmux) waitPane(what string, limit time.Duration, cond func(string) bool) string {
	x.t.Helper()
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		p := x.pane()
		if cond(p) {
			return p
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("waited %s for %s; the pane shows:\n%s", limit, what, p)
		}
		<-tick.C
	}
}

// The real binary under tmux: `folio` with no subcommand on a terminal is
// the fullscreen chat; a prompt sent with keys gets the demo model's
// answer, once, the turn receipt and the demo notice, and the
// conversation is saved.
func TestChatEndToEndInTmux(t *testing.T) {
	x, home := startChatInTmux(t)
	x.waitPane("the chat to start", 30*time.Second, func(p string) bool { return strings.Contains(p, "ready") })
	x.run("send-keys", "-t", "chat", "-l", "hello folio")
	x.run("send-keys", "-t", "chat", "Enter")
	pane := x.waitPane("the turn receipt", 60*time.Second, func(p string) bool { return strings.Contains(p, "tok/s") })

	for _, want := range []string{"› hello folio", "tok/s", "demo model", "docs/providers.md", "ready · folio-demo"} {
		if !strings.Contains(pane, want) {
			t.Errorf("the pane lacks %q:\n%s", want, pane)
		}
	}
	answer := "To use a real model, configure a provider and start folio again"
	if n := strings.Count(pane, answer); n != 1 {
		t.Errorf("the answer's line is on the pane %d times, want once:\n%s", n, pane)
	}

	x.run("send-keys", "-t", "chat", "C-c")
	x.waitPane("folio to exit", 30*time.Second, func(string) bool {
		return strings.TrimSpace(x.run("list-panes", "-t", "chat", "-F", "#{pane_dead}")) == "1"
	})
	list, err := history.List(home)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Title != "hello folio" || list[0].Entries < 3 {
		t.Fatalf("the conversation was not saved with its title and entries: %+v", list)
	}
	if l := locks(t, home); len(l) > 0 {
		t.Errorf("lock files left after the chat quit: %v", l)
	}
	// Quitting says how to come back, with the ID folio log ls lists.
	hint := "Resume this conversation with: folio --resume " + conversationID(list[0])
	if pane := x.run("capture-pane", "-p", "-J", "-S", "-", "-t", "chat"); !strings.Contains(pane, hint) {
		t.Errorf("no resume hint %q after quitting:\n%s", hint, pane)
	}
}

// needTmux returns the path of tmux. Where it is not installed the test is
// skipped, except where suites are required (CI=true or
// FOLIO_REQUIRE_SUITES=1): there it fails.
func needTmux(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("tmux")
	if err != nil {
		if requireSuites() {
			t.Fatal("tmux is required here (CI=true or FOLIO_REQUIRE_SUITES=1) but is not installed")
		}
		t.Skip("tmux is not installed; the terminal tests need it (apt-get install tmux)")
	}
	return p
}

// shortTempDir is a temporary folder removed when the test ends, with a
// path short enough for a Unix socket in it (t.TempDir's are not).
func shortTempDir(t *testing.T, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// startChatInTmux builds folio and runs "folio" with args in a 100×30 tmux
// pane on the demo model, with a data folder of its own (home).
func startChatInTmux(t *testing.T, args ...string) (x tmux, home string) {
	t.Helper()
	return startChatInTmuxAt(t, "", args...)
}

// startChatInTmuxAt is startChatInTmux over the data folder home (a new
// one when empty).
func startChatInTmuxAt(t *testing.T, home string, args ...string) (x tmux, _ string) {
	t.Helper()
	return startChat(t, home, nil, args...)
}

// startChatInTmuxWith is startChatInTmux with prepare called on the data
// folder (created empty) before folio starts, to write a config file.
func startChatInTmuxWith(t *testing.T, prepare func(home string), args ...string) (x tmux, home string) {
	t.Helper()
	return startChat(t, "", prepare, args...)
}

func startChat(t *testing.T, home string, prepare func(home string), args ...string) (x tmux, _ string) {
	t.Helper()
	return startChatEnv(t, home, prepare, nil, args...)
}

// startChatEnv is startChat with env (NAME=value) set in folio's
// environment after the test's own settings.
func startChatEnv(t *testing.T, home string, prepare func(home string), env []string, args ...string) (x tmux, _ string) {
	t.Helper()
	needTmux(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "folio")
	build := exec.Command("go", "build", "-o", bin, "github.com/foliodev/folio/cmd/folio")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if home == "" {
		home = filepath.Join(dir, "home")
	}
	if prepare != nil {
		if err := os.MkdirAll(home, 0o700); err != nil {
			t.Fatal(err)
		}
		prepare(home)
	}
	x = tmux{t: t, socket: filepath.Join(dir, "tmux.sock")}
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", x.socket, "kill-server").Run() })
	cmd := strings.Join(append([]string{bin}, args...), " ")
	newSession := []string{"-f", "/dev/null", "new-session", "-d", "-s", "chat", "-x", "100", "-y", "30",
		"-e", "FOLIO_HOME=" + home, "-e", "FOLIO_DEMO_RATE=2000", "-e", "TERM=xterm-256color",
		"-e", "FOLIO_PROVIDER=", "-e", "FOLIO_MODEL=", "-e", "FOLIO_BASE_URL=", "-e", "FOLIO_MOUSE="}
	for _, e := range env {
		newSession = append(newSession, "-e", e)
	}
	x.run(append(newSession, "-c", dir, "sh", "-c", cmd+" 2>"+filepath.Join(dir, "stderr.txt"))...)
	// Keep the pane after folio exits, so its last screen can be read.
	x.run("set-option", "-t", "chat", "remain-on-exit", "on")
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "stderr.txt"))
			t.Logf("folio's standard error:\n%s", b)
		}
	})
	return x, home
}

// The classic view in tmux: after a turn and a series of width changes,
// tmux's scrollback and screen together hold the chrome (editor, footer,
// notice) once and the answer once. Redrawing the live region must never
// leave a copy of it behind: tmux copies the whole screen into its
// scrollback when it is erased from the top-left corner, which is where a
// live region that starts on the top row is erased from.
func TestChatClassicInTmux(t *testing.T) {
	x, _ := startChatInTmux(t, "chat", "--classic")
	x.waitPane("the chat to start", 30*time.Second, func(p string) bool { return strings.Contains(p, "ready") })
	x.run("send-keys", "-t", "chat", "-l", "hello folio")
	x.run("send-keys", "-t", "chat", "Enter")
	x.waitPane("the turn receipt", 60*time.Second, func(p string) bool { return strings.Contains(p, "tok/s") })
	for _, w := range []int{70, 120, 60, 100} {
		x.run("resize-window", "-t", "chat", "-x", strconv.Itoa(w))
		// The view draws at one column short of the edge: its rule shows
		// the width it drew at.
		rule := strings.Repeat("─", w-1)
		x.waitPane(fmt.Sprintf("a redraw at width %d", w), 30*time.Second, func(p string) bool {
			for _, l := range strings.Split(p, "\n") {
				if strings.TrimSpace(l) == rule {
					return true
				}
			}
			return false
		})
	}
	// -J joins lines tmux wrapped, so a line counts once at any width.
	all := x.run("capture-pane", "-p", "-J", "-S", "-", "-t", "chat")
	for _, want := range []string{"Message folio", "○ ready · folio-demo", "demo model —", "› hello folio", "tok/s", "To use a real model, configure a provider"} {
		if n := strings.Count(all, want); n != 1 {
			t.Errorf("scrollback and screen hold %q %d times, want once:\n%s", want, n, all)
		}
	}
}

// Without a terminal, folio with no subcommand prints help instead of
// starting the chat, so a pipe or a CI log gets something useful.
func TestNoCommandWithoutTerminalPrintsHelp(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := Run(context.Background(), nil, strings.NewReader(""), &out, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Usage:") || !strings.Contains(out.String(), "chat") {
		t.Fatalf("folio without a terminal printed:\n%s", out.String())
	}
	err := Run(context.Background(), []string{"chat"}, strings.NewReader(""), &out, &out)
	if ex, ok := err.(ExitError); !ok || ex.Code != 2 || !strings.Contains(ex.Msg, "needs a terminal") {
		t.Fatalf("folio chat without a terminal: %v, want a usage error saying it needs a terminal", err)
	}
}

// --resume takes an optional ID in every GNU spelling; alone it asks for
// the picker.
func TestChatResumeFlag(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args    []string
		classic bool
		resume  bool
		id      string
	}{
		{[]string{"--classic"}, true, false, ""},
		{[]string{"--resume"}, false, true, ""},
		{[]string{"--resume", "abc", "--classic"}, true, true, "abc"},
		{[]string{"--resume", "--classic"}, true, true, ""},
		{[]string{"--resume=xyz"}, false, true, "xyz"},
		{[]string{"--classic", "--resume", "abc"}, true, true, "abc"},
	}
	for _, tt := range tests {
		var got *chatFlags
		cmd := chatCmd(IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}, true,
			func(_ *cobra.Command, f *chatFlags, _ IO) error { got = f; return nil })
		cmd.SetArgs(tt.args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		if got.classic != tt.classic || got.resume.set != tt.resume || got.resume.id != tt.id {
			t.Errorf("%q: classic %v resume %v id %q; want %v %v %q", tt.args, got.classic, got.resume.set, got.resume.id, tt.classic, tt.resume, tt.id)
		}
	}
}

// With an approval pending, typing a sentence holding y, a and n approves
// nothing: the sentence is a draft in the composer and the call still
// waits. Only ctrl+g then n answers (a denial here).
func TestTypingNeverApprovesInTmux(t *testing.T) {
	x, home := startChatInTmux(t)
	x.waitPane("the chat to start", 30*time.Second, func(p string) bool { return strings.Contains(p, "ready") })
	x.run("send-keys", "-t", "chat", "-l", "list the files with the shell tool")
	x.run("send-keys", "-t", "chat", "Enter")
	x.waitPane("the approval prompt", 60*time.Second, func(p string) bool { return strings.Contains(p, "wants to run") })
	const sentence = "yes any answer is fine now"
	x.run("send-keys", "-t", "chat", "-l", sentence)
	// Keys are read in order: once the sentence is on the screen, every key
	// of it has been handled.
	pane := x.waitPane("the sentence in the composer", 30*time.Second, func(p string) bool { return strings.Contains(p, sentence) })
	if !strings.Contains(pane, "wants to run") || !strings.Contains(pane, "ctrl+g to answer") {
		t.Fatalf("typing answered the approval:\n%s", pane)
	}
	if strings.Contains(pane, "allowed:") {
		t.Fatalf("typing allowed a tool for the session:\n%s", pane)
	}
	x.run("send-keys", "-t", "chat", "C-g")
	x.run("send-keys", "-t", "chat", "n")
	pane = x.waitPane("the denial", 30*time.Second, func(p string) bool { return !strings.Contains(p, "wants to run") })
	if !strings.Contains(pane, sentence) {
		t.Fatalf("the draft was lost when the prompt was answered:\n%s", pane)
	}
	x.run("send-keys", "-t", "chat", "C-c") // clears the draft
	x.run("send-keys", "-t", "chat", "C-c")
	x.waitPane("folio to exit", 30*time.Second, func(string) bool {
		return strings.TrimSpace(x.run("list-panes", "-t", "chat", "-F", "#{pane_dead}")) == "1"
	})
	list, err := history.List(home)
	if err != nil || len(list) != 1 {
		t.Fatalf("conversations: %+v %v", list, err)
	}
	conv, err := history.ReadFile(list[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	denied := 0
	for _, e := range conv.Document.All() {
		if tl, ok := e.Content.(transcript.Tool); ok && tl.Receipt.App == "shell" {
			if tl.Receipt.Status != transcript.ToolDenied {
				t.Fatalf("the shell call ran: %+v", tl.Receipt)
			}
			denied++
		}
	}
	if denied != 1 {
		t.Fatalf("%d denied shell calls in the log, want 1", denied)
	}
}
