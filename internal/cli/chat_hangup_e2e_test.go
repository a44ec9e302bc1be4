package cli

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Closing the terminal (tmux kill-session hangs up the pane) stops the
// chat as ctrl+c does: its writer lock and its socket for other folio
// processes are removed, not left behind in the data folder.
func TestClosedTerminalStopsTheChatCleanlyInTmux(t *testing.T) {
	x, home := startChatInTmux(t)
	x.waitFor("ready")
	x.keys("hello folio", "Enter")
	x.waitFor("tok/s")
	leftovers := func() []string {
		locks, _ := filepath.Glob(filepath.Join(home, "conversations", "*.lock"))
		socks, _ := filepath.Glob(filepath.Join(home, "run", "*.sock"))
		return append(locks, socks...)
	}
	if len(leftovers()) == 0 {
		t.Fatal("the running chat holds no lock file or socket to check")
	}
	x.run("kill-session", "-t", "chat")
	deadline := time.Now().Add(paneWait)
	for len(leftovers()) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if left := leftovers(); len(left) > 0 {
		t.Fatalf("after the terminal closed these were left in the data folder: %v", left)
	}
	logs, _ := filepath.Glob(filepath.Join(home, "conversations", "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("want the conversation's log, got %v", logs)
	}
	if fi, err := os.Stat(logs[0]); err != nil || fi.Size() == 0 {
		t.Fatalf("the conversation's log: %v", err)
	}
}
