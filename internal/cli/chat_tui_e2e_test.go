package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

const paneWait = 30 * time.Second

// keys types text into the chat and presses the named keys after it.
func (x tmux) keys(text string, keys ...string) {
	x.t.Helper()
	if text != "" {
		x.run("send-keys", "-t", "chat", "-l", text)
	}
	for _, k := range keys {
		x.run("send-keys", "-t", "chat", k)
	}
}

func (x tmux) waitFor(want ...string) string {
	x.t.Helper()
	return x.waitPane(strings.Join(want, ", "), paneWait, func(p string) bool {
		for _, w := range want {
			if !strings.Contains(p, w) {
				return false
			}
		}
		return true
	})
}

// The first screen says what this is, the model, the folder and the data
// folder, and gives three tips.
func TestChatFirstScreenInTmux(t *testing.T) {
	x, home := startChatInTmux(t)
	pane := x.waitFor("ready")
	for _, want := range []string{"folio", "model   demo/folio-demo", "folder  ", "data    " + home} {
		if !strings.Contains(pane, want) {
			t.Errorf("the first screen lacks %q:\n%s", want, pane)
		}
	}
	if n := strings.Count(pane, "  · "); n != 3 {
		t.Errorf("the first screen has %d tips, want 3:\n%s", n, pane)
	}
	// The first turn replaces it with the conversation.
	x.keys("hello folio", "Enter")
	pane = x.waitFor("tok/s")
	if strings.Contains(pane, "model   demo/folio-demo") {
		t.Errorf("the first screen stayed after the first turn:\n%s", pane)
	}
}

// A --model the offline demo ignores is said on the first screen, above
// the tips, at 80×24 and at 120×40: what folio writes to standard error
// before the fullscreen view starts is hidden behind it. The footer's demo
// notice (how to set up a real model) shows at both sizes too.
func TestChatFirstScreenSaysTheDemoIgnoresTheModelInTmux(t *testing.T) {
	x, _ := startChatInTmux(t, "--model", "gpt-9")
	x.waitFor("ready")
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		x.run("resize-window", "-t", "chat", "-x", strconv.Itoa(size[0]), "-y", strconv.Itoa(size[1]))
		rule := strings.Repeat("─", size[0])
		wants := []string{`! the model "gpt-9" (--model) is ignored: the offline demo model is in use;`,
			"pick a provider with --provider", "FOLIO_PROVIDER (see folio models)", "demo model — for a real one", "  · Up recalls"}
		pane := x.waitPane(fmt.Sprintf("the note, the tips and the demo notice at %dx%d", size[0], size[1]), paneWait, func(p string) bool {
			if !slices.Contains(strings.Split(p, "\n"), rule) {
				return false // not redrawn at this width yet
			}
			for _, w := range wants {
				if !strings.Contains(p, w) {
					return false
				}
			}
			return true
		})
		if note, tips := strings.Index(pane, "is ignored"), strings.Index(pane, "  · "); note > tips {
			t.Errorf("the note is below the tips at %dx%d:\n%s", size[0], size[1], pane)
		}
	}
}

// Typing / opens the menu of every command; more letters narrow it, tab
// completes the highlighted one, enter runs it.
func TestChatSlashMenuInTmux(t *testing.T) {
	x, _ := startChatInTmux(t)
	x.waitFor("ready")
	x.keys("/")
	pane := x.waitFor("/help", "/quit")
	for _, c := range []string{"/help", "/resume", "/model", "/new", "/clear", "/export", "/quit"} {
		if !strings.Contains(pane, c+" ") {
			t.Errorf("the slash menu lacks %s:\n%s", c, pane)
		}
	}
	x.keys("mo")
	x.waitPane("the menu narrowed to /model", paneWait, func(p string) bool {
		return strings.Contains(p, "/model    choose") && !strings.Contains(p, "/resume   continue")
	})
	x.keys("", "Tab")
	x.waitPane("/model completed in the editor", paneWait, func(p string) bool { return strings.Contains(p, "› /model\n") || strings.Contains(p, "› /model ") })
	x.keys("", "Enter")
	x.waitFor("Choose a model", "› demo/folio-demo")
	x.keys("", "Escape")
	x.waitPane("the model list to close", paneWait, func(p string) bool { return !strings.Contains(p, "Choose a model") })
}

