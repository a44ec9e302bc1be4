package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// loadAttrRE finds an attribute of the file's markup that would load
// something from a network.
var loadAttrRE = regexp.MustCompile(`(?i)<[a-z][^>]*\s(src|href|srcset|action|poster|data)\s*=\s*["']?\s*(https?:)?//`)

// /export html typed into the terminal chat (tmux) writes one HTML file
// into the tools' folder that holds every entry of the saved conversation,
// in order, with the words typed; its markup loads nothing from a network
// (no http(s) or scheme-relative src or href), and its policy allows no
// load at all.
func TestChatExportHTMLInTmux(t *testing.T) {
	x, home := startChatInTmux(t)
	x.waitFor("ready")
	prompts := []string{"first question about fsync", "second question: what about rename"}
	for _, p := range prompts {
		x.keys(p, "Enter")
		x.waitPane("the turn to end", 60*time.Second, func(pane string) bool {
			return strings.Contains(pane, "○ ready") && strings.Contains(pane, "tok/s")
		})
	}
	x.keys("/export html", "Enter")
	x.waitFor("exported to")

	work := filepath.Dir(home) // the chat runs in the folder above its data folder
	var file string
	x.waitPane("the HTML file", paneWait, func(string) bool {
		m, _ := filepath.Glob(filepath.Join(work, "folio-*.html"))
		if len(m) == 1 {
			file = m[0]
		}
		return file != ""
	})
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if !strings.HasPrefix(doc, "<!doctype html>") || !strings.HasSuffix(doc, "</html>\n") {
		t.Fatalf("not a whole HTML file: %.200s … %.100s", doc, doc[max(0, len(doc)-100):])
	}

	// The saved log's entries, all of them, in order.
	logs, _ := filepath.Glob(filepath.Join(home, "conversations", "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("logs %v", logs)
	}
	if id := strings.TrimSuffix(filepath.Base(logs[0]), ".jsonl"); filepath.Base(file) != "folio-"+id+".html" {
		t.Errorf("the file is %s for conversation %s", filepath.Base(file), id)
	}
	c, err := history.ReadFile(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	want := c.Document.Entries()
	got := htmlEntries(t, doc)
	if len(got) != len(want) || len(got) == 0 {
		t.Fatalf("the file holds %d entries, the log %d", len(got), len(want))
	}
	var users []string
	for i := range got {
		if got[i].ID != want[i].ID {
			t.Errorf("entry %d is %s, the log's %s", i, got[i].ID, want[i].ID)
		}
		if u, ok := got[i].Content.(transcript.User); ok {
			users = append(users, u.Text)
		}
	}
	if strings.Join(users, "|") != strings.Join(prompts, "|") {
		t.Errorf("the file's prompts are %q, want %q", users, prompts)
	}
	hasAgent := false
	for _, e := range got {
		if a, ok := e.Content.(transcript.Agent); ok && strings.TrimSpace(a.Markdown) != "" {
			hasAgent = true
		}
	}
	if !hasAgent {
		t.Error("the file holds no answer")
	}

	// Nothing from a network: no load in the markup, and a policy that allows none.
	markup := scriptBodies.ReplaceAllString(doc, "<script>")
	if m := loadAttrRE.FindString(markup); m != "" {
		t.Errorf("the file's markup loads from a network: %s", m)
	}
	if !strings.Contains(doc, `content="default-src 'none'; `) || !strings.Contains(doc, "connect-src 'none'") {
		t.Error("the file's policy does not forbid loads")
	}
	if strings.Contains(markup, "<link") || strings.Contains(markup, "@import") {
		t.Error("the file links a stylesheet")
	}
}

// scriptBodies matches a script element's content, to look at the markup
// around it.
var scriptBodies = regexp.MustCompile(`(?s)<script[^>]*>.*?</script>`)
