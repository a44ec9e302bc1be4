package export

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// defaultAgent is the agentId of an exported log whose header names none.
const defaultAgent = "folio"

// Mapped says what an export had to change to fit the target format: the
// entry (or "message N") it concerns and what became of it.
type Mapped struct {
	Where string
	What  string
}

func (m Mapped) String() string { return m.Where + ": " + m.What }

// jazz writes c as a version 3 log that Jazz opens: a header with an
// agentId (c's, else defaultAgent), every model message in Jazz's
// OpenAI-style spelling at the time it was recorded, and every
// presentation entry as one ui-append record, dated by the entry, of
// entries that pass Jazz's schema. One record per entry keeps
// Jazz's all-or-nothing batch rule from hiding a whole conversation behind
// one entry it might refuse. It returns what it mapped.
func jazz(w io.Writer, c *history.Conversation) ([]Mapped, error) {
	var mapped []Mapped
	bw := bufio.NewWriter(w)
	at := c.UpdatedAt
	if at.IsZero() {
		at = c.Header.StartedAt
	}
	if at.IsZero() {
		at = time.UnixMilli(0).UTC()
	}
	bw.Write(jazzHeader(c))
	for i, m := range c.Messages {
		b, notes, err := jazzMessage(m)
		if err != nil {
			return mapped, fmt.Errorf("export: message %d: %w", i, err)
		}
		for _, n := range notes {
			mapped = append(mapped, Mapped{Where: "message " + strconv.Itoa(i), What: n})
		}
		msgAt := at
		if i < len(c.MessageAt) {
			msgAt = c.MessageAt[i]
		}
		rec := recordStart(nil, "message", msgAt)
		rec = append(rec, `,"message":`...)
		rec = append(rec, b...)
		bw.Write(append(rec, "}\n"...))
	}
	if c.Document.Len() == 0 && !c.Derived && len(c.Messages) > 0 {
		// An empty screen is a fact: without a UI record Jazz, like folio,
		// would show the messages instead.
		bw.Write(append(recordStart(nil, "ui-transcript", at), `,"entries":[]}`+"\n"...))
	}
	for _, e := range c.Document.All() {
		es, notes := jazzEntries(e)
		for _, n := range notes {
			mapped = append(mapped, Mapped{Where: "entry " + e.ID, What: n})
		}
		for _, je := range es {
			b, err := transcript.EncodeEntry(je)
			if err != nil {
				return mapped, fmt.Errorf("export: entry %s: %w", je.ID, err)
			}
			rec := recordStart(nil, "ui-append", je.Timestamp)
			rec = append(rec, `,"entries":[`...)
			rec = append(rec, b...)
			bw.Write(append(rec, "]}\n"...))
		}
	}
	return mapped, bw.Flush()
}

func jazzHeader(c *history.Conversation) []byte {
	agent := c.Header.AgentID
	if agent == "" {
		agent = defaultAgent
	}
	started := c.Header.StartedAt
	if started.IsZero() {
		started = time.UnixMilli(0).UTC()
	}
	b := []byte(`{"type":"conversation","version":3,"agentId":`)
	b, _ = jsontext.AppendQuote(b, agent)
	b = append(b, `,"conversationId":`...)
	b, _ = jsontext.AppendQuote(b, c.Header.ConversationID)
	b = append(b, `,"startedAt":"`...)
	b = transcript.AppendInstant(b, started.UTC())
	b = append(b, '"')
	if t := strings.TrimSpace(c.Title); t != "" {
		b = append(b, `,"title":`...)
		b, _ = jsontext.AppendQuote(b, t)
	}
	return append(b, "}\n"...)
}

