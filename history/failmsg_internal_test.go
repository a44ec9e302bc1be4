package history

import (
	"testing"

	"github.com/foliodev/folio/message"
)

func prompts(at ...any) []prompt {
	var out []prompt
	for i := 0; i < len(at); i += 2 {
		out = append(out, prompt{entry: at[i].(int), text: at[i+1].(string), user: true, msg: -1})
	}
	return out
}

// TestFailureStartFromTheEnd: the rule decides from the last prompts once
// every user message is paired, asks for more while one is not, and never
// pairs a compaction's summary with a prompt whose text happens to start
// it.
func TestFailureStartFromTheEnd(t *testing.T) {
	summary := SummaryMessage("the user asked things")
	for _, c := range []struct {
		name   string
		picked []prompt
		from   int
		msgs   []message.Message
		start  int
		more   bool
	}{
		{"summary pairs no prompt", prompts(0, "Summary", 10, "q1"), 0,
			[]message.Message{summary, message.Text(message.User, "q1"), message.Text(message.Assistant, "a1")}, 10, false},
		{"decided from the end", prompts(10, "q1"), 5,
			[]message.Message{summary, message.Text(message.User, "q1")}, 10, false},
		{"an unpaired message asks for more", prompts(10, "q1"), 5,
			[]message.Message{message.Text(message.User, "q0"), message.Text(message.User, "q1")}, 0, true},
		{"the first message paired asks for all", prompts(10, "q1"), 5,
			[]message.Message{message.Text(message.User, "q1")}, 0, true},
		{"the first message paired, all seen", prompts(2, "old", 10, "q1"), 0,
			[]message.Message{message.Text(message.User, "q1")}, 2, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			start, more := failureStart(c.picked, c.from, c.msgs)
			if more != c.more || !more && start != c.start {
				t.Fatalf("failureStart = %d, %v; want %d, %v", start, more, c.start, c.more)
			}
		})
	}
}
