package engine

import (
	"strings"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// Failures in the model's context. When a turn fails, the person sees the
// partial answer and a failure notice; the model must see the same, or the
// next turn answers as if nothing had happened. So a failed step adds one
// assistant message: the partial text, then a short statement of the
// failure. A log saved before this existed ends in a failure entry without
// that message; Resume recognises it and adds the message in memory (it
// reaches the log as an ordinary append with the next save; nothing
// written before is rewritten).

const failurePrefix = "[This reply failed: "

// failureMessage is the assistant message for a reply that failed after
// partial text.
func failureMessage(partial, headline string) message.Message {
	s := failurePrefix + strings.TrimSuffix(headline, ".") + ".]"
	if partial = strings.TrimRight(partial, "\n"); partial != "" {
		s = partial + "\n\n" + s
	}
	return message.Message{Role: message.Assistant, Content: s}
}

// isFailureMessage reports whether m is a failure message.
func isFailureMessage(m message.Message) bool {
	return m.Role == message.Assistant && strings.Contains(m.Content, failurePrefix) && strings.HasSuffix(m.Content, ".]")
}

// recoverFailure returns the failure message a log ending in a failure
// entry lacks, if it lacks one: the partial answer is the agent entry just
// before the failure, unless the messages already end with it.
func recoverFailure(doc transcript.Document, msgs []message.Message) (message.Message, bool) {
	n := doc.Len()
	if n == 0 {
		return message.Message{}, false
	}
	f, ok := doc.At(n - 1).Content.(transcript.Failure)
	if !ok || (len(msgs) > 0 && isFailureMessage(msgs[len(msgs)-1])) {
		return message.Message{}, false
	}
	partial := ""
	for i := n - 2; i >= 0; i-- {
		c := doc.At(i).Content
		if ag, ok := c.(transcript.Agent); ok {
			partial = ag.Markdown
			break
		}
		if c.Kind() != transcript.KindReasoning {
			break
		}
	}
	if len(msgs) > 0 {
		last := msgs[len(msgs)-1]
		if last.Role == message.Assistant && strings.TrimSpace(last.Content) == strings.TrimSpace(partial) {
			partial = ""
		}
	}
	h := f.Headline
	if h == "" {
		h = "the model request failed (" + f.Reason + ")"
	}
	return failureMessage(partial, h), true
}