func recordStart(b []byte, typ string, at time.Time) []byte {
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","at":"`...)
	b = transcript.AppendInstant(b, at.UTC())
	return append(b, '"')
}

// jazzCall is a tool call in the OpenAI spelling Jazz stores.
type jazzCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// jazzMessage spells m as Jazz stores model messages. A message read from
// Jazz is written back as it was read. folio's own members (reasoning
// blocks, isError, continuation) have no Jazz field; they are kept as
// extra members, which Jazz carries without reading, and reported.
func jazzMessage(m message.Message) ([]byte, []string, error) {
	if len(m.Source) > 0 && !bytes.Contains(m.Source, []byte(`"toolCalls"`)) && !bytes.Contains(m.Source, []byte(`"toolCallId"`)) {
		// Unchanged since it was read from Jazz: the bytes as they were.
		if b, err := json.Marshal(m); err == nil && bytes.Equal(b, m.Source) {
			return b, nil, nil
		}
	}
	var notes []string
	b := []byte(`{"role":`)
	b, _ = jsontext.AppendQuote(b, string(m.Role))
	b = append(b, `,"content":`...)
	b, _ = jsontext.AppendQuote(b, m.Content)
	if m.Name != "" {
		b = append(b, `,"name":`...)
		b, _ = jsontext.AppendQuote(b, m.Name)
	}
	if m.ToolCallID != "" {
		b = append(b, `,"tool_call_id":`...)
		b, _ = jsontext.AppendQuote(b, m.ToolCallID)
	}
	if len(m.ToolCalls) > 0 {
		calls := make([]jazzCall, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			calls[i].ID, calls[i].Type = c.ID, "function"
			calls[i].Function.Name, calls[i].Function.Arguments = c.Name, string(c.Arguments)
		}
		v, err := json.Marshal(calls, json.Deterministic(true))
		if err != nil {
			return nil, nil, err
		}
		b = append(b, `,"tool_calls":`...)
		b = append(b, v...)
	}
	if len(m.Reasoning) > 0 {
		v, err := json.Marshal(m.Reasoning, json.Deterministic(true))
		if err != nil {
			return nil, nil, err
		}
		b = append(b, `,"reasoning":`...)
		b = append(b, v...)
		notes = append(notes, "folio's reasoning blocks kept as the extra member reasoning (Jazz does not replay them)")
	}
	if m.IsError {
		b = append(b, `,"isError":true`...)
		notes = append(notes, "isError kept as an extra member")
	}
	if m.Continuation {
		b = append(b, `,"continuation":true`...)
		notes = append(notes, "continuation kept as an extra member")
	}
	return append(b, '}'), notes, nil
}

// jazzEntries maps one folio entry to the entries Jazz reads: itself when
// Jazz's schema has room for all of it, else the nearest Jazz kind plus,
// where needed, a debug notice (ID "<id>:folio") carrying the rest.
func jazzEntries(e transcript.Entry) ([]transcript.Entry, []string) {
	with := func(c transcript.Content) transcript.Entry {
		return transcript.Entry{ID: e.ID, Content: c, Timestamp: e.Timestamp}
	}
	extra := func(what string, v any) transcript.Entry {
		b, _ := json.Marshal(v, json.Deterministic(true))
		return transcript.Entry{ID: e.ID + ":folio", Timestamp: e.Timestamp,
			Content: transcript.Notice{Text: "folio " + what + ": " + string(b), Tone: transcript.ToneDebug}}
	}
	switch c := e.Content.(type) {
	case transcript.Tool:
		if c.InvocationID == "" && c.Presentation == nil && len(c.Supplementals) == 0 {
			return []transcript.Entry{e}, nil
		}
		rest := struct {
			InvocationID  string                         `json:"invocationId,omitzero"`
			Presentation  *transcript.Presentation       `json:"presentation,omitzero"`
			Supplementals []transcript.KeyedPresentation `json:"supplementals,omitzero"`
		}{c.InvocationID, c.Presentation, c.Supplementals}
		return []transcript.Entry{with(transcript.Tool{Receipt: c.Receipt}), extra("tool details", rest)},
			[]string{"tool invocationId/presentation/supplementals moved to debug notice " + e.ID + ":folio"}
	case transcript.TurnReceipt:
		var ttft []any
		steps := make([]transcript.Step, len(c.Steps))
		for i, s := range c.Steps {
			if s.TimeToFirstTokenMs != nil {
				ttft = append(ttft, map[string]any{"step": i, "timeToFirstTokenMs": *s.TimeToFirstTokenMs})
			}
			s.TimeToFirstTokenMs = nil
			steps[i] = s
		}
		out := []transcript.Entry{with(transcript.TurnReceipt{Steps: steps, FinishedAt: c.FinishedAt})}
		if len(ttft) == 0 {
			return out, nil
		}
		return append(out, extra("time to first token", ttft)),
			[]string{"steps' timeToFirstTokenMs moved to debug notice " + e.ID + ":folio"}
	case transcript.Failure:
		text := c.Headline
		if text == "" {
			text = "The reply failed"
		}
		text += " (" + c.Reason + ")"
		if c.Detail != "" {
			text += ": " + c.Detail
		}
		if c.Retryable {
			text += "; retryable"
			if c.RetryAfterMs != nil {
				text += " after " + strconv.FormatFloat(*c.RetryAfterMs, 'f', -1, 64) + " ms"
			}
		}
		return []transcript.Entry{with(transcript.Notice{Text: text, Tone: transcript.ToneError})},
			[]string{"failure mapped to an error notice"}
	case transcript.Steering:
		return []transcript.Entry{with(transcript.User{Text: c.Text})},
			[]string{"steering (command " + c.CommandID + ") mapped to a user entry"}
	case transcript.Compaction:
		text := "Earlier messages were summarized (entries " + c.Covers.FromID + " to " + c.Covers.ToID + "):\n" + c.Summary
		return []transcript.Entry{with(transcript.Notice{Text: text, Tone: transcript.ToneInfo})},
			[]string{"compaction mapped to an info notice"}
	}
	return []transcript.Entry{e}, nil
}
