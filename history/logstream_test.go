package history

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/message"
)

// TestLogStreamMessagesAsTheWholeRead: LogStream.Messages, which walks the
// chain of message frames in stretches between checkpoints instead of
// holding a ref per message, gives the whole read's messages in order, at
// any stride (one frame, a few, more than the chain has), on a generated
// log and on a branched one whose head's chain shares its parent's.
func TestLogStreamMessagesAsTheWholeRead(t *testing.T) {
	defer func(n int) { messagesStride = n }(messagesStride)
	gened := logPath(t)
	writeGen(t, gened, gen.Options{Messages: 300, Seed: 3, Summaries: true})
	branched := logPath(t)
	writeLog(t, branched, readFile(t, "testdata/index-v3/c1.jsonl"))
	// A log its writer indexed save by save: a frame of messages a save.
	saved := logPath(t)
	l := open(t, saved)
	d, m := doc(t), []message.Message(nil)
	for i := range 40 {
		d = appendAll(t, d, user(fmt.Sprintf("m-u%d", i), "q"), agent(fmt.Sprintf("m-a%d", i), "a"))
		m = append(m, msgs(fmt.Sprintf("q%d", i), fmt.Sprintf("a%d", i))...)
		if err := l.Save(d, m); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	ix := checkIndex(t, saved)
	if n := ix.st.branches[0].msgChain.take; n >= 80 {
		t.Fatalf("the writer's index holds the messages in one frame of %d", n)
	}
	for _, path := range []string{gened, branched, saved} {
		c, err := Read(bytes.NewReader(readFile(t, path)))
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Messages) == 0 || path == gened && len(c.Messages) < 50 {
			t.Fatalf("%s: %d messages", path, len(c.Messages))
		}
		for _, stride := range []int{1, 2, 3, 512} {
			messagesStride = stride
			s, err := OpenLogStream(path)
			if err != nil {
				t.Fatal(err)
			}
			var got []message.Message
			err = s.Messages(func(m message.Message) error { got = append(got, m); return nil })
			s.Close()
			if err != nil {
				t.Fatalf("stride %d: %v", stride, err)
			}
			if !reflect.DeepEqual(got, c.Messages) {
				t.Fatalf("stride %d: %d messages, the whole read %d; first difference at %s", stride, len(got), len(c.Messages), firstDiff(got, c.Messages))
			}
		}
	}
}

func firstDiff(a, b []message.Message) string {
	for i := range min(len(a), len(b)) {
		if !reflect.DeepEqual(a[i], b[i]) {
			return fmt.Sprint(i)
		}
	}
	return "the end"
}
