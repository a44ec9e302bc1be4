package cli

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
)

// topLines is the first n lines of a pane: the transcript's top rows.
func topLines(pane string, n int) string {
	ls := strings.Split(pane, "\n")
	return strings.Join(ls[:min(n, len(ls))], "\n")
}

var newMarker = regexp.MustCompile(`(\d+) new ↓`)

// newCount is the count the "N new ↓" marker shows, 0 without one.
func newCount(pane string) int {
	m := newMarker.FindStringSubmatch(pane)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// pageUntil presses PageUp, a few at a time, until the pane satisfies
// cond, at most max times, and returns the pane.
func pageUntil(x tmux, what string, max int, cond func(string) bool) string {
	x.t.Helper()
	for n := 0; n < max; n += 4 {
		x.keys("", "PageUp", "PageUp", "PageUp", "PageUp")
		time.Sleep(150 * time.Millisecond)
		if p := x.pane(); cond(p) {
			return p
		}
	}
	return x.waitPane(what, paneWait, cond)
}

// inShowOrder checks that the prompts on screen (indexes into prompts)
// come in the order folio log show prints them.
func inShowOrder(t *testing.T, shown []int, prompts []string, show string) {
	t.Helper()
	at := 0
	for _, i := range shown {
		k := strings.Index(show[at:], "› "+head(prompts[i]))
		if k < 0 {
			t.Fatalf("prompt %d (%q) is not where folio log show prints it (after the one before)", i, head(prompts[i]))
		}
		at += k + 1
	}
}

// A turn that arrives while the reader is scrolled back into the pages of
// a 300,000-message conversation leaves the text they read where it is,
// and the marker counts the turn's entries. Paging on after the turn was
// saved reads the grown log (the pager opens it afresh at its new size),
// the earlier prompts come in folio log show's order, and End shows the
// new turn with the marker gone.
func TestChatNewTurnWhileScrolledBackInTmux(t *testing.T) {
	home, id, prompts := bigConversation(t)
	path, err := history.Path(home, id)
	if err != nil {
		t.Fatal(err)
	}
	// A slow demo model, so the turn is still arriving while the reader
	// scrolls back.
	x, _ := startChatEnv(t, home, nil, []string{"FOLIO_DEMO_RATE=15"}, "--resume", id)
	x.waitFor("ready")
	last := len(prompts)
	x.keys("tell me about paging", "Enter")
	x.waitFor("› tell me about paging")
	held := pageUntil(x, "the view scrolled back into the pages", 200, func(p string) bool {
		ps := promptsIn(p, prompts)
		return len(ps) > 0 && ps[0] < last-60
	})
	if strings.Contains(held, "ready") {
		t.Fatalf("the turn ended before the view was scrolled back (make the demo model slower):\n%s", held)
	}
	top := topLines(held, 10)
	seen := newCount(held)
	done := x.waitPane("the turn to end while scrolled back", 2*time.Minute, func(p string) bool {
		if n := newCount(p); n < seen {
			t.Fatalf("the new marker went down from %d to %d:\n%s", seen, n, p)
		} else {
			seen = n
		}
		return strings.Contains(p, "ready")
	})
	if got := topLines(done, 10); got != top {
		t.Errorf("the text being read moved while the turn arrived:\nbefore\n%s\nafter\n%s", top, got)
	}
	if newCount(done) < 1 {
		t.Errorf("no marker counts the turn's entries:\n%s", done)
	}
	// The log grew under the paged view; paging on reads it as it is now.
	before := promptsIn(done, prompts)
	pane := pageUntil(x, "earlier prompts after the log grew", 40, func(p string) bool {
		ps := promptsIn(p, prompts)
		return len(ps) > 0 && len(before) > 0 && ps[0] < before[0]
	})
	ps := promptsIn(pane, prompts)
	for i := 1; i < len(ps); i++ {
		if ps[i] != ps[i-1]+1 {
			t.Errorf("the prompts on screen are not consecutive in the log's order (%v):\n%s", ps, pane)
		}
	}
	out, _, err := run(t, "log", "show", "--width", "100", "--tail", strconv.Itoa(last-ps[0]+200), path)
	if err != nil {
		t.Fatal(err)
	}
	inShowOrder(t, ps, prompts, out)
	if !strings.Contains(out, "› tell me about paging") {
		t.Errorf("folio log show does not print the turn saved while scrolled back")
	}
	x.keys("", "End")
	end := x.waitFor("› tell me about paging", "tok/s")
	if strings.Contains(end, "new ↓") {
		t.Errorf("the marker stayed at the live edge:\n%s", end)
	}
}

// A page read that fails (the log is moved away under the view) shows a
// one-line notice that says how to retry, over the conversation the view
// still holds; once the log is back, PageUp reads the page and the notice
// goes.
func TestChatPageReadFailureInTmux(t *testing.T) {
	home, id, prompts := bigConversation(t)
	path, err := history.Path(home, id)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := startChatInTmuxAt(t, home, "--resume", id)
	last := len(prompts)
	x.waitFor("ready")
	pageUntil(x, "the view scrolled back into the pages", 200, func(p string) bool {
		ps := promptsIn(p, prompts)
		return len(ps) > 0 && ps[0] < last-60
	})
	away := path + ".away"
	if err := os.Rename(path, away); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Rename(away, path) })
	pane := pageUntil(x, "the notice", 200, func(p string) bool { return strings.Contains(p, "could not be read") })
	first := strings.SplitN(pane, "\n", 2)[0]
	if !strings.HasPrefix(first, "✗ earlier entries could not be read: ") || !strings.HasSuffix(strings.TrimRight(first, " "), "· pgup tries again") {
		t.Errorf("the notice is not the view's first line: %q", first)
	}
	if strings.Count(pane, "could not be read") != 1 {
		t.Errorf("the notice takes more than one line:\n%s", pane)
	}
	held := strings.Split(topLines(pane, 10), "\n")[1:]
	if strings.TrimSpace(strings.Join(held, "")) == "" {
		t.Errorf("the view went empty under the notice:\n%s", pane)
	}
	if err := os.Rename(away, path); err != nil {
		t.Fatal(err)
	}
	x.keys("", "PageUp")
	x.waitPane("the retried page", paneWait, func(p string) bool {
		return !strings.Contains(p, "could not be read") && strings.Join(strings.Split(topLines(p, 10), "\n")[1:], "\n") != strings.Join(held, "\n")
	})
}
