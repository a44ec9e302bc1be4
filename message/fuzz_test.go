package message

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json"
)

// FuzzDecode: the decoder never panics; a message it reads and that
// validates is written back as the bytes it was read from, and reads back
// as the same message.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"role":"user","content":"hi"}`,
		`{"role":"user","content":"plan\n\n[memory source user:abc]","memorySource":{"id":"user:abc","text":"plan"}}`,
		`{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"},"thought_signature":"s"}],"reasoning_parts":[{"text":"t","provider":"anthropic","providerOptions":{"anthropic":{"signature":"x"}}}]}`,
		`{"role":"tool","content":"x","tool_call_id":"call_1","name":"read_file","cleared":true}`,
		`{"role":"assistant","content":"summary","kind":"summary"}`,
		`{"role":"assistant","content":"","toolCalls":[{"id":"c","name":"n","arguments":{"a":1}}]}`,
		`{"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"n","arguments":"not json"}}]}`,
		`{"role":"system","content":"You are helpful."}`,
		`{"role":"user"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		if err != nil {
			return
		}
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("a decoded message does not encode: %v", err)
		}
		if !bytes.Equal(out, data) && m.Source != nil {
			t.Fatalf("not written back as read:\n%s\n%s", data, out)
		}
		back, err := Decode(out)
		if err != nil {
			t.Fatalf("written form does not decode: %v\n%s", err, out)
		}
		if back.Role != m.Role || back.Content != m.Content || back.ToolCallID != m.ToolCallID || len(back.ToolCalls) != len(m.ToolCalls) {
			t.Fatalf("round trip changed the message:\n%+v\n%+v", m, back)
		}
		for i, c := range m.ToolCalls {
			if back.ToolCalls[i].ID != c.ID || !bytes.Equal(back.ToolCalls[i].Arguments, c.Arguments) {
				t.Fatalf("tool call %d changed", i)
			}
		}
	})
}
