package history

import (
	"strconv"
	"strings"
	"time"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// deriveEntries builds presentation entries for a history that has model messages
// but no UI records: one entry per user and assistant turn, skipping tool
// messages, empty messages and continuations (system messages are never
// stored). The entry for message i has ID "message:i" and timestamp at[i]
// (the Unix epoch when at is short), so deriving twice gives the same entries.
func deriveEntries(msgs []message.Message, at []time.Time) []transcript.Entry {
	var out []transcript.Entry
	for i, m := range msgs {
		if m.Continuation || strings.TrimSpace(m.Content) == "" {
			continue
		}
		var c transcript.Content
		switch m.Role {
		case message.User:
			c = transcript.User{Text: m.Typed()} // without a memory tag Jazz appended
		case message.Assistant:
			c = transcript.Agent{Markdown: m.Content}
		default:
			continue
		}
		ts := time.UnixMilli(0).UTC()
		if i < len(at) {
			ts = at[i]
		}
		out = append(out, transcript.Entry{ID: "message:" + strconv.Itoa(i), Content: c, Timestamp: ts})
	}
	return out
}
