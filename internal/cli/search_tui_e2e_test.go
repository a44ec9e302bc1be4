package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// saveLong writes a 400-entry conversation whose 21st entry holds needle.
func saveLong(t *testing.T, home, id, needle string) {
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
	now := time.Now().UTC().Add(-time.Hour)
	var es []transcript.Entry
	var msgs []message.Message
	for i := range 200 {
		q := fmt.Sprintf("question number %d", i)
		if i == 10 {
			q = "tell me about the " + needle + " plan"
		}
		a := fmt.Sprintf("answer number %d", i)
		es = append(es, transcript.Entry{ID: fmt.Sprintf("u%d", i), Content: transcript.User{Text: q}, Timestamp: now},
			transcript.Entry{ID: fmt.Sprintf("a%d", i), Content: transcript.Agent{Markdown: a}, Timestamp: now})
		msgs = append(msgs, message.Text(message.User, q), message.Text(message.Assistant, a))
	}
	if err := l.SaveEntries(es, msgs); err != nil {
		t.Fatal(err)
	}
	if err := l.SetTitle("Long talk"); err != nil {
		t.Fatal(err)
	}
}

// ctrl+k starts a search; its overlay lists the hits over every
// conversation, and enter opens the conversation with the fullscreen
// window at the hit, far from its live edge.
func TestChatSearchOpensAtTheHitInTmux(t *testing.T) {
	home := t.TempDir()
	saveConversation(t, home, "other", "Other talk", "what about lunch?", "Soup.")
	saveLong(t, home, "long", "quokka")
	x, _ := startChatInTmuxAt(t, home)
	x.waitFor("ready")
	x.keys("", "C-k")
	x.waitFor("/search")
	x.keys("quokka", "Enter")
	pane := x.waitFor("Search: quokka", "Long talk", "[quokka]")
	if strings.Contains(pane, "Other talk") {
		t.Fatalf("a conversation without the word is listed:\n%s", pane)
	}
	x.keys("", "Enter")
	pane = x.waitFor("tell me about the quokka plan", "search hit:")
	if strings.Contains(pane, "answer number 199") {
		t.Errorf("the window is at the live edge, not at the hit:\n%s", pane)
	}
	// A malformed query says what is wrong.
	x.keys("/search \"open", "Enter")
	x.waitFor("quote is not closed")
}
