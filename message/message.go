// Package message defines the model-facing conversation: the messages folio
// sends to a model and stores in the history log beside, but separate from,
// the presentation entries of package transcript. Presentation entries are
// never sent to a model, and these messages are never shown as entries except
// through history's message-only derivation.
//
// Stored messages are read in two spellings: folio's own (toolCalls,
// toolCallId) and the OpenAI-style snake_case objects Jazz writes
// (tool_calls with function.name and function.arguments, tool_call_id).
// Members folio does not interpret (Jazz's reasoning_parts, memorySource,
// kind, attachments, a tool call's thought_signature, …) are not errors: a
// message read in any form other than folio's canonical one keeps the
// bytes it was read from in Source, and is written back as those bytes
// for as long as its fields are unchanged.
//
// Values are plain data; a Message is safe to share once built as long as no
// one mutates its slices.
package message

import (
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Role says who speaks a message. The system prompt is not a stored message;
// providers add it per request.
type Role string

// Roles a stored message may have.
const (
	System    Role = "system"
	User      Role = "user"
	Assistant Role = "assistant"
	Tool      Role = "tool"
)

// Message is one model-facing message.
//
//   - user: Content.
//   - assistant: Content, optional Reasoning blocks, optional ToolCalls.
//   - tool: the result of ToolCallID, in Content; IsError marks a failure.
type Message struct {
	Role       Role        `json:"role"`
	Content    string      `json:"content"`
	Reasoning  []Reasoning `json:"reasoning,omitzero"`
	ToolCalls  []ToolCall  `json:"toolCalls,omitzero"`
	ToolCallID string      `json:"toolCallId,omitzero"`
	Name       string      `json:"name,omitzero"`
	IsError    bool        `json:"isError,omitzero"`
	// Continuation marks an assistant message that continues the previous
	// one after an interruption (a steer); the message-only derivation
	// skips it.
	Continuation bool `json:"continuation,omitzero"`
	// Source is the JSON the message was read from, when that differs
	// from folio's canonical encoding of the fields above (another
	// spelling, members folio does not interpret). While the fields still
	// say what Source says, the message is written back as Source, byte
	// for byte. Nil for messages folio built or wrote itself.
	Source jsontext.Value `json:"-"`
}

// Reasoning is a thinking block an assistant produced. Signature is the
// provider's opaque proof, returned to it unchanged on the next request.
type Reasoning struct {
	Text      string `json:"text"`
	Signature string `json:"signature,omitzero"`
	Redacted  string `json:"redacted,omitzero"`
}

// ToolCall is a complete, validated tool call: Arguments holds JSON.
type ToolCall struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Arguments jsontext.Value `json:"arguments"`
}

// Validate checks the invariants a stored message must hold.
func (m Message) Validate() error {
	switch m.Role {
	case User:
	case Assistant:
		for i, c := range m.ToolCalls {
			if c.ID == "" || c.Name == "" {
				return fmt.Errorf("/toolCalls/%d: id and name are required", i)
			}
			if !c.Arguments.IsValid() {
				return fmt.Errorf("/toolCalls/%d/arguments: not valid JSON", i)
			}
		}
	case Tool:
		if m.ToolCallID == "" {
			return fmt.Errorf("/toolCallId: a tool message needs the call it answers")
		}
	case System:
		return fmt.Errorf("/role: system messages are not stored")
	default:
		return fmt.Errorf("/role: unknown role %q", m.Role)
	}
	return nil
}

// Decode parses one stored message in either spelling and validates it;
// see the package doc.
func Decode(data []byte) (Message, error) {
	var m Message
	if err := json.Unmarshal(data, &m); err != nil {
		return Message{}, err
	}
	return m, m.Validate()
}

// Text returns a user message.
func Text(role Role, content string) Message { return Message{Role: role, Content: content} }
