package cli

import (
	"strings"
	"testing"
	"time"
)

// editorRowOf is the row of the pane's editor line (the one after the last
// rule), -1 when there is none.
func editorRowOf(pane string) int {
	lines := strings.Split(pane, "\n")
	for i := len(lines) - 1; i > 0; i-- {
		if strings.HasPrefix(lines[i-1], "────") {
			return i
		}
	}
	return -1
}

// At 80×24, /help lists every key and command by scrolling (nothing is cut
// off for good), and the editor stays on its row while it is open, at this
// size and at a tall one.
func TestChatHelpScrollsAndKeepsTheComposerInTmux(t *testing.T) {
	x, _ := startChatInTmux(t)
	x.run("resize-window", "-t", "chat", "-x", "80", "-y", "24")
	before := editorRowOf(x.waitPane("a redraw at 80×24", paneWait, func(p string) bool {
		return strings.Contains(p, "ready") && len(strings.Split(strings.TrimRight(p, "\n"), "\n")) <= 24
	}))
	x.keys("/help", "Enter")
	pane := x.waitFor("folio help")
	if row := editorRowOf(pane); row != before {
		t.Errorf("/help moved the editor from row %d to %d:\n%s", before, row, pane)
	}
	seen := pane
	for range 6 {
		x.keys("", "PageDown")
		time.Sleep(200 * time.Millisecond)
		seen += x.pane()
	}
	for _, k := range []string{"enter", "ctrl+g", "ctrl+y", "ctrl+home", "ctrl+c", "/resume", "/model", "/export", "/retry", "/quit"} {
		if !strings.Contains(seen, k) {
			t.Errorf("/help never shows %q at 80×24, even scrolled:\n%s", k, seen)
		}
	}
	x.keys("", "Escape")
	x.waitPane("the help to close", paneWait, func(p string) bool { return !strings.Contains(p, "folio help") })

	x.run("resize-window", "-t", "chat", "-x", "120", "-y", "40")
	before = editorRowOf(x.waitPane("a redraw at 120×40", paneWait, func(p string) bool {
		return editorRowOf(p) > 30
	}))
	x.keys("/help", "Enter")
	pane = x.waitFor("folio help")
	if row := editorRowOf(pane); row != before {
		t.Errorf("/help at 120×40 moved the editor from row %d to %d:\n%s", before, row, pane)
	}
}

// Scrolled up in the fullscreen view, sending a message returns to the
// live edge: the person sees their message and its answer, not "N new".
func TestChatSendReturnsToTheLiveEdgeInTmux(t *testing.T) {
	x, _ := startChatInTmux(t)
	x.waitFor("ready")
	for _, p := range []string{"first essay please, a long one", "second essay please, long"} {
		x.keys(p, "Enter")
		x.waitPane("the turn to end", 60*time.Second, func(p string) bool {
			return strings.Contains(p, "○ ready") && strings.Contains(p, "tok/s")
		})
	}
	x.keys("", "PageUp", "PageUp", "PageUp")
	x.waitPane("the view to leave the live edge", paneWait, func(p string) bool { return !strings.Contains(p, "tok/s") })
	x.keys("the third one", "Enter")
	pane := x.waitPane("the answer to the third message", 60*time.Second, func(p string) bool {
		return strings.Contains(p, "› the third one") && strings.Contains(p, "○ ready")
	})
	if strings.Contains(pane, "new ↓") {
		t.Errorf("the view stayed scrolled back after the send:\n%s", pane)
	}
}

// A failed turn that may be retried says so, and ctrl+r (or /retry) runs
// it again through the engine's Retry: the demo's failure happens once, so
// the retry answers.
func TestChatRetriesAFailedTurnInTmux(t *testing.T) {
	for _, how := range []string{"key", "command"} {
		t.Run(how, func(t *testing.T) {
			x, _ := startChatInTmux(t)
			x.waitFor("ready")
			x.keys("/demo fail rate_limit once", "Enter")
			x.waitFor("ctrl+r or /retry")
			if how == "key" {
				x.keys("", "C-r")
			} else {
				x.keys("/retry", "Enter")
			}
			pane := x.waitFor("Recovered:")
			if strings.Contains(pane, "ctrl+r or /retry") {
				t.Errorf("the retry offer stayed after the retry answered:\n%s", pane)
			}
		})
	}
}
