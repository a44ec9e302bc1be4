package engine

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/transcript"
)

// Compaction settings: compact when the next prompt is estimated above
// compactAt of the context window, keeping at least keepRecent messages
// verbatim.
const (
	compactAt  = 0.8
	keepRecent = 4
)

const summaryPrompt = "You are compacting a conversation so it fits the model's context window. " +
	"Summarize the conversation below for your own later use: the user's goals, decisions made, " +
	"facts learned, files and commands involved, and open questions. Be concise and factual."

// estimate is the prompt size of the next request in tokens: the
// provider's count for the last request plus about a token per four bytes
// of what was added since, or the byte estimate alone.
func (e *Engine) estimate() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	all := e.estimated(len(e.msgs))
	if e.lastPrompt > 0 && e.lastPromptMsgs <= len(e.msgs) {
		return e.lastPrompt + all - e.estimated(e.lastPromptMsgs)
	}
	return int64(len(e.system)/4) + all
}

// maybeCompact summarizes older messages when the prompt nears the context
// window. The messages before the cut are replaced by one summary message
// (history writes that as a rewrite); a compaction entry records which
// entries the summary covers. Presentation entries are not touched. A
// failed summary leaves everything as it was: the request then goes out
// whole and the provider decides.
func (e *Engine) maybeCompact(ctx context.Context, reg *region) {
	if e.window <= 0 || e.estimate() < int64(float64(e.window)*compactAt) {
		return
	}
	e.mu.Lock()
	msgs, entries := e.msgs, e.msgEntry
	e.mu.Unlock()
	cut := len(msgs) - keepRecent
	// Cut before a user message, so no tool result loses its call.
	for cut > 0 && msgs[cut].Role != message.User {
		cut--
	}
	if cut < 2 {
		return
	}
	summary, err := e.summarize(ctx, msgs[:cut])
	if err != nil || strings.TrimSpace(summary) == "" {
		return
	}
	from, to := coverage(e.store.Snapshot().Document, entries[:cut])
	if from == "" {
		return
	}
	id, err := reg.append(transcript.Compaction{Summary: summary, Covers: transcript.CompactionRange{FromID: from, ToID: to}})
	if err != nil {
		return
	}
	next := make([]message.Message, 0, len(msgs)-cut+1)
	next = append(next, history.SummaryMessage(summary))
	next = append(next, msgs[cut:]...)
	nextEntries := append([]string{id}, entries[cut:]...)
	e.mu.Lock()
	if reg.epoch != e.epoch {
		e.mu.Unlock()
		return
	}
	e.msgs, e.msgEntry = next, nextEntries
	e.lastPrompt, e.lastPromptMsgs = 0, 0
	e.mu.Unlock()
	e.persist(reg)
}

// coverage names the first and last entry that the messages came with.
// Messages from a resumed log have no known entry; then the summary covers
// the document from its start up to the last known one.
func coverage(doc transcript.Document, entries []string) (from, to string) {
	for _, id := range entries {
		if id != "" {
			if from == "" {
				from = id
			}
			to = id
		}
	}
	if first := doc.FirstID(); first != "" && (from == "" || entries[0] == "") {
		// The conversation's first entry, also when an engine opened on
		// the log's tail does not hold it.
		from = first
		if to == "" {
			to = from
		}
	}
	return from, to
}

// summarize asks the model for a summary of msgs, rendered as plain text so
// tool protocol messages need no pairing.
func (e *Engine) summarize(ctx context.Context, msgs []message.Message) (string, error) {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "[%s]", m.Role)
		if m.Name != "" {
			fmt.Fprintf(&b, " %s", m.Name)
		}
		b.WriteString("\n")
		b.WriteString(m.Content)
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, "\n(call %s %s)", c.Name, bounded(string(c.Arguments)))
		}
		b.WriteString("\n\n")
	}
	s, err := e.prov.Stream(ctx, provider.Request{Model: e.model, System: summaryPrompt,
		Messages: []message.Message{message.Text(message.User, b.String())}})
	if err != nil {
		return "", err
	}
	defer s.Close()
	var out strings.Builder
	for {
		ev, err := s.Next()
		if err == io.EOF {
			return out.String(), nil
		}
		if err != nil {
			return "", err
		}
		if ev.Kind == provider.TextDelta {
			out.WriteString(ev.Text)
		}
	}
}
