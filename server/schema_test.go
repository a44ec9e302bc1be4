package server

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/transcript"
)

// TestProtocolSchemaMatchesTheFrames keeps docs/schema/protocol.schema.json
// equal to the frames the server reads and writes: each definition's
// members are exactly its Go type's JSON members. The event definitions
// (one per op) together have exactly eventFrame's members, and the command
// definitions together commandFrame's; every op and command kind the
// server knows has its definition.
func TestProtocolSchemaMatchesTheFrames(t *testing.T) {
	raw, err := os.ReadFile("../docs/schema/protocol.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Defs map[string]struct {
			Properties map[string]struct {
				Const string `json:"const"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &schema, json.RejectUnknownMembers(false)); err != nil {
		t.Fatal(err)
	}
	var members func(reflect.Type) []string
	members = func(typ reflect.Type) []string {
		var out []string
		for f := range typ.Fields() {
			if f.Anonymous {
				out = append(out, members(f.Type)...)
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name != "" && name != "-" {
				out = append(out, name)
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	defMembers := func(defs ...string) []string {
		var out []string
		for _, d := range defs {
			def, ok := schema.Defs[d]
			if !ok {
				t.Errorf("the schema has no definition %q", d)
			}
			for name := range def.Properties {
				out = append(out, name)
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	for def, typ := range map[string]reflect.Type{
		"hello":                  reflect.TypeFor[helloFrame](),
		"open":                   reflect.TypeFor[openFrame](),
		"since":                  reflect.TypeFor[sinceMark](),
		"pageRequest":            reflect.TypeFor[pageRequest](),
		"release":                reflect.TypeFor[releaseFrame](),
		"unfollow":               reflect.TypeFor[unfollowFrame](),
		"entry":                  reflect.TypeFor[entryRequest](),
		"entryAnswer":            reflect.TypeFor[entryFrame](),
		"welcome":                reflect.TypeFor[welcomeFrame](),
		"status":                 reflect.TypeFor[statusFrame](),
		"limits":                 reflect.TypeFor[limits](),
		"error":                  reflect.TypeFor[errorFrame](),
		"snapshot":               reflect.TypeFor[snapshotFrame](),
		"checkpoint":             reflect.TypeFor[checkpoint](),
		"checkpointEntry":        reflect.TypeFor[checkpointEntry](),
		"checkpointPresentation": reflect.TypeFor[checkpointPres](),
		"controlState":           reflect.TypeFor[controlState](),
		"turnState":              reflect.TypeFor[TurnState](),
		"turnRetry":              reflect.TypeFor[TurnRetry](),
		"usage":                  reflect.TypeFor[Usage](),
		"childState":             reflect.TypeFor[ChildState](),
		"queueItem":              reflect.TypeFor[QueueItem](),
		"approvalItem":           reflect.TypeFor[ApprovalItem](),
		"receipt":                reflect.TypeFor[Receipt](),
		"receiptAnswer":          reflect.TypeFor[receiptFrame](),
	} {
		if got, want := defMembers(def), members(typ); !slices.Equal(got, want) {
			t.Errorf("%s: schema members %v, Go members %v", def, got, want)
		}
	}

	// Events: one definition per op.
	var events []string
	ops := map[string]bool{}
	for name, def := range schema.Defs {
		if strings.HasPrefix(name, "event") && def.Properties["op"].Const != "" {
			events = append(events, name)
			ops[def.Properties["op"].Const] = true
		}
	}
	if got, want := defMembers(events...), members(reflect.TypeFor[eventFrame]()); !slices.Equal(got, want) {
		t.Errorf("events: schema members %v, Go members %v", got, want)
	}
	for _, op := range []ChangeOp{OpUpsert, OpSettle, OpAppend, OpPresentation, OpReplaced, OpHead, OpQueue, OpTurn, OpReceipt, OpApprovals, "deleted"} {
		if !ops[string(op)] {
			t.Errorf("no event definition for op %q", op)
		}
	}

	// Commands: one definition per kind, with the members needs allows.
	cmdDefs := map[string]string{cmdSend: "send", cmdSteer: "steer", cmdStop: "stop", cmdApprove: "approve",
		cmdRetry: "retry", cmdEdit: "edit", cmdSelectBranch: "selectBranch", cmdDismiss: "dismiss"}
	if len(cmdDefs) != len(needs) {
		t.Fatalf("this test knows %d commands, the server %d", len(cmdDefs), len(needs))
	}
	var all []string
	for kind, def := range cmdDefs {
		all = append(all, def)
		if c := schema.Defs[def].Properties["type"].Const; c != kind {
			t.Errorf("%s: type %q, want %q", def, c, kind)
		}
		want := append(strings.Fields(needs[kind].allowed), "type", "id", "conversation", "commandId")
		slices.Sort(want)
		if got := defMembers(def); !slices.Equal(got, want) {
			t.Errorf("%s: schema members %v, the server allows %v", def, got, want)
		}
	}
	if got, want := defMembers(all...), members(reflect.TypeFor[commandFrame]()); !slices.Equal(got, want) {
		t.Errorf("commands: schema members %v, Go members %v", got, want)
	}
}

// TestCommandStatesAreOneVocabulary: the protocol's command states are
// exactly package transcript's, which the engine's receipts and its
// receipts sidecar use too, and receipts and queue items name them
// through that one definition.
func TestCommandStatesAreOneVocabulary(t *testing.T) {
	raw, err := os.ReadFile("../docs/schema/protocol.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Defs map[string]struct {
			Enum       []string `json:"enum"`
			Properties map[string]struct {
				Ref string `json:"$ref"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &schema, json.RejectUnknownMembers(false)); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, s := range transcript.CommandStates() {
		want = append(want, string(s))
	}
	if got := schema.Defs["commandState"].Enum; !slices.Equal(got, want) {
		t.Errorf("schema commandState %v, transcript's states %v", got, want)
	}
	for _, def := range []string{"receipt", "queueItem"} {
		if ref := schema.Defs[def].Properties["state"].Ref; ref != "#/$defs/commandState" {
			t.Errorf("%s.state is %q, not the command states", def, ref)
		}
	}
	// The engine's states are transcript's, by type.
	for _, s := range []engine.State{engine.Queued, engine.Running, engine.Applied, engine.Done, engine.Failed, engine.Stopped, engine.Rejected, engine.Removed} {
		if !slices.Contains(want, string(s)) {
			t.Errorf("engine state %q is not a command state", s)
		}
	}
}
