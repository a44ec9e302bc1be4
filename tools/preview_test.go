package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodev/folio/tools/toolschema"
	"github.com/go-json-experiment/json"
)

// A preview is the presentation the call would publish, built from its
// arguments: the shell command line; a write or edit as the diff against
// the file as it is now (the edit's own text when the file cannot show it).
func TestPreviews(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\ntwo\nthree\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		tool   Previewer
		args   string
		schema string
		want   []string // substrings of the payload's text fields
		ok     bool
	}{
		{"shell", Shell{Dir: root}, `{"command":"ls -la"}`, toolschema.Shell, []string{"ls -la"}, true},
		{"shell without a command", Shell{Dir: root}, `{"command":""}`, "", nil, false},
		{"write over a file", WriteFile{Root: root}, `{"path":"a.txt","content":"one\n2\nthree\n"}`, toolschema.Diff, []string{"-two", "+2", " one"}, true},
		{"write a new file", WriteFile{Root: root}, `{"path":"new.txt","content":"hello\n"}`, toolschema.Diff, []string{"+hello"}, true},
		{"edit", EditFile{Root: root}, `{"path":"a.txt","old":"three","new":"3"}`, toolschema.Diff, []string{"-three", "+3", " two"}, true},
		{"edit of text the file lacks", EditFile{Root: root}, `{"path":"a.txt","old":"four","new":"4"}`, toolschema.Diff, []string{"-four", "+4"}, true},
		{"arguments that are not JSON", EditFile{Root: root}, `{`, "", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, ok := c.tool.Preview([]byte(c.args))
			if ok != c.ok {
				t.Fatalf("ok = %v, want %v", ok, c.ok)
			}
			if !ok {
				return
			}
			if v.Schema != c.schema || v.Version != 1 {
				t.Fatalf("schema %s v%d, want %s v1", v.Schema, v.Version, c.schema)
			}
			var m map[string]any
			if err := json.Unmarshal(v.Data, &m); err != nil {
				t.Fatal(err)
			}
			text, _ := m["command"].(string)
			if d, ok := m["diff"].(string); ok {
				text = d
			}
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("payload %s lacks %q", v.Data, w)
				}
			}
		})
	}
	// A preview reads; it never writes.
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "one\ntwo\nthree\n" {
		t.Fatalf("a preview changed the file: %q", b)
	}
	if _, err := os.Stat(filepath.Join(root, "new.txt")); err == nil {
		t.Fatal("a preview created a file")
	}
}
