package provider

import (
	"context"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/message"
)

// Provider is a model client. Name is the provider's registered name
// ("openai", "anthropic", "demo"); Stream sends one request and returns its
// streamed reply.
//
// Stream returns an *Error when the request is refused before any output (an
// HTTP error status, a connection failure); once it returns a Stream, every
// later failure comes from Stream.Next.
type Provider interface {
	Name() string
	Stream(ctx context.Context, req Request) (Stream, error)
}

// Request is one model step: everything the model sees.
type Request struct {
	// Model overrides the configured model when set.
	Model string
	// System is the system prompt; providers place it where their API wants it.
	System   string
	Messages []message.Message
	Tools    []ToolSpec
	// MaxTokens bounds the reply; 0 means the configured or provider default.
	MaxTokens int
}

// ToolSpec describes one tool the model may call. Schema is a JSON Schema
// object for the arguments; nil means a tool without arguments.
type ToolSpec struct {
	Name        string
	Description string
	Schema      jsontext.Value
}

// Stream is a pull iterator over one reply. Next returns the next event, or
// io.EOF after the Done event, or an *Error. After an error or io.EOF, Next
// keeps returning the same result. Close releases the connection; it is safe
// to call more than once and after the end.
type Stream interface {
	Next() (Event, error)
	Close() error
}

// EventKind says what an Event carries.
type EventKind uint8

// The kinds of events a stream produces, in the order a reply may use them.
// Reasoning comes in deltas closed by one ReasoningDone per block (which
// carries the signature or redacted data to send back next time). A tool call
// is ToolCallStart, any number of ToolCallDelta fragments, then ToolCallEnd
// with the complete arguments, already checked to be valid JSON. A stream
// that ends normally sends Usage (when the provider reported any) and then
// exactly one Done, its last event.
const (
	TextDelta EventKind = iota + 1
	ReasoningDelta
	ReasoningDone
	ToolCallStart
	ToolCallDelta
	ToolCallEnd
	UsageReport
	Done
)

var kindNames = [...]string{"", "text", "reasoning", "reasoning-done", "tool-start", "tool-delta", "tool-end", "usage", "done"}

func (k EventKind) String() string {
	if int(k) < len(kindNames) && k != 0 {
		return kindNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", k)
}

// Event is one step of a streamed reply. It is a flat value rather than an
// interface so that Next allocates nothing per token; only the fields of its
// Kind are set.
type Event struct {
	Kind EventKind
	// Text is the text of a TextDelta or ReasoningDelta, or the argument
	// fragment of a ToolCallDelta.
	Text string
	// Index numbers the tool calls of one reply from 0, in the order they
	// started; set on ToolCallStart, ToolCallDelta and ToolCallEnd.
	Index int
	// ID and Name identify the tool call (ToolCallStart and ToolCallEnd).
	ID, Name string
	// Arguments are the complete, valid JSON arguments (ToolCallEnd).
	Arguments jsontext.Value
	// Signature and Redacted close a reasoning block (ReasoningDone): the
	// provider's opaque proof, or the whole block when the provider redacted
	// it. Both go back to the provider unchanged in message.Reasoning.
	Signature, Redacted string
	// Usage is set on UsageReport.
	Usage *Usage
	// FinishReason is set on Done.
	FinishReason FinishReason
}

// ToolCall returns the complete call a ToolCallEnd event carries.
func (e Event) ToolCall() message.ToolCall {
	return message.ToolCall{ID: e.ID, Name: e.Name, Arguments: e.Arguments}
}

// Usage is what the provider reported about a reply's cost. A nil field is a
// number the provider did not report; folio never invents one.
type Usage struct {
	// Prompt counts every input token, including those read from or written
	// to a prompt cache.
	Prompt *int64
	// Completion counts output tokens, including reasoning.
	Completion *int64
	Total      *int64
	// CacheRead and CacheWrite count prompt tokens served from, or written
	// to, the provider's prompt cache.
	CacheRead  *int64
	CacheWrite *int64
	// Reasoning counts the completion tokens spent on reasoning.
	Reasoning *int64
	// CostUSD is the price the provider reported (OpenRouter does; the demo
	// model reports 0).
	CostUSD *float64
}

// Int returns a pointer to n, for building Usage values.
func Int(n int64) *int64 { return &n }

// FinishReason says why a reply ended, normalized across providers.
type FinishReason string

// Normalized finish reasons. A provider's other reasons pass through as they
// are, except a content filter or refusal, which ends the stream with an
// *Error of class policy instead of Done.
const (
	FinishStop      FinishReason = "stop"
	FinishToolCalls FinishReason = "tool_calls"
	FinishLength    FinishReason = "length"
)
