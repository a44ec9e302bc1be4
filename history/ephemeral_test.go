package history

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/foliodev/folio/transcript"
)

// An open tool entry is saved as its durable view: its argument draft and
// its ephemeral supplemental stay out of the file, its retained
// supplemental goes in, a change to an ephemeral value alone writes
// nothing, and the document the caller holds keeps every value.
func TestOpenToolSavesOnlyItsDurableView(t *testing.T) {
	t.Parallel()
	const canary = "CANARY-history-ephemeral"
	pres := func(payload string, ephemeral bool) transcript.Presentation {
		return transcript.Presentation{Schema: "test.v", Version: 1, Revision: 1,
			Payload: transcript.RawJSON(payload), Ephemeral: ephemeral}
	}
	draft := pres(`{"draft":"`+canary+`"}`, true)
	tool := transcript.Tool{
		Receipt:      transcript.ToolReceipt{App: "work", Summary: "work", Status: transcript.ToolFailed, Reason: "running"},
		InvocationID: "t1",
		Presentation: &draft,
		Supplementals: []transcript.KeyedPresentation{
			{Key: "spinner", Presentation: pres(`{"note":"`+canary+`"}`, true)},
			{Key: "stats", Presentation: pres(`{"files":12}`, false)},
		},
	}
	path := logPath(t)
	l := open(t, path)
	d := doc(t, user("u1", "go"))
	d, err := d.Open(transcript.Entry{ID: "t1", Content: tool, Timestamp: t0})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Save(d, msgs("go")); err != nil {
		t.Fatal(err)
	}
	data := readFile(t, path)
	if bytes.Contains(data, []byte(canary)) {
		t.Fatalf("the log holds an ephemeral value:\n%s", data)
	}
	if !bytes.Contains(data, []byte(`"files":12`)) {
		t.Fatalf("the open tool's retained supplemental is not in the log:\n%s", data)
	}

	// A new ephemeral value alone changes nothing on disk.
	spin := tool
	spin.Supplementals = []transcript.KeyedPresentation{
		{Key: "spinner", Presentation: pres(`{"note":"`+canary+`-2"}`, true)}, tool.Supplementals[1]}
	if d, err = d.Update("t1", spin); err != nil {
		t.Fatal(err)
	}
	if err := l.Save(d, msgs("go")); err != nil {
		t.Fatal(err)
	}
	if again := readFile(t, path); !bytes.Equal(again, data) {
		t.Fatalf("an ephemeral change wrote %d bytes", len(again)-len(data))
	}

	got := readConv(t, data).Document
	if got.Len() != 2 {
		t.Fatalf("read back %d entries", got.Len())
	}
	want := transcript.Tool{Receipt: tool.Receipt, InvocationID: "t1", Supplementals: tool.Supplementals[1:]}
	if rt := got.At(1).Content.(transcript.Tool); !reflect.DeepEqual(rt, want) {
		t.Fatalf("read back %+v\nwant %+v", rt, want)
	}
	if live := d.At(1).Content.(transcript.Tool); live.Presentation == nil || len(live.Supplementals) != 2 {
		t.Fatalf("the caller's document lost its ephemeral values: %+v", live)
	}
}
