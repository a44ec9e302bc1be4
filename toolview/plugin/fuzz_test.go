package plugin

import (
	"bufio"
	"bytes"
	"testing"

	"github.com/foliodev/folio/toolview"
)

// FuzzPluginOutput feeds arbitrary plugin output through the line reader and
// message handler: nothing may panic, the result is found only in a real
// response, and the host keeps working afterwards.
func FuzzPluginOutput(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","method":"presentation/replace","params":{"call":1,"schema":"s","version":1,"payload":{"v":1}}}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"result":{"content":"done"}}` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"presentation/replaceArtifact","params":{"call":1,"schema":"s","version":1,"ref":"x","committedBytes":5,"available":true}}` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}`))
	f.Add([]byte("not json\n\n{}\n"))
	m, err := toolview.NewManifest("fz", []toolview.ToolDecl{{Name: "t", InputSchema: []byte(`{}`)}},
		[]toolview.AdapterDecl{{Schema: "s", Version: 1}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		h := toolview.New(toolview.WithCadence(0), toolview.WithPayloadLimit(1024))
		inv, err := h.Open(toolview.Spec{Tool: "t", Producer: m})
		if err != nil {
			t.Fatal(err)
		}
		s := &session{inv: inv, maxLine: 2048, items: map[string]*toolview.Presentation{}}
		r := bufio.NewReaderSize(bytes.NewReader(out), 64)
		_, _, done := s.readUntilResult(r)
		if done && !bytes.Contains(out, []byte(`"id"`)) {
			t.Fatalf("a result was found in output without an id")
		}
		s.drainAfterResult(r)
		rec, err := inv.Close(toolview.Outcome{}, toolview.Result{})
		if err != nil {
			t.Fatal(err)
		}
		if p := rec.Presentation; p != nil && int64(len(p.Payload)) > 1024 {
			t.Fatalf("retained payload of %d bytes beyond the bound", len(p.Payload))
		}
	})
}
