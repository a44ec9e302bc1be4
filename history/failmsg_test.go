package history

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// olderLog writes, from fuzz bytes, a log as an older folio or Jazz left
// it: prompts the messages may lack, failures, error notices, answers,
// compactions whose message lists start over (with a summary or without),
// in any order. It returns the log's path, in a data folder (so a tail read
// goes through its page index) and whether it holds a rewrite.
func olderLog(t *testing.T, data []byte) string {
	t.Helper()
	words := []string{"", "go", "go on", "/info", "!ls", "again"}
	path := filepath.Join(t.TempDir(), "conversations", "c1.jsonl")
	l, err := Open(path, WithClock(clock()))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var es []transcript.Entry
	var msgs []message.Message
	save := func() {
		d, err := transcript.NewDocument("c1", es)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Save(d, msgs); err != nil {
			t.Fatal(err)
		}
	}
	for i, b := range data {
		w := words[int(b>>4)%len(words)]
		var c transcript.Content
		switch b % 8 {
		case 0:
			c = transcript.User{Text: w}
		case 1:
			c = transcript.Steering{Text: w, CommandID: "k" + strconv.Itoa(i)}
		case 2:
			c = transcript.Agent{Markdown: w}
		case 3:
			c = transcript.Failure{Reason: "provider", Headline: w}
		case 4:
			c = transcript.Notice{Text: w, Tone: transcript.ToneError}
		case 5:
			if b&0x80 == 0 || len(es) == 0 {
				c = transcript.Notice{Text: w, Tone: transcript.ToneLog}
				break
			}
			// A compaction: the entry, then the list starts over.
			c = transcript.Compaction{Summary: "earlier", Covers: transcript.CompactionRange{FromID: es[0].ID, ToID: es[len(es)-1].ID}}
			es = append(es, transcript.Entry{ID: "e" + strconv.Itoa(i), Content: c, Timestamp: t0})
			save()
			msgs = []message.Message{}
			if b&0x40 != 0 {
				msgs = append(msgs, SummaryMessage("what came before"))
			}
			save()
			continue
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
		es = append(es, transcript.Entry{ID: "e" + strconv.Itoa(i), Content: c, Timestamp: t0})
		if b&0x08 != 0 {
			save() // records of a few entries each
		}
	}
	if len(es) == 0 {
		es = append(es, agent("only", "hi"))
	}
	save()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// failuresReadAlike checks that the three reads of a Log give the same
// messages: the whole read (Load), the tail read through the page index
// and the light pass, for windows small and large; and that the messages
// less the added ones are the log's own.
func failuresReadAlike(t *testing.T, path string) {
	t.Helper()
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	whole, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if got := stored(whole.Messages, whole.synth); len(got) != len(raw.Messages) || len(got) > 0 && !reflect.DeepEqual(got, raw.Messages) {
		t.Fatalf("Load less the added messages:\n%v\nthe log's:\n%v", got, raw.Messages)
	}
	for _, i := range whole.synth {
		if m := whole.Messages[i]; !isFailureMessage(m) && m.Role != message.User {
			t.Fatalf("added message %d is %+v", i, m)
		}
	}
	for _, n := range []int{1, 3, 64} {
		ix, err := tailFromIndexWith(path, n, nil, true)
		if err != nil {
			t.Fatalf("window %d: the index did not answer: %v", n, err)
		}
		light, err := parseTailWith(data, n, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		for name, r := range map[string]*reader{"index": ix, "light": light} {
			c := r.conv
			if !reflect.DeepEqual(c.Messages, whole.Messages) || !reflect.DeepEqual(c.synth, whole.synth) {
				t.Fatalf("window %d, %s read: messages\n%s\nwhole:\n%s", n, name, roles(c.Messages), roles(whole.Messages))
			}
			if !reflect.DeepEqual(c.MessageAt, whole.MessageAt) {
				t.Fatalf("window %d, %s read: instants %v, whole %v", n, name, c.MessageAt, whole.MessageAt)
			}
			if k := c.Document.Elided(); c.Document.Len() > max(n, c.Document.Len()-r.settledLen) || k+c.Document.Len() != whole.Document.Len() {
				t.Fatalf("window %d, %s read: %d entries after %d, of %d", n, name, c.Document.Len(), k, whole.Document.Len())
			}
		}
	}
}

func roles(msgs []message.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(string(m.Role) + ": " + strings.ReplaceAll(m.Content, "\n", " ") + "\n")
	}
	return b.String()
}

// TestFailuresReadAlike: on older logs of every shape, the whole read, the
// page index's tail read and the light pass give the same messages, the
// failures in their place, and none of them widens the window.
func TestFailuresReadAlike(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 9))
	for k := range 120 {
		data := make([]byte, 4+rnd.IntN(120))
		for i := range data {
			data[i] = byte(rnd.IntN(256))
		}
		t.Run(strconv.Itoa(k), func(t *testing.T) {
			failuresReadAlike(t, olderLog(t, data))
		})
	}
}

