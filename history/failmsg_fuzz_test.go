package history

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// docAndMsgsFrom turns fuzz bytes into a document and a message list that
// may disagree in every way a log can: prompts the messages lack, user
// messages no prompt made, failures, notices and answers in any order.
func docAndMsgsFrom(data []byte) (transcript.Document, []message.Message) {
	words := []string{"", "go", "go on", "/info", "!ls", "again"}
	var entries []transcript.Entry
	var msgs []message.Message
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, b := range data {
		w := words[int(b>>4)%len(words)]
		var c transcript.Content
		switch b % 8 {
		case 0:
			c = transcript.User{Text: w}
		case 1:
			c = transcript.Steering{Text: w}
		case 2:
			c = transcript.Agent{Markdown: w}
		case 3:
			c = transcript.Failure{Reason: "provider", Headline: w}
		case 4:
			c = transcript.Notice{Text: w, Tone: transcript.ToneError}
		case 5:
			c = transcript.Notice{Text: w, Tone: transcript.ToneLog}
		case 6:
			msgs = append(msgs, message.Text(message.User, w))
			continue
		case 7:
			msgs = append(msgs, message.Text(message.Assistant, w))
			if b&0x80 != 0 {
				msgs = append(msgs, FailureMessage(w, "x"))
			}
			continue
		}
		entries = append(entries, transcript.Entry{ID: "e" + strconv.Itoa(i), Content: c, Timestamp: at})
	}
	doc, err := transcript.NewDocument("f", entries)
	if err != nil {
		doc, _ = transcript.NewDocument("f", nil)
	}
	return doc, msgs
}

// FuzzLegacyFailures: whatever a log holds, recognising its failures never
// panics, places each splice within the messages in order, and adds one
// failure message per splice; reading the prompts from the end back
// (failureSplices, as a tail read does) finds what reading them all does.
// The normalized list holds the added messages where the splices say,
// and less them is the list as stored.
func FuzzLegacyFailures(f *testing.F) {
	f.Add([]byte{0x10, 0x06 | 0x10, 0x12, 0x13, 0x20, 0x14, 0x20 | 0x06, 0x27})
	f.Add([]byte{0x30, 0x04, 0x10, 0x10 | 0x06, 0x17, 0x13})
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, msgs := docAndMsgsFrom(data)
		sp, err := failureSplices(docSource{doc}, msgs)
		if err != nil {
			t.Fatal(err)
		}
		all, _ := docSource{doc}.prompts(0, doc.Len())
		whole, err := legacyFailures(docSource{doc}, all, msgs)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(sp, whole) {
			t.Fatalf("from the end %+v, from all prompts %+v", sp, whole)
		}
		prev := 0
		for _, s := range sp {
			if s.at < prev || s.at > len(msgs) {
				t.Fatalf("splice at %d after %d, %d messages", s.at, prev, len(msgs))
			}
			prev = s.at
			n := 0
			for _, m := range s.msgs {
				if isFailureMessage(m) {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("a splice holds %d failure messages: %+v", n, s.msgs)
			}
		}
		out, _, added := normalized(msgs, nil, sp)
		for _, i := range added {
			if !isFailureMessage(out[i]) && out[i].Role != message.User {
				t.Fatalf("added message %d is %+v", i, out[i])
			}
		}
		if back := stored(out, added); len(back) != len(msgs) || len(msgs) > 0 && !reflect.DeepEqual(back, msgs) {
			t.Fatalf("the normalized list less the added is %+v, not %+v", back, msgs)
		}
		if want := len(msgs) + func() int {
			k := 0
			for _, s := range sp {
				k += len(s.msgs)
			}
			return k
		}(); len(out) != want {
			t.Fatalf("spliced %d messages, want %d", len(out), want)
		}
	})
}
