package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// folio log ls dates a conversation by its last change, not by the title
// set at its first prompt.
func TestLogListUpdatedIsTheLastChange(t *testing.T) {
	data := t.TempDir()
	path, _ := history.Path(data, "c1")
	now := logT0
	l, err := history.Open(path, history.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	es := []transcript.Entry{{ID: "u1", Content: transcript.User{Text: "help"}, Timestamp: now}}
	if err := l.SaveEntries(es, []message.Message{message.Text(message.User, "help")}); err != nil {
		t.Fatal(err)
	}
	if err := l.SetTitle("Help"); err != nil {
		t.Fatal(err)
	}
	now = logT0.Add(37 * time.Minute)
	es = append(es, transcript.Entry{ID: "u2", Content: transcript.User{Text: "more"}, Timestamp: now})
	if err := l.SaveEntries(es, []message.Message{message.Text(message.User, "help"), message.Text(message.User, "more")}); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := run(t, "log", "ls", "--data", data)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	want, first := now.Local().Format("2006-01-02 15:04"), logT0.Local().Format("2006-01-02 15:04")
	if !strings.Contains(out, want) || strings.Contains(out, first) {
		t.Fatalf("log ls shows\n%s\nwant updated %s (not the title's %s)", out, want, first)
	}
}

// The /resume picker lists conversations by their last change, newest
// first, with that time: one titled at its first prompt and continued
// later comes before one begun in between.
func TestResumePickerUpdatedIsTheLastChange(t *testing.T) {
	data := t.TempDir()
	write := func(id string, start, later time.Time) {
		now := start
		path, _ := history.Path(data, id)
		l, err := history.Open(path, history.WithClock(func() time.Time { return now }))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		es := []transcript.Entry{{ID: id + "-u1", Content: transcript.User{Text: "help"}, Timestamp: now}}
		msgs := []message.Message{message.Text(message.User, "help")}
		if err := l.SaveEntries(es, msgs); err != nil {
			t.Fatal(err)
		}
		if err := l.SetTitle(id); err != nil {
			t.Fatal(err)
		}
		if later.After(start) {
			now = later
			es = append(es, transcript.Entry{ID: id + "-u2", Content: transcript.User{Text: "more"}, Timestamp: now})
			if err := l.SaveEntries(es, append(msgs, message.Text(message.User, "more"))); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("continued", logT0, logT0.Add(37*time.Minute))
	write("between", logT0.Add(10*time.Minute), time.Time{})
	got, err := (&chatSession{dataDir: data}).list()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "continued" || !got[0].Updated.Equal(logT0.Add(37*time.Minute)) || !got[1].Updated.Equal(logT0.Add(10*time.Minute)) {
		t.Fatalf("the picker lists %+v; want continued (updated %v) before between", got, logT0.Add(37*time.Minute))
	}
}
