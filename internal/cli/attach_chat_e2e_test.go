//go:build linux

package cli

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// ownedConversation waits for the one conversation in home that has
// entries (the one terminal A started) and returns its ID.
func ownedConversation(t *testing.T, home string) string {
	t.Helper()
	var id string
	wait(t, "terminal A's conversation to be saved", func() bool {
		all, _ := history.List(home)
		for _, c := range all {
			if c.Err == nil && c.Entries > 0 {
				id = conversationID(c)
				return true
			}
		}
		return false
	})
	return id
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// body is a fullscreen pane without its last lines (the footer, which
// differs between the owner and the attached terminal).
func body(pane string, footer int) string {
	lines := strings.Split(strings.TrimRight(pane, "\n"), "\n")
	if len(lines) > footer {
		lines = lines[:len(lines)-footer]
	}
	return strings.Join(lines, "\n")
}

// TestAttachToTerminalChatInTmux: terminal A (a plain folio chat) runs a
// long demo turn; terminal B's folio --resume attaches to A (its footer
// names A's process), sees the stream grow, queues a message that becomes
// A's next turn, and approves the tool call that turn waits on in A. Both
// screens then show the same conversation, and folio log show holds the
// same entries, once each. When A exits, B takes the conversation over and
// its next send runs.
func TestAttachToTerminalChatInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	home, err := os.MkdirTemp("", "ft")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	bin := buildFolio(t)
	a := chatInTmux(t, "FOLIO_DEMO_RATE=60 "+bin, home)
	a.waitFor("ready")
	aPID := a.folioPID(bin)
	a.keys("write a long essay about streaming", "Enter")
	id := ownedConversation(t, home)

	b := chatInTmux(t, bin, home, "--resume", id)
	who := fmt.Sprintf("attached to folio chat (pid %d)", aPID)
	b.waitFor(who)
	first := b.pane()
	b.waitPane("the attached stream to grow", paneWait, func(p string) bool {
		return p != first && strings.Contains(p, who) && !strings.Contains(p, "tok/s")
	})

	// B's message waits in A's queue while A's turn runs, then runs there.
	b.keys(`/demo call shell {"command":"echo approved-from-b"}`, "Enter")
	a.waitFor("echo approved-from-b")
	// The call waits for approval in A; B approves it.
	b.waitFor("shell wants to run")
	a.waitFor("shell wants to run")
	b.keys("", "C-g", "y")
	a.waitFor("✓ shell", "returned: exit status 0")
	b.waitFor("✓ shell", "returned: exit status 0")
	aPane := a.waitPane("A's second turn to finish", paneWait, func(p string) bool {
		return strings.Count(p, "tok/s") >= 1 && !strings.Contains(p, "wants to run") && strings.Contains(p, "✓ shell")
	})
	bPane := b.waitPane("B to show A's screen, line for line", paneWait, func(p string) bool { return body(p, 3) == body(aPane, 3) })

	// folio log show: every entry once, the two turns in order, and the
	// same entries as the log read whole.
	out, err := exec.Command(bin, "log", "show", "--jsonl", "--data", home, id).Output()
	if err != nil {
		t.Fatalf("folio log show: %v", err)
	}
	var shown []transcript.Entry
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		e, err := transcript.DecodeEntry([]byte(line))
		if err != nil {
			t.Fatalf("log show line %q: %v", line, err)
		}
		shown = append(shown, e)
	}
	var users []string
	seen := map[string]int{}
	for _, e := range shown {
		seen[e.ID]++
		if u, ok := e.Content.(transcript.User); ok {
			users = append(users, u.Text)
		}
	}
	for eid, n := range seen {
		if n != 1 {
			t.Errorf("entry %s is in the log %d times", eid, n)
		}
	}
	if len(users) != 2 {
		t.Fatalf("the log's user entries are %q, want A's essay and B's call", users)
	}
	if !strings.Contains(users[0], "long essay") || !strings.Contains(users[1], "approved-from-b") {
		t.Errorf("the log's user entries are %q, want A's essay and B's call", users)
	}
	// The screens end with the last turn: B's call, on both.
	for _, p := range []string{aPane, bPane} {
		if !strings.Contains(p, firstLine(users[len(users)-1])) {
			t.Errorf("the last user entry %q is not on the screen:\n%s", users[len(users)-1], p)
		}
	}
	whole := logEntries(t, home, id)
	if len(whole) != len(shown) {
		t.Errorf("log show printed %d entries, the log holds %d", len(shown), len(whole))
	}
	for i := range min(len(whole), len(shown)) {
		if whole[i].ID != shown[i].ID {
			t.Errorf("entry %d: log show %s, the log %s", i, shown[i].ID, whole[i].ID)
		}
	}

	// A exits; B takes the conversation over and its next send runs.
	if err := syscall.Kill(aPID, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	b.waitPane("B to take over", paneWait, func(p string) bool { return !strings.Contains(p, "attached to") })
	b.keys("after A left", "Enter")
	wait(t, "B's turn in the log", func() bool {
		es := logEntries(t, home, id)
		for i, e := range es {
			if u, ok := e.Content.(transcript.User); ok && u.Text == "after A left" && i+1 < len(es) {
				return true
			}
		}
		return false
	})
}
