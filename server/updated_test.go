package server

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// The listing the web app's sidebar shows dates each conversation by its
// last change and orders them by it: a conversation titled at its first
// prompt and continued later comes before one begun in between.
func TestListingUpdatedIsTheLastChange(t *testing.T) {
	ts, _ := newTurnsServer(t, 0, "")
	t0 := time.Date(2026, 12, 3, 7, 48, 56, 0, time.UTC)
	write := func(id string, start, later time.Time) {
		now := start
		l, err := history.Open(filepath.Join(ts.data, "conversations", id+".jsonl"), history.WithClock(func() time.Time { return now }))
		must(t, err)
		defer l.Close()
		es := []transcript.Entry{{ID: id + "-u1", Content: transcript.User{Text: "help"}, Timestamp: now}}
		msgs := []message.Message{message.Text(message.User, "help")}
		must(t, l.SaveEntries(es, msgs))
		must(t, l.SetTitle(id))
		if later.After(start) {
			now = later
			es = append(es, transcript.Entry{ID: id + "-u2", Content: transcript.User{Text: "more"}, Timestamp: now})
			must(t, l.SaveEntries(es, append(msgs, message.Text(message.User, "more"))))
		}
	}
	write("continued", t0, t0.Add(37*time.Minute))
	write("between", t0.Add(10*time.Minute), time.Time{})

	s, body := ts.do(t, "GET", "/api/v2/conversations", "")
	var l struct {
		Conversations []wireMeta `json:"conversations"`
	}
	if s != 200 || json.Unmarshal([]byte(body), &l) != nil {
		t.Fatalf("list: %d %s", s, body)
	}
	at := func(d time.Duration) string { return string(transcript.AppendInstant(nil, t0.Add(d))) }
	if len(l.Conversations) != 2 || l.Conversations[0].ID != "continued" || l.Conversations[0].UpdatedAt != at(37*time.Minute) ||
		l.Conversations[1].UpdatedAt != at(10*time.Minute) {
		t.Fatalf("listing %s\nwant continued (updated %s) before between (%s)", body, at(37*time.Minute), at(10*time.Minute))
	}
	if _, body := ts.do(t, "GET", "/api/v2/conversations/continued", ""); !strings.Contains(body, `"updatedAt":"`+at(37*time.Minute)+`"`) {
		t.Errorf("the conversation's own metadata: %s", body)
	}
}
