package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/transcript"
)

// bigConversation writes a generated 300,000-message conversation (with
// compaction summaries, so a resume loads its tail) and its page index
// into a data folder, and returns the folder, its ID and its prompts in
// order.
func bigConversation(t *testing.T) (home, id string, prompts []string) {
	t.Helper()
	if testing.Short() {
		t.Skip("writes a 300,000-message log")
	}
	home = filepath.Join(t.TempDir(), "home")
	id = "20260101-000000-b16b16"
	path, err := history.Path(home, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	o := gen.Options{Messages: 300000, Seed: 2, Summaries: true}
	if _, err := gen.Write(f, o); err != nil {
		t.Fatal(err)
	}
	if ix, err := history.OpenIndex(path, f, 0); err == nil {
		ix.Close()
	}
	f.Close()
	for e := range gen.Entries(o) {
		if u, ok := e.Content.(transcript.User); ok {
			prompts = append(prompts, u.Text)
		}
	}
	return home, id, prompts
}

// promptsIn are the indexes in prompts of the prompts the pane shows (by
// their first words, as the view wraps them), in the pane's order.
func promptsIn(pane string, prompts []string) []int {
	var out []int
	for _, l := range strings.Split(pane, "\n") {
		if !strings.HasPrefix(l, "› ") {
			continue
		}
		head := strings.TrimSpace(strings.TrimPrefix(l, "› "))
		if len(head) < 20 {
			continue
		}
		for i := len(prompts) - 1; i >= 0; i-- {
			if strings.HasPrefix(prompts[i], head) {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

func head(s string) string { return s[:min(len(s), 30)] }

// A 300,000-message conversation resumes in the fullscreen view at its
// end, scrolls back page by page past what the engine loaded (earlier
// prompts appear, in order), Home shows its first prompt, End its last,
// and a resize while paged keeps the view.
func TestChatPagesABigConversationInTmux(t *testing.T) {
	home, id, prompts := bigConversation(t)
	x, _ := startChatInTmuxAt(t, home, "--resume", id)
	start := x.waitFor("ready")
	last := len(prompts)
	for _, i := range promptsIn(start, prompts) {
		if i < last-5 {
			t.Fatalf("the resume does not start at the conversation's end (prompt %d of %d):\n%s", i, last, start)
		}
	}
	for range 25 {
		x.keys("", "PageUp", "PageUp", "PageUp", "PageUp")
		time.Sleep(150 * time.Millisecond)
	}
	pane := x.waitPane("earlier prompts", paneWait, func(p string) bool {
		ps := promptsIn(p, prompts)
		return len(ps) > 0 && ps[0] < last-60
	})
	ps := promptsIn(pane, prompts)
	for i := 1; i < len(ps); i++ {
		if ps[i] != ps[i-1]+1 {
			t.Errorf("the prompts on screen are not consecutive in the log's order (%v):\n%s", ps, pane)
		}
	}
	x.run("resize-window", "-t", "chat", "-x", "80", "-y", "24")
	x.waitPane("the paged view at 80×24", paneWait, func(p string) bool {
		// A long turn may fill 24 rows without a prompt; any prompt shown
		// is still one from far back.
		got := promptsIn(p, prompts)
		return (len(got) == 0 || got[0] < last-60) && strings.Contains(p, "ready") && !strings.Contains(p, "new ↓")
	})
	x.keys("", "Home")
	x.waitFor(head(prompts[0]))
	x.keys("", "End")
	x.run("resize-window", "-t", "chat", "-x", "100", "-y", "30")
	x.waitPane("the live edge again", paneWait, func(p string) bool { return p == start })
}

// The classic view resumes a 300,000-message conversation with its last
// turns and a line counting the entries before them.
func TestChatClassicResumesABigConversationInTmux(t *testing.T) {
	home, id, prompts := bigConversation(t)
	x, _ := startChatInTmuxAt(t, home, "--classic", "--resume", id)
	x.waitFor("ready")
	all := x.run("capture-pane", "-p", "-J", "-S", "-", "-t", "chat")
	if !strings.Contains(all, "earlier entries · folio log show "+id) {
		t.Errorf("no line counts the earlier entries:\n%s", all)
	}
	if !strings.Contains(all, "› "+head(prompts[len(prompts)-1])) {
		t.Errorf("the classic resume did not print the last prompt:\n%s", all)
	}
	if strings.Contains(all, head(prompts[0])) || strings.Count(all, "\n") > 200 {
		t.Errorf("the classic resume printed more than the last turns (%d lines):\n%s", strings.Count(all, "\n"), all)
	}
}
