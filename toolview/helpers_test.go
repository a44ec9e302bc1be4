package toolview

import (
	"fmt"
	"sync"
	"testing"
)

const (
	schemaText  = "test.text"
	schemaDraft = "test.draft"
)

func testManifest(t testing.TB) *Manifest {
	t.Helper()
	m, err := NewManifest("test-plugin",
		[]ToolDecl{{
			Name:        "echo",
			InputSchema: []byte(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`),
		}},
		[]AdapterDecl{
			{Schema: schemaText, Version: 1},
			{Schema: schemaDraft, Version: 1, Role: RoleDraft},
		})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func text(s string) Payload {
	return Payload{Schema: schemaText, Version: 1, Data: fmt.Appendf(nil, `{"text":%q}`, s)}
}

// recorder collects the changes a host publishes.
type recorder struct {
	mu      sync.Mutex
	changes []Change
}

func (r *recorder) add(c Change) {
	r.mu.Lock()
	r.changes = append(r.changes, c)
	r.mu.Unlock()
}

func (r *recorder) all() []Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Change(nil), r.changes...)
}

func record(h *Host) *recorder {
	r := &recorder{}
	h.Subscribe(r.add)
	return r
}

func mustOpen(t testing.TB, h *Host, spec Spec) *Invocation {
	t.Helper()
	inv, err := h.Open(spec)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func rejectReason(t *testing.T, err error) Reason {
	t.Helper()
	rej, ok := err.(*RejectError)
	if !ok {
		t.Fatalf("error %v (%T) is not a *RejectError", err, err)
	}
	return rej.Reason
}
