package tools

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/tools/toolschema"
	"github.com/foliodev/folio/toolview"
)

// ProducerName is the manifest name of the built-in tools.
const ProducerName = "folio.builtin"

// Tool is one built-in tool.
type Tool interface {
	// Decl is the tool's name, description and argument schema.
	Decl() toolview.ToolDecl
	// NeedsApproval reports whether a call must be approved by the person
	// (or allowed for the session or by a flag) before it runs.
	NeedsApproval() bool
	// Run performs the call. It has the signature of toolview.ToolFunc.
	Run(ctx context.Context, inv *toolview.Invocation, args []byte) (toolview.Result, error)
}

// Previewer is implemented by a tool that can show a call before it runs:
// Preview returns the presentation the call would publish, in one of the
// tool's own schemas, built from its arguments alone (a read of the
// workspace at most). An approval prompt shows it through the same adapter
// that paints the tool's entry, so the person judges the call in the
// tool's terms, not as JSON. ok is false when args do not make one.
type Previewer interface {
	Preview(args []byte) (p toolview.Payload, ok bool)
}

var (
	_ Previewer = Shell{}
	_ Previewer = WriteFile{}
	_ Previewer = EditFile{}
)

// Presenter is implemented by a tool that publishes presentation schemas of
// its own (an MCP tool's progress, say): NewSet declares them in the set's
// manifest beside the built-in ones, so the host accepts its updates.
type Presenter interface {
	Adapters() []toolview.AdapterDecl
}

// Set is a fixed collection of tools with the manifest that declares them to
// the presentation host.
type Set struct {
	tools    []Tool
	byName   map[string]Tool
	manifest *toolview.Manifest
}

// NewSet builds a set and its manifest. Tool names must be unique.
func NewSet(ts ...Tool) (*Set, error) {
	s := &Set{byName: map[string]Tool{}}
	decls := make([]toolview.ToolDecl, 0, len(ts))
	for _, t := range ts {
		d := t.Decl()
		if _, dup := s.byName[d.Name]; dup {
			return nil, fmt.Errorf("tools: %q is in the set twice", d.Name)
		}
		s.byName[d.Name] = t
		s.tools = append(s.tools, t)
		decls = append(decls, d)
	}
	adapters := []toolview.AdapterDecl{
		{Schema: toolschema.Shell, Version: 1},
		{Schema: toolschema.Diff, Version: 1},
		{Schema: toolschema.Task, Version: 1},
		{Schema: toolschema.Args, Version: 1, Role: toolview.RoleDraft},
	}
	for _, t := range ts {
		if p, ok := t.(Presenter); ok {
			for _, a := range p.Adapters() {
				if !slices.ContainsFunc(adapters, func(b toolview.AdapterDecl) bool {
					return a.Schema == b.Schema && a.Version == b.Version
				}) {
					adapters = append(adapters, a)
				}
			}
		}
	}
	m, err := toolview.NewManifest(ProducerName, decls, adapters)
	if err != nil {
		return nil, err
	}
	s.manifest = m
	return s, nil
}

// Builtin returns the standard set rooted at dir: shell, read_file,
// write_file, edit_file, list_files, and task when sp is not nil.
func Builtin(dir string, sp Spawner) (*Set, error) {
	ts := []Tool{
		Shell{Dir: dir},
		ReadFile{Root: dir},
		WriteFile{Root: dir},
		EditFile{Root: dir},
		ListFiles{Root: dir},
	}
	if sp != nil {
		ts = append(ts, Task{Spawner: sp})
	}
	return NewSet(ts...)
}

// With returns a set holding s's tools followed by more (MCP tools beside
// the built-ins). Names must stay unique.
func (s *Set) With(more ...Tool) (*Set, error) {
	return NewSet(append(slices.Clone(s.tools), more...)...)
}

// Manifest declares the set's tools and adapters to the host.
func (s *Set) Manifest() *toolview.Manifest { return s.manifest }

// Get returns the tool with the given name.
func (s *Set) Get(name string) (Tool, bool) {
	t, ok := s.byName[name]
	return t, ok
}

// Names lists the tools in the set's order.
func (s *Set) Names() []string {
	out := make([]string, len(s.tools))
	for i, t := range s.tools {
		out[i] = t.Decl().Name
	}
	return out
}

// Without returns a set without the named tools (the engine gives child
// agents a set without task, so they cannot spawn further children).
func (s *Set) Without(names ...string) *Set {
	var keep []Tool
	for _, t := range s.tools {
		drop := false
		for _, n := range names {
			drop = drop || t.Decl().Name == n
		}
		if !drop {
			keep = append(keep, t)
		}
	}
	out, _ := NewSet(keep...) // a subset of a valid set is valid
	return out
}

// Specs are the tool descriptions sent to the model.
func (s *Set) Specs() []provider.ToolSpec {
	out := make([]provider.ToolSpec, len(s.tools))
	for i, t := range s.tools {
		d := t.Decl()
		out[i] = provider.ToolSpec{Name: d.Name, Description: d.Description, Schema: d.InputSchema}
	}
	return out
}

// decode reads complete arguments into v. The host validated them against
// the schema already; this only maps them onto the Go type.
func decode(args []byte, v any) error {
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("arguments: %v", err)
	}
	return nil
}

// payload encodes v as a presentation payload.
func payload(schema string, v any) toolview.Payload {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{}`)
	}
	return toolview.Payload{Schema: schema, Version: 1, Data: b}
}

func schema(s string) jsontext.Value { return jsontext.Value(s) }

// resolve maps a tool path onto the workspace root. Relative paths are taken
// from root; a relative path may not climb above it. Absolute paths are
// allowed as they are: the person approves writes, and reads are theirs.
func resolve(root, p string) (string, error) {
	if p == "" {
		p = "."
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	clean := filepath.Clean(p)
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%w: %s", ErrOutsideRoot, p)
	}
	if root == "" {
		root = "."
	}
	return filepath.Join(root, clean), nil
}

// clip returns at most n bytes of s, cut at a line or rune boundary, and
// whether it cut.
func clip(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	cut := s[:n]
	if i := strings.LastIndexByte(cut, '\n'); i > n/2 {
		cut = cut[:i+1]
	}
	for len(cut) > 0 && !validEnd(cut) {
		cut = cut[:len(cut)-1]
	}
	return cut, true
}

func validEnd(s string) bool {
	// A string ends on a rune boundary when its last rune decodes fully.
	for i := len(s) - 1; i >= 0 && i >= len(s)-4; i-- {
		c := s[i]
		if c < 0x80 {
			return true
		}
		if c >= 0xC0 {
			need := 2
			switch {
			case c >= 0xF0:
				need = 4
			case c >= 0xE0:
				need = 3
			}
			return len(s)-i == need
		}
	}
	return false
}

// tail returns the last n bytes of s, starting at a rune boundary.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	t := s[len(s)-n:]
	for len(t) > 0 && t[0]&0xC0 == 0x80 {
		t = t[1:]
	}
	return t
}