// /help opens an overlay that lists every key, and esc closes it.
func TestChatHelpOverlayInTmux(t *testing.T) {
	x, home := startChatInTmux(t)
	x.waitFor("ready")
	x.keys("/help")
	x.waitFor("› /help")
	x.keys("", "Enter")
	pane := x.waitFor("folio help", "ctrl+c")
	for _, k := range []string{"enter", "shift+enter", "tab", "ctrl+s", "esc", "up, down", "ctrl+g", "ctrl+r", "ctrl+x",
		"ctrl+y", "ctrl+o", "pgup", "pgdown", "ctrl+home", "ctrl+end", "ctrl+c", "/resume"} {
		if !strings.Contains(pane, k) {
			t.Errorf("/help does not list %q:\n%s", k, pane)
		}
	}
	// The overlay scrolls when the commands do not fit (/search and /find
	// made them longer than this window): end shows the last of them.
	x.keys("", "End")
	end := x.waitFor("/export", "/quit")
	if !strings.Contains(end, "folio help") || !strings.Contains(end, "/model") {
		t.Errorf("/help's end is not in the overlay, or lacks /model:\n%s", end)
	}
	for _, p := range []string{pane, end} {
		if strings.Contains(p, "…") {
			t.Errorf("/help is cut off:\n%s", p)
		}
	}
	x.keys("", "Escape")
	x.waitPane("the help to close", paneWait, func(p string) bool { return !strings.Contains(p, "folio help") })
	// A chat that sent nothing leaves no lock and nothing to resume.
	x.keys("", "C-c")
	x.waitPane("folio to exit", paneWait, func(string) bool {
		return strings.TrimSpace(x.run("list-panes", "-t", "chat", "-F", "#{pane_dead}")) == "1"
	})
	if l := locks(t, home); len(l) > 0 {
		t.Errorf("lock files left after a chat that sent nothing: %v", l)
	}
	if all := x.run("capture-pane", "-p", "-J", "-S", "-", "-t", "chat"); strings.Contains(all, "folio --resume") {
		t.Errorf("a chat that saved nothing offers to resume it:\n%s", all)
	}
}

// Up and down recall the prompts sent before, also in the next chat over
// the same data folder.
func TestChatPromptHistoryInTmux(t *testing.T) {
	x, home := startChatInTmux(t)
	x.waitFor("ready")
	x.keys("first prompt", "Enter")
	x.waitFor("tok/s")
	x.keys("second prompt", "Enter")
	x.waitPane("the second receipt", paneWait, func(p string) bool {
		return strings.Count(p, "tok/s") >= 2 || strings.Contains(p, "› second prompt") && strings.Contains(p, "ready")
	})
	x.waitFor("○ ready")
	x.keys("", "Up")
	x.waitFor("› second prompt\n")
	x.keys("", "Up")
	x.waitPane("the first prompt recalled", paneWait, func(p string) bool { return editorLine(p) == "› first prompt" })
	x.keys("", "Down")
	x.waitPane("the second prompt again", paneWait, func(p string) bool { return editorLine(p) == "› second prompt" })
	x.keys("", "C-c", "C-c")
	x.waitPane("folio to exit", paneWait, func(string) bool {
		return strings.TrimSpace(x.run("list-panes", "-t", "chat", "-F", "#{pane_dead}")) == "1"
	})

	y, _ := startChatInTmuxAt(t, home)
	y.waitFor("ready")
	y.keys("", "Up")
	y.waitPane("the last chat's prompt recalled", paneWait, func(p string) bool { return editorLine(p) == "› second prompt" })
}

// editorLine is the pane's editor line: the one after the last rule.
func editorLine(pane string) string {
	lines := strings.Split(pane, "\n")
	for i := len(lines) - 1; i > 0; i-- {
		if strings.HasPrefix(lines[i-1], "────") {
			return strings.TrimRight(lines[i], " ")
		}
	}
	return ""
}

