package history

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodev/folio/transcript"
)

// A log left by a writer killed mid-stream ends in a ui-open tail. The next
// writer's Load settles it under one interrupted notice, in an append; a
// second Load adds nothing.
func TestLoadSettlesAnInterruptedAnswer(t *testing.T) {
	p := filepath.Join(t.TempDir(), "conversations", "c1.jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	const at = `"2026-01-01T00:00:00.000Z"`
	log := `{"type":"conversation","version":3,"conversationId":"c1","startedAt":` + at + "}\n" +
		`{"type":"ui-append","at":` + at + `,"entries":[{"id":"u1","content":{"kind":"user","text":"write a long essay"},"timestamp":` + at + "}]}\n" +
		`{"type":"ui-open","at":` + at + `,"entries":[{"id":"a1","content":{"kind":"agent","markdown":"The partial ans"},"timestamp":` + at + "}]}\n"
	if err := os.WriteFile(p, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	c, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	want := func(c *Conversation) {
		t.Helper()
		es := c.Document.Entries()
		if len(es) != 3 || es[1].Content.(transcript.Agent).Markdown != "The partial ans" {
			t.Fatalf("entries %+v", es)
		}
		if n, ok := es[2].Content.(transcript.Notice); !ok || n.Text != InterruptedNotice {
			t.Fatalf("no interrupted notice after the partial answer: %+v", es[2])
		}
	}
	if !c.Interrupted {
		t.Fatal("Load did not report the interruption")
	}
	want(c)
	b, _ := os.ReadFile(p)
	if !strings.HasPrefix(string(b), log) {
		t.Fatal("the log was rewritten, not appended to")
	}
	read, err := ReadFile(p)
	if err != nil || len(read.Problems) != 0 {
		t.Fatalf("read back: %v %+v", err, read.Problems)
	}
	want(read)
	l, err = Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err = l.Load()
	if err != nil || c.Interrupted || c.Document.Len() != 3 {
		t.Fatalf("a second Load: %v interrupted=%v entries=%d", err, c.Interrupted, c.Document.Len())
	}
}
