package toolview

import (
	"errors"
	"strings"
	"testing"
)

func TestParseManifest(t *testing.T) {
	good := `{"name":"files","tools":[{"name":"read","inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}],
		"adapters":[{"schema":"files.view","version":1},{"schema":"files.draft","version":1,"role":"draft"}]}`
	m, err := ParseManifest([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.ValidateArguments("read", []byte(`{"path":"a"}`)); err != nil {
		t.Fatal(err)
	}
	err = m.ValidateArguments("read", []byte(`{"path":3}`))
	if !errors.Is(err, ErrInvalidArguments) || !strings.Contains(err.Error(), "/path") {
		t.Fatalf("bad arguments: %v", err)
	}
	if err := m.ValidateArguments("write", []byte(`{}`)); !errors.Is(err, ErrInvalidArguments) {
		t.Fatalf("unknown tool: %v", err)
	}
	if _, ok := m.adapter("files.view", 1); !ok {
		t.Fatal("declared adapter not found")
	}
	if a, ok := m.draftAdapter(); !ok || a.Schema != "files.draft" {
		t.Fatal("draft adapter not found")
	}

	for name, tc := range map[string]struct{ in, want string }{
		"unknown member":    {`{"name":"x","tools":[],"extra":1}`, "extra"},
		"empty name":        {`{"name":"","tools":[]}`, "/name"},
		"duplicate tool":    {`{"name":"x","tools":[{"name":"a","inputSchema":{}},{"name":"a","inputSchema":{}}]}`, "/tools/1/name"},
		"missing schema":    {`{"name":"x","tools":[{"name":"a"}]}`, "/tools/0/inputSchema"},
		"bad schema":        {`{"name":"x","tools":[{"name":"a","inputSchema":{"type":"nonsense"}}]}`, "/tools/0/inputSchema"},
		"remote ref":        {`{"name":"x","tools":[{"name":"a","inputSchema":{"$ref":"http://127.0.0.1:1/s.json"}}]}`, "/tools/0/inputSchema"},
		"file ref":          {`{"name":"x","tools":[{"name":"a","inputSchema":{"$ref":"file:///etc/passwd"}}]}`, "/tools/0/inputSchema"},
		"version zero":      {`{"name":"x","tools":[],"adapters":[{"schema":"s","version":0}]}`, "/adapters/0/version"},
		"duplicate adapter": {`{"name":"x","tools":[],"adapters":[{"schema":"s","version":1},{"schema":"s","version":1}]}`, "/adapters/1"},
		"two drafts":        {`{"name":"x","tools":[],"adapters":[{"schema":"s","version":1,"role":"draft"},{"schema":"t","version":1,"role":"draft"}]}`, "/adapters/1/role"},
		"bad role":          {`{"name":"x","tools":[],"adapters":[{"schema":"s","version":1,"role":"request"}]}`, "/adapters/0/role"},
		"spacey name":       {`{"name":"a b","tools":[]}`, "/name"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseManifest([]byte(tc.in))
			if !errors.Is(err, ErrInvalidManifest) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrInvalidManifest naming %q", err, tc.want)
			}
		})
	}
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"name":"x","tools":[{"name":"a","inputSchema":{"type":"object"}}],"adapters":[{"schema":"s","version":1}]}`))
	f.Add([]byte(`{"name":"x","tools":[]}`))
	f.Add([]byte(`{"name":"x","tools":[{"name":"a","inputSchema":{"$ref":"#/definitions/d","definitions":{"d":{"type":"string"}}}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidManifest) {
				t.Fatalf("error does not wrap ErrInvalidManifest: %v", err)
			}
			return
		}
		for _, tool := range m.Tools {
			_ = m.ValidateArguments(tool.Name, []byte(`{"a":[1,"b",null]}`))
		}
	})
}