// saveConversation writes a conversation with a title into home.
func saveConversation(t *testing.T, home, id, title, question, answer string) {
	t.Helper()
	path, err := history.Path(home, id)
	if err != nil {
		t.Fatal(err)
	}
	l, err := history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	now := time.Now().UTC()
	es := []transcript.Entry{
		{ID: id + "-u", Content: transcript.User{Text: question}, Timestamp: now},
		{ID: id + "-a", Content: transcript.Agent{Markdown: answer}, Timestamp: now},
	}
	msgs := []message.Message{message.Text(message.User, question), message.Text(message.Assistant, answer)}
	if err := l.SaveEntries(es, msgs); err != nil {
		t.Fatal(err)
	}
	if err := l.SetTitle(title); err != nil {
		t.Fatal(err)
	}
}

// In the classic view /resume draws its picker where it can be seen, and
// enter opens the highlighted row.
func TestChatClassicResumePickerInTmux(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	saveConversation(t, home, "older", "Older talk", "what about the old one?", "The old answer is here.")
	// The listing is newest first: make "newer" newer.
	saveConversation(t, home, "newer", "Newer talk", "and the new one?", "The new answer is here.")
	later := time.Now().Add(time.Minute)
	if p, _ := history.Path(home, "newer"); os.Chtimes(p, later, later) != nil {
		t.Fatal("chtimes")
	}
	x, _ := startChatInTmuxAt(t, home, "chat", "--classic")
	x.waitFor("ready")
	x.keys("/resume")
	x.waitFor("› /resume")
	x.keys("", "Enter")
	pane := x.waitFor("Resume a conversation", "Newer talk", "Older talk")
	if !strings.Contains(pane, "› Newer talk") {
		t.Fatalf("the first row is not highlighted:\n%s", pane)
	}
	x.keys("", "Down")
	x.waitFor("› Older talk")
	x.keys("", "Enter")
	pane = x.waitFor("The old answer is here.")
	if strings.Contains(pane, "The new answer is here.") {
		t.Errorf("enter opened the wrong conversation:\n%s", pane)
	}
	if strings.Contains(pane, "Resume a conversation") {
		t.Errorf("the picker stayed on screen:\n%s", pane)
	}
}

// By default nothing asks the terminal to report the mouse, so its own
// text selection works; --mouse asks for it.
func TestChatLeavesTheMouseAloneInTmux(t *testing.T) {
	mouse := func(x tmux) string {
		return strings.TrimSpace(x.run("display-message", "-p", "-t", "chat",
			"#{mouse_any_flag}#{mouse_button_flag}#{mouse_standard_flag}#{mouse_all_flag}"))
	}
	x, _ := startChatInTmux(t)
	x.waitFor("ready")
	if got := mouse(x); got != "0000" {
		t.Errorf("fullscreen folio turned mouse reporting on (any, button, standard, all = %s)", got)
	}
	y, _ := startChatInTmux(t, "--mouse")
	y.waitFor("ready")
	if got := mouse(y); got == "0000" {
		t.Errorf("folio --mouse did not turn mouse reporting on")
	}
}

// folioPID finds the folio process in the pane: the pane's process, or its
// child when the shell did not exec it.
func (x tmux) folioPID(bin string) int {
	x.t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(x.run("display-message", "-p", "-t", "chat", "#{pane_pid}")))
	if err != nil {
		x.t.Fatal(err)
	}
	for range 2 {
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); filepath.Base(exe) == filepath.Base(bin) {
			return pid
		}
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		f := strings.Fields(string(b))
		if len(f) != 1 {
			break
		}
		pid, _ = strconv.Atoi(f[0])
	}
	x.t.Skip("cannot find folio's process in the pane (no /proc?)")
	return 0
}