// FuzzFailuresReadAlike is TestFailuresReadAlike on any bytes.
func FuzzFailuresReadAlike(f *testing.F) {
	f.Add([]byte{0x10, 0x16, 0x12, 0x13, 0x20, 0x14, 0x26, 0x27, 0x85, 0x10, 0x16, 0x17})
	f.Add([]byte{0x10, 0x03, 0x10, 0x16, 0x17, 0x13, 0xc5, 0x20, 0x14, 0x10, 0x16})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 400 {
			return
		}
		failuresReadAlike(t, olderLog(t, data))
	})
}

// TestFailuresOfAnOlderLog: a folio log from before failure messages (a
// failure entry ends a turn the messages hold) gets the failure message
// after the turn; a Jazz one (an error notice after a prompt the messages
// lack) gets the prompt and the failure where the turn was; a turn behind
// a compaction whose list started over without a summary gets nothing;
// and one with no compaction before it is placed first.
func TestFailuresOfAnOlderLog(t *testing.T) {
	u := func(id, text string) transcript.Entry { return user(id, text) }
	fail := func(id string) transcript.Entry {
		return transcript.Entry{ID: id, Content: transcript.Failure{Reason: "provider", Headline: "Overloaded"}, Timestamp: t0}
	}
	notice := func(id string) transcript.Entry {
		return transcript.Entry{ID: id, Content: transcript.Notice{Text: "LLM request failed: 503", Tone: transcript.ToneError}, Timestamp: t0}
	}
	compaction := transcript.Entry{ID: "c", Content: transcript.Compaction{Summary: "s", Covers: transcript.CompactionRange{FromID: "u0", ToID: "n0"}}, Timestamp: t0}
	m := message.Text
	for _, c := range []struct {
		name   string
		es     []transcript.Entry
		before []message.Message // saved before a rewrite, nil for none
		msgs   []message.Message
		want   string
	}{
		{"folio", []transcript.Entry{u("u1", "go"), agent("a1", "half"), fail("f1"), u("u2", "again"), agent("a2", "ok")},
			nil, []message.Message{m(message.User, "go"), m(message.User, "again"), m(message.Assistant, "ok")},
			"user: go|assistant: half  [This reply failed: Overloaded.]|user: again|assistant: ok"},
		{"jazz", []transcript.Entry{u("u1", "go"), agent("a1", "fine"), u("u2", "why"), notice("n1"), u("u3", "again"), agent("a3", "ok")},
			nil, []message.Message{m(message.User, "go"), m(message.Assistant, "fine"), m(message.User, "again"), m(message.Assistant, "ok")},
			"user: go|assistant: fine|user: why|assistant: [This reply failed: LLM request failed: 503.]|user: again|assistant: ok"},
		{"behind a compaction", []transcript.Entry{u("u0", "old"), notice("n0"), compaction, u("u1", "go"), agent("a1", "ok")},
			[]message.Message{m(message.User, "x")}, []message.Message{m(message.User, "go"), m(message.Assistant, "ok")},
			"user: go|assistant: ok"},
		{"no compaction", []transcript.Entry{u("u0", "old"), notice("n0"), u("u1", "go"), agent("a1", "ok")},
			nil, []message.Message{m(message.User, "go"), m(message.Assistant, "ok")},
			"user: old|assistant: [This reply failed: LLM request failed: 503.]|user: go|assistant: ok"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "conversations", "c1.jsonl")
			l, err := Open(path, WithClock(clock()))
			if err != nil {
				t.Fatal(err)
			}
			if c.before != nil {
				if err := l.Save(doc(t, c.es[0]), c.before); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.Save(doc(t, c.es...), c.msgs); err != nil {
				t.Fatal(err)
			}
			l.Close()
			failuresReadAlike(t, path)
			l, err = Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			conv, err := l.LoadTail(2, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.ReplaceAll(strings.TrimSuffix(roles(conv.Messages), "\n"), "\n", "|"); got != c.want {
				t.Fatalf("messages\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// Repair checks the repaired log against the log as read before; the
// failures a read adds to an older log's messages are not in either
// file, so a damaged older log with a failed turn is repaired like any
// other, and its messages read the same after.
func TestRepairOfAnOlderLogWithAFailure(t *testing.T) {
	path := logPath(t)
	l := open(t, path)
	failed := transcript.Entry{ID: "f1", Content: transcript.Failure{Reason: "provider", Headline: "Overloaded"}, Timestamp: t0}
	if err := l.Save(doc(t, user("u1", "go"), agent("a1", "half"), failed, user("u2", "again")), msgs("go", "again")); err != nil {
		t.Fatal(err)
	}
	l.Close()
	appendRaw(t, path, garbageLine+"\n")
	l = open(t, path)
	before, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(before.synth) != 1 {
		t.Fatalf("the read added %d messages, want the failure's", len(before.synth))
	}
	if _, err := l.Repair(); err != nil {
		t.Fatalf("repair: %v", err)
	}
	l.Close()
	l = open(t, path)
	defer l.Close()
	after, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Problems) != 0 || !reflect.DeepEqual(after.Messages, before.Messages) {
		t.Fatalf("after the repair: %v problems, messages\n%s\nbefore\n%s", after.Problems, roles(after.Messages), roles(before.Messages))
	}
}
