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
		s := &session{inv: inv, id: callID, maxLine: 2048, items: map[string]*toolview.Presentation{}}
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

// FuzzPersistentRouting feeds arbitrary output of a persistent plugin to the
// router with two calls in flight: nothing panics, each call gets at most
// one answer, and only from a line that names it.
func FuzzPersistentRouting(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","method":"presentation/replace","params":{"call":2,"schema":"s","version":1,"payload":{"v":1}}}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"result":{"content":"one"}}` + "\n" + `{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"m"}}` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":9,"result":{"content":"stray"}}` + "\n" + `{"id":"1"}` + "\n"))
	m, err := toolview.NewManifest("fz", []toolview.ToolDecl{{Name: "t", InputSchema: []byte(`{}`)}},
		[]toolview.AdapterDecl{{Schema: "s", Version: 1}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		h := toolview.New(toolview.WithCadence(0), toolview.WithPayloadLimit(1024))
		p := &Plugin{Manifest: m}
		pr := &process{maxLine: 2048, calls: map[int]*pending{}}
		var pds []*pending
		for id := 1; id <= 2; id++ {
			inv, err := h.Open(toolview.Spec{Tool: "t", Producer: m})
			if err != nil {
				t.Fatal(err)
			}
			pd := &pending{s: newSession(inv, id), done: make(chan callDone, 1)}
			pr.add(id, pd)
			pds = append(pds, pd)
		}
		r := bufio.NewReaderSize(bytes.NewReader(out), 64)
		for {
			line, size, err := readLine(r, pr.maxLine)
			if line != nil || size == 0 {
				if len(bytes.TrimSpace(line)) > 0 {
					p.route(pr, line)
				}
			}
			if err != nil {
				break
			}
		}
		for i, pd := range pds {
			select {
			case <-pd.done:
				if !bytes.Contains(out, []byte(`"id"`)) {
					t.Fatalf("call %d answered by output without an id", i+1)
				}
				if _, still := pr.calls[i+1]; still {
					t.Fatalf("call %d answered but still in flight", i+1)
				}
			default:
			}
			select {
			case <-pd.done:
				t.Fatalf("call %d answered twice", i+1)
			default:
			}
		}
	})
}
