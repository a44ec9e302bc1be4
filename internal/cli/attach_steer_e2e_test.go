//go:build linux

package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/foliodev/folio/transcript"
)

// footerLine is the pane's footer: its line that names the owner.
func footerLine(pane, who string) string {
	for _, l := range strings.Split(pane, "\n") {
		if strings.Contains(l, who) {
			return l
		}
	}
	return ""
}

// TestAttachedSteerAndPhasesInTmux: terminal B attached to terminal A's
// conversation shows A's turn as A's footer does (thinking while the
// demo model reasons, not only "streaming"), and steers it: while A's turn
// waits on a tool call's approval, B's steer waits "at the next step" on
// both screens, and once B approves the call it is applied in A's turn,
// where both screens show it and the log holds it once, as the steer B
// sent.
func TestAttachedSteerAndPhasesInTmux(t *testing.T) {
	needTmux(t)
	home := shortTempDir(t, "ft")
	bin := buildFolio(t)
	a := chatInTmux(t, "FOLIO_DEMO_RATE=30 "+bin, home)
	a.waitFor("ready")
	aPID := a.folioPID(bin)
	// A first turn that fails at once saves the conversation, so B can
	// attach before A's next turn starts and see all of its phases.
	a.keys("/demo fail auth now", "Enter")
	id := ownedConversation(t, home)
	b := chatInTmux(t, bin, home, "--resume", id)
	who := fmt.Sprintf("attached to folio chat (pid %d)", aPID)
	b.waitFor(who)
	a.keys("think hard about why the sky is blue", "Enter")
	// A's model reasons first: B's footer says so, then that it streams.
	b.waitPane("B's footer to say A's turn thinks", paneWait, func(p string) bool {
		return strings.Contains(footerLine(p, who), "thinking…")
	})
	b.waitPane("B's footer to say A's turn streams", paneWait, func(p string) bool {
		return strings.Contains(footerLine(p, who), "streaming…")
	})
	a.keys("", "Escape")
	b.waitPane("A's turn to stop, on B", paneWait, func(p string) bool {
		return strings.Contains(footerLine(p, who), "ready")
	})

	// A's next turn waits on a call's approval; B steers it meanwhile.
	a.keys(`/demo call shell {"command":"echo steered-by-b"}`, "Enter")
	b.waitFor("shell wants to run")
	b.keys("keep it short", "Tab")
	b.waitFor("keep it short", "steer, at the next step")
	a.waitFor("keep it short", "steer, at the next step")
	b.keys("", "C-g", "y")
	a.waitFor("✓ shell", "↳ keep it short")
	b.waitFor("✓ shell", "↳ keep it short")
	a.waitPane("A's turn to end", paneWait, func(p string) bool {
		return !strings.Contains(p, "steer, at the next step") && strings.Contains(p, "○ ready")
	})

	var steers []transcript.Steering
	wait(t, "the steer in the log", func() bool {
		steers = steers[:0]
		for _, e := range logEntries(t, home, id) {
			if s, ok := e.Content.(transcript.Steering); ok {
				steers = append(steers, s)
			}
		}
		return len(steers) > 0
	})
	if len(steers) != 1 || steers[0].Text != "keep it short" || !strings.HasPrefix(steers[0].CommandID, "tui-") {
		t.Errorf("the log's steering entries are %+v, want B's one steer", steers)
	}
}