// SIGTERM to a chat with a saved conversation ends it cleanly: no lock is
// left, and the conversation is readable.
func TestChatSIGTERMLeavesNoLockInTmux(t *testing.T) {
	x, home := startChatInTmux(t)
	x.waitFor("ready")
	x.keys("hello folio", "Enter")
	x.waitFor("tok/s")
	if l := locks(t, home); len(l) != 1 {
		t.Fatalf("want the chat's one lock while it runs, got %v", l)
	}
	if err := syscall.Kill(x.folioPID("folio"), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	x.waitPane("folio to exit", paneWait, func(string) bool {
		return strings.TrimSpace(x.run("list-panes", "-t", "chat", "-F", "#{pane_dead}")) == "1"
	})
	if l := locks(t, home); len(l) > 0 {
		t.Errorf("lock files left after SIGTERM: %v", l)
	}
	list, err := history.List(home)
	if err != nil || len(list) != 1 || list[0].Err != nil {
		t.Fatalf("the conversation after SIGTERM: %+v, %v", list, err)
	}
}

// The approval prompt shows the waiting call as its tool's adapter paints
// it: an edit as the diff it would make (against the file as it is), a
// shell call as its command line; never the arguments' JSON. Denying it
// leaves the file as it was.
func TestApprovalPaintsTheCallInTmux(t *testing.T) {
	x, home := startChatInTmux(t)
	dir := filepath.Dir(home)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("alpha\nbeta\ndelta\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	x.waitFor("ready")
	x.keys(`/demo call edit_file {"path":"notes.txt","old":"beta","new":"gamma"}`, "Enter")
	pane := x.waitPane("the approval prompt", 60*time.Second, func(p string) bool { return strings.Contains(p, "wants to run") })
	prompt := pane[strings.LastIndex(pane, "wants to run"):]
	for _, want := range []string{"notes.txt", "-beta", "+gamma", " alpha", " delta"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt does not paint the edit as a diff (%q missing):\n%s", want, prompt)
		}
	}
	if strings.Contains(prompt, `"old"`) || strings.Contains(prompt, `{"path"`) {
		t.Errorf("the prompt shows the arguments' JSON:\n%s", prompt)
	}
	x.keys("", "C-g", "n")
	x.waitPane("the denial", 30*time.Second, func(p string) bool { return !strings.Contains(p, "wants to run") })

	x.keys(`/demo call shell {"command":"echo painted-by-the-adapter"}`, "Enter")
	pane = x.waitPane("the second prompt", 60*time.Second, func(p string) bool { return strings.Contains(p, "wants to run") })
	prompt = pane[strings.LastIndex(pane, "wants to run"):]
	if !strings.Contains(prompt, "$ echo painted-by-the-adapter") || strings.Contains(prompt, `"command"`) {
		t.Errorf("the prompt does not show the shell command as the shell adapter paints it:\n%s", prompt)
	}
	x.keys("", "C-g", "n")
	x.waitPane("the second denial", 30*time.Second, func(p string) bool { return !strings.Contains(p, "wants to run") })
	if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(b) != "alpha\nbeta\ndelta\n" {
		t.Fatalf("the denied edit changed the file: %q %v", b, err)
	}
}

// A tool row's duration is the tool's execution: a shell call approved
// after a few seconds' wait says it ran for milliseconds, not the seconds
// it waited for the person.
func TestToolRowTimesTheRunNotTheApprovalInTmux(t *testing.T) {
	x, _ := startChatInTmux(t)
	x.waitFor("ready")
	x.keys(`/demo call shell {"command":"echo ran-after-approval"}`, "Enter")
	x.waitPane("the approval prompt", 60*time.Second, func(p string) bool { return strings.Contains(p, "wants to run") })
	time.Sleep(2500 * time.Millisecond) // the person reads the prompt
	x.keys("", "C-g", "y")
	pane := x.waitPane("the call's row", 60*time.Second, func(p string) bool {
		return !strings.Contains(p, "wants to run") && strings.Contains(p, "✓ shell") && strings.Contains(p, "tok/s")
	})
	row := regexp.MustCompile(`✓ shell \$ echo ran-after-approval (\S+)`).FindStringSubmatch(pane)
	if row == nil {
		t.Fatalf("no timed row for the shell call:\n%s", pane)
	}
	if !regexp.MustCompile(`^\d+ms$`).MatchString(row[1]) {
		t.Errorf("the row says the call took %s; it ran for milliseconds after a 2.5 s approval wait:\n%s", row[1], pane)
	}
}
