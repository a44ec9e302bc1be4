package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
)

// The real binary in tmux with the example MCP server configured: the demo
// model calls its progress tool, whose meter line is replaced in place
// while it runs and gives way to the text and the image artifact; the
// failing tool is shown failed and the model answers; folio's exit leaves
// no server process; and the resumed conversation shows the same
// retained presentation.
func TestMCPChatInTmux(t *testing.T) {
	_, demo := builtBinaries(t)
	var events string
	x, home := startChatInTmuxWith(t, func(home string) {
		events = filepath.Join(home, "events")
		cfg := fmt.Sprintf(`{"mcpServers":{"demo":{"command":%q,"env":{"MCPDEMO_EVENTS":%q}}}}`, demo, events)
		if err := os.WriteFile(filepath.Join(home, "config.json"), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
	}, "--allow", "'demo__*'")
	x.waitPane("the chat to start", 30*time.Second, func(p string) bool { return strings.Contains(p, "ready") })
	x.run("send-keys", "-t", "chat", "-l", `/demo call demo__progress {"steps":6,"delay_ms":700}`)
	x.run("send-keys", "-t", "chat", "Enter")

	pane := x.waitPane("live progress", 60*time.Second, func(p string) bool { return strings.Contains(p, "step 3 of 6") })
	if strings.Contains(pane, "step 1 of 6") || strings.Contains(pane, "step 2 of 6") || strings.Count(pane, "demo · progress · running") != 1 {
		t.Fatalf("progress was appended, not replaced:\n%s", pane)
	}
	pane = x.waitPane("the answer", 60*time.Second, func(p string) bool { return strings.Contains(p, "returned: counted 6 steps") })
	for _, w := range []string{"demo · progress · ok", "counted 6 steps", "▣ image image/png"} {
		if !strings.Contains(pane, w) {
			t.Errorf("the final pane lacks %q:\n%s", w, pane)
		}
	}
	if strings.Contains(pane, "of 6") {
		t.Errorf("progress still shows after the result:\n%s", pane)
	}

	x.run("send-keys", "-t", "chat", "-l", `/demo call demo__fail`)
	x.run("send-keys", "-t", "chat", "Enter")
	pane = x.waitPane("the failure's answer", 60*time.Second, func(p string) bool { return strings.Contains(p, "failed: this tool always fails") })
	if !strings.Contains(pane, "demo · fail · error") {
		t.Errorf("the failed call is not shown:\n%s", pane)
	}

	x.run("send-keys", "-t", "chat", "C-c")
	x.waitPane("folio to exit", 30*time.Second, func(string) bool {
		return strings.TrimSpace(x.run("list-panes", "-t", "chat", "-F", "#{pane_dead}")) == "1"
	})
	b, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	starts := 0
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(l)
		if len(f) == 2 && f[1] == "start" {
			starts++
			pid, _ := strconv.Atoi(f[0])
			if !processGone(pid) {
				t.Errorf("the MCP server (pid %d) outlived folio", pid)
			}
		}
	}
	if starts != 1 {
		t.Errorf("the server started %d times, want once for the whole session", starts)
	}

	// Resume the saved conversation: the retained presentation is back.
	list, err := history.List(home)
	if err != nil || len(list) != 1 {
		t.Fatalf("%v %+v", err, list)
	}
	bin := filepath.Join(filepath.Dir(home), "folio")
	x.run("respawn-pane", "-k", "-t", "chat", bin+" --resume "+list[0].ID)
	pane = x.waitPane("the resumed conversation", 30*time.Second, func(p string) bool { return strings.Contains(p, "▣ image image/png") })
	if !strings.Contains(pane, "counted 6 steps") {
		t.Errorf("the resumed pane lacks the result text:\n%s", pane)
	}
	x.run("send-keys", "-t", "chat", "C-c")
}

// processGone reports whether pid no longer runs (absent, or a zombie).
func processGone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] == 'Z'
}
