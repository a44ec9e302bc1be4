package message

import (
	"bytes"
	"fmt"
	"reflect"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// canonical is Message without its methods, encoded the way folio writes.
type canonical struct {
	Role         Role        `json:"role"`
	Content      string      `json:"content"`
	Reasoning    []Reasoning `json:"reasoning,omitzero"`
	ToolCalls    []ToolCall  `json:"toolCalls,omitzero"`
	ToolCallID   string      `json:"toolCallId,omitzero"`
	Name         string      `json:"name,omitzero"`
	IsError      bool        `json:"isError,omitzero"`
	Continuation bool        `json:"continuation,omitzero"`
}

func (m Message) canonical() canonical {
	return canonical{m.Role, m.Content, m.Reasoning, m.ToolCalls, m.ToolCallID, m.Name, m.IsError, m.Continuation}
}

// MarshalJSONTo writes Source when the fields still say what it says, and
// folio's canonical form otherwise.
func (m Message) MarshalJSONTo(enc *jsontext.Encoder) error {
	if len(m.Source) > 0 {
		var was Message
		if err := decodeFields(m.Source, &was); err == nil && reflect.DeepEqual(was.canonical(), m.canonical()) {
			return enc.WriteValue(m.Source)
		}
	}
	return json.MarshalEncode(enc, m.canonical(), json.Deterministic(true))
}

// UnmarshalJSONFrom reads a message in folio's or Jazz's spelling. A
// message in any other form than folio's own, with only the members folio
// interprets, keeps the bytes it was read from in Source.
func (m *Message) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	// folio's own spelling with only the members folio knows carries
	// nothing a rewrite could lose, so it needs no Source.
	if err := DecodeCanonical(jsontext.NewDecoder(bytes.NewReader(v)), m); err == nil {
		return nil
	}
	var got Message
	if err := decodeFields(v, &got); err != nil {
		return err
	}
	got.Source = bytes.Clone(v)
	*m = got
	return nil
}

// wireCall is a tool call in either spelling.
type wireCall struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Arguments jsontext.Value `json:"arguments"`
	Type      string         `json:"type"`
	Function  *struct {
		Name      string         `json:"name"`
		Arguments jsontext.Value `json:"arguments"`
	} `json:"function"`
}

// decodeFields reads the members folio interprets, in either spelling,
// and skips the rest. Two spellings of one member must agree.
func decodeFields(data []byte, m *Message) error {
	var w struct {
		Role         Role        `json:"role"`
		Content      *string     `json:"content"`
		Reasoning    []Reasoning `json:"reasoning"`
		ToolCalls    []wireCall  `json:"toolCalls"`
		ToolCallsOA  []wireCall  `json:"tool_calls"`
		ToolCallID   string      `json:"toolCallId"`
		ToolCallIDOA string      `json:"tool_call_id"`
		Name         string      `json:"name"`
		IsError      bool        `json:"isError"`
		Continuation bool        `json:"continuation"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	if w.Content == nil {
		return fmt.Errorf("/content: content is missing")
	}
	if w.ToolCalls != nil && w.ToolCallsOA != nil {
		return fmt.Errorf("/tool_calls: both toolCalls and tool_calls are present")
	}
	if w.ToolCallID != "" && w.ToolCallIDOA != "" && w.ToolCallID != w.ToolCallIDOA {
		return fmt.Errorf("/tool_call_id: toolCallId and tool_call_id disagree")
	}
	*m = Message{Role: w.Role, Content: *w.Content, Reasoning: w.Reasoning, ToolCallID: w.ToolCallID,
		Name: w.Name, IsError: w.IsError, Continuation: w.Continuation}
	if m.ToolCallID == "" {
		m.ToolCallID = w.ToolCallIDOA
	}
	calls, ptr := w.ToolCalls, "/toolCalls/"
	if w.ToolCallsOA != nil {
		calls, ptr = w.ToolCallsOA, "/tool_calls/"
	}
	for i, c := range calls {
		tc := ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
		if c.Function != nil {
			if c.Name != "" || len(c.Arguments) > 0 {
				return fmt.Errorf("%s%d: both name/arguments and function are present", ptr, i)
			}
			tc.Name = c.Function.Name
			args, err := openAIArguments(c.Function.Arguments)
			if err != nil {
				return fmt.Errorf("%s%d/function/arguments: %v", ptr, i, err)
			}
			tc.Arguments = args
		}
		m.ToolCalls = append(m.ToolCalls, tc)
	}
	return nil
}

// openAIArguments turns the OpenAI form of a call's arguments, a string
// holding JSON, into the JSON itself. A string that does not hold JSON is
// kept as that JSON string, so nothing the model produced is lost.
func openAIArguments(v jsontext.Value) (jsontext.Value, error) {
	if len(v) == 0 {
		return jsontext.Value("{}"), nil
	}
	if v.Kind() != '"' {
		return nil, fmt.Errorf("must be a string")
	}
	s, err := jsontext.AppendUnquote(nil, v)
	if err != nil {
		return nil, err
	}
	if jsontext.Value(s).IsValid() {
		return jsontext.Value(s), nil
	}
	return bytes.Clone(v), nil
}

// Typed is the text the person typed: Jazz's memorySource.text when the
// message was read with one (Jazz appends a memory tag to the model-facing
// content), else Content.
func (m Message) Typed() string {
	if len(m.Source) == 0 {
		return m.Content
	}
	var w struct {
		MemorySource *struct {
			Text *string `json:"text"`
		} `json:"memorySource"`
	}
	if json.Unmarshal(m.Source, &w) == nil && w.MemorySource != nil && w.MemorySource.Text != nil {
		return *w.MemorySource.Text
	}
	return m.Content
}

// canonicalWire is folio's own spelling, read strictly.
type canonicalWire struct {
	Role         Role        `json:"role"`
	Content      *string     `json:"content"`
	Reasoning    []Reasoning `json:"reasoning"`
	ToolCalls    []ToolCall  `json:"toolCalls"`
	ToolCallID   string      `json:"toolCallId"`
	Name         string      `json:"name"`
	IsError      bool        `json:"isError"`
	Continuation bool        `json:"continuation"`
}

// DecodeCanonical reads one message from dec in folio's own spelling,
// strictly: any other member, or a missing content, is an error, and dec is
// then somewhere inside the value. Readers use it as a fast path and fall
// back to Decode on the same bytes, which also reads Jazz's spelling.
func DecodeCanonical(dec *jsontext.Decoder, m *Message) error {
	var f canonicalWire
	if err := json.UnmarshalDecode(dec, &f, json.RejectUnknownMembers(true)); err != nil {
		return err
	}
	if f.Content == nil {
		return fmt.Errorf("/content: content is missing")
	}
	*m = Message{Role: f.Role, Content: *f.Content, Reasoning: f.Reasoning, ToolCalls: f.ToolCalls,
		ToolCallID: f.ToolCallID, Name: f.Name, IsError: f.IsError, Continuation: f.Continuation}
	return nil
}
