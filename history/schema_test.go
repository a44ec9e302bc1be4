package history

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
	"github.com/go-json-experiment/json"
)

// TestSchemaMatchesTheCodec keeps docs/schema/log-v3.schema.json honest:
// every content kind the reader streams has a schema definition whose
// members are exactly the Go type's JSON members, and so does the model
// message.
func TestSchemaMatchesTheCodec(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../docs/schema/log-v3.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Defs map[string]struct {
			Properties map[string]struct {
				Const any `json:"const"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	members := func(typ reflect.Type) []string {
		var out []string
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name != "" && name != "-" {
				out = append(out, name)
			}
		}
		slices.Sort(out)
		return out
	}
	defMembers := func(def string) []string {
		var out []string
		for name := range schema.Defs[def].Properties {
			out = append(out, name)
		}
		slices.Sort(out)
		return out
	}
	byKind := map[transcript.Kind]string{}
	for name, def := range schema.Defs {
		if k, ok := def.Properties["kind"].Const.(string); ok {
			byKind[transcript.Kind(k)] = name
		}
	}
	kinds := []transcript.Content{
		transcript.User{}, transcript.Agent{}, transcript.Reasoning{}, transcript.Tool{}, transcript.Notice{},
		transcript.ReportContent{}, transcript.Header{}, transcript.TurnReceipt{}, transcript.Stopped{},
		transcript.Expanded{}, transcript.Failure{}, transcript.Steering{}, transcript.Compaction{},
	}
	if len(kinds) != len(streamKinds) {
		t.Fatalf("this test knows %d kinds, the reader streams %d", len(kinds), len(streamKinds))
	}
	for _, c := range kinds {
		def, ok := byKind[c.Kind()]
		if !ok {
			t.Errorf("schema has no definition for kind %q", c.Kind())
			continue
		}
		want := append(members(reflect.TypeOf(c)), "kind")
		slices.Sort(want)
		if got := defMembers(def); !slices.Equal(got, want) {
			t.Errorf("kind %q: schema members %v, Go members %v", c.Kind(), got, want)
		}
	}
	msgWant := append(members(reflect.TypeFor[message.Message]()), "tool_calls", "tool_call_id") // Jazz's spellings
	slices.Sort(msgWant)
	if got, want := defMembers("modelMessage"), msgWant; !slices.Equal(got, want) {
		t.Errorf("model message: schema members %v, Go members %v", got, want)
	}
	if got, want := defMembers("toolReceipt"), members(reflect.TypeFor[transcript.ToolReceipt]()); !slices.Equal(got, want) {
		t.Errorf("tool receipt: schema members %v, Go members %v", got, want)
	}
}
