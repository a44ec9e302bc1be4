package cli

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// The classic view resumed with --tail N prints N turns: the engine's tail
// reaches back to the Nth user entry from the end when its last entries
// hold fewer turns, and no further.
func TestResumeTailReachesTheTurnsToPrint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "conversations", "c1.jsonl")
	l, err := history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	var es []transcript.Entry
	var msgs []message.Message
	for i := range 100 {
		q, a := fmt.Sprintf("question %d", i), fmt.Sprintf("answer %d", i)
		es = append(es,
			transcript.Entry{ID: fmt.Sprintf("u%d", i), Content: transcript.User{Text: q}, Timestamp: now},
			transcript.Entry{ID: fmt.Sprintf("r%d", i), Content: transcript.Reasoning{Text: "thinking"}, Timestamp: now},
			transcript.Entry{ID: fmt.Sprintf("n%d", i), Content: transcript.Notice{Text: "note", Tone: transcript.ToneInfo}, Timestamp: now},
			transcript.Entry{ID: fmt.Sprintf("a%d", i), Content: transcript.Agent{Markdown: a}, Timestamp: now})
		msgs = append(msgs, message.Text(message.User, q), message.Text(message.Assistant, a))
	}
	if err := l.SaveEntries(es, msgs); err != nil {
		t.Fatal(err)
	}
	users := func(d transcript.Document) int {
		n := 0
		for i := range d.Len() {
			if d.At(i).Content.Kind() == transcript.KindUser {
				n++
			}
		}
		return n
	}
	plain, err := l.LoadTail(64, nil)
	if err != nil {
		t.Fatal(err)
	}
	if users(plain.Document) >= 30 {
		t.Fatalf("the plain tail holds %d turns; the test needs fewer than 30", users(plain.Document))
	}
	c, err := turnsLoader{l, 30}.LoadTail(64, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := users(c.Document); got != 30 || c.Document.At(0).ID != "u70" {
		t.Fatalf("the tail holds %d turns from %s, want 30 from u70", got, c.Document.At(0).ID)
	}
	l.Close()
}
