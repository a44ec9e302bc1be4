//go:build linux

package cli

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

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
	needTmux(t)
	home := shortTempDir(t, "ft")
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

// TestServeSendsThroughTerminalOwnerInTmux: a conversation a terminal chat
// owns, opened on folio serve by the protocol client (as a browser tab
// would): the client's send is not refused as locked; folio serve
// attaches to the terminal and forwards it, the terminal shows the web's
// message and its answer as its own turn, and the client sees both live
// and the command's receipt done.
func TestServeSendsThroughTerminalOwnerInTmux(t *testing.T) {
	needTmux(t)
	home := shortTempDir(t, "fw")
	bin := buildFolio(t)
	a := chatInTmux(t, "FOLIO_DEMO_RATE=300 "+bin, home)
	a.waitFor("ready")
	a.keys("hello from the terminal", "Enter")
	a.waitFor("tok/s")
	id := ownedConversation(t, home)

	_, c := startOwnerServe(t, bin, home, 2000)
	st := transcript.NewStore()
	cv, err := c.Open(t.Context(), id, st)
	if err != nil {
		t.Fatal(err)
	}
	r, err := cv.Send(t.Context(), "w1", "a message from the web tab", false)
	if err != nil || r.State == transcript.CommandRejected {
		t.Fatalf("the web's send: %+v %v", r, err)
	}
	defer func() {
		if t.Failed() {
			r, err := cv.Status(context.Background(), "w1")
			t.Logf("w1: %+v %v; A's pane:\n%s", r, err, a.pane())
		}
	}()
	wait(t, "the web's send to finish", func() bool { return receiptState(cv, "w1") == transcript.CommandDone })
	pane := a.waitPane("the web's turn on the terminal", paneWait, func(p string) bool {
		return strings.Contains(p, "a message from the web tab") && strings.Count(p, "tok/s") >= 2
	})
	if strings.Contains(pane, "locked") {
		t.Errorf("the terminal says locked:\n%s", pane)
	}
	// The client's mirror holds the web's turn, its answer, and the log's
	// entries.
	defer func() {
		if t.Failed() {
			d := st.Snapshot().Document
			for i := 0; i < d.Len(); i++ {
				t.Logf("mirror %d %s %s open=%v", i, d.At(i).ID, d.At(i).Content.Kind(), d.IsOpen(i))
			}
			for _, e := range logEntries(t, home, id) {
				t.Logf("log %s %s", e.ID, e.Content.Kind())
			}
		}
	}()
	wait(t, "the web's turn in the client's mirror", func() bool {
		d := st.Snapshot().Document
		for i := 0; i < d.Len(); i++ {
			if u, ok := d.At(i).Content.(transcript.User); ok && u.Text == "a message from the web tab" {
				for j := i + 1; j < d.Len(); j++ {
					if _, agent := d.At(j).Content.(transcript.Agent); agent {
						return d.Settled() == d.Len()
					}
				}
			}
		}
		return false
	})
	// The terminal's own next turn reaches the client live: its turn
	// runs in the client's mirror (the log's follower carries no turn).
	sub := st.Subscribe()
	defer sub.Close()
	sawTurn := make(chan struct{})
	go func() {
		for snap := range sub.C() {
			if tr, ok := snap.Live.Turn(); ok && tr.Entry != "" {
				if i, ok := snap.Document.Index(tr.Entry); ok {
					if u, ok := snap.Document.At(i).Content.(transcript.User); ok && u.Text == "and the terminal goes on" {
						close(sawTurn)
						return
					}
				}
			}
		}
	}()
	a.keys("and the terminal goes on", "Enter")
	select {
	case <-sawTurn:
	case <-time.After(paneWait):
		t.Fatal("the client never saw the terminal's own turn run")
	}
	wait(t, "the terminal's turn to end in the client's mirror", func() bool {
		s := st.Snapshot()
		_, running := s.Live.Turn()
		return !running && s.Document.Settled() == s.Document.Len() && len(logEntries(t, home, id)) == s.Document.Len()
	})
	got, want := st.Snapshot().Document.Entries(), logEntries(t, home, id)
	if len(got) != len(want) {
		t.Fatalf("the client's mirror has %d entries, the log %d", len(got), len(want))
	}
	for i := range want {
		if got[i].ID != want[i].ID {
			t.Errorf("entry %d: mirror %s, log %s", i, got[i].ID, want[i].ID)
		}
	}
}
