package history

import (
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/transcript"
)

func TestFirstMessageTitle(t *testing.T) {
	long := strings.Repeat("é", 70)
	for _, tc := range []struct {
		name    string
		entries []transcript.Entry
		want    string
		ok      bool
	}{
		{"no user message", []transcript.Entry{{ID: "a", Content: transcript.Agent{Markdown: "hi"}}}, "", false},
		{"first line, trimmed", []transcript.Entry{{ID: "u", Content: transcript.User{Text: "  hello there\nsecond"}}}, "hello there", true},
		{"first user message wins", []transcript.Entry{{ID: "u1", Content: transcript.User{Text: "one"}}, {ID: "u2", Content: transcript.User{Text: "two"}}}, "one", true},
		{"cut at 60 characters", []transcript.Entry{{ID: "u", Content: transcript.User{Text: long}}}, strings.Repeat("é", 60) + "…", true},
	} {
		for i := range tc.entries {
			tc.entries[i].Timestamp = time.Unix(1, 0)
		}
		doc, err := transcript.NewDocument("c", tc.entries)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := FirstMessageTitle(doc)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: FirstMessageTitle = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
