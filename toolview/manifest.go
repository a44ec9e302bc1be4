package toolview

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Manifest declares a producer: its name, the tools it offers with a JSON
// Schema for each tool's arguments, and the presentation adapters (schema name
// and version) its updates may use. The host rejects any update whose schema
// and version the manifest does not declare.
type Manifest struct {
	Name     string        `json:"name"`
	Tools    []ToolDecl    `json:"tools"`
	Adapters []AdapterDecl `json:"adapters,omitzero"`
	tools    map[string]*jsonschema.Schema
}

// ToolDecl is one tool a producer offers.
type ToolDecl struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitzero"`
	InputSchema jsontext.Value `json:"inputSchema"`
	// Artifacts asks the host to create an artifact for each call of an
	// out-of-process plugin tool, so the plugin can append output to it.
	Artifacts bool `json:"artifacts,omitzero"`
}

// AdapterRole says what an adapter displays.
type AdapterRole string

// Adapter roles. A draft adapter displays the host-built argument draft; at
// most one may be declared.
const (
	RolePresentation AdapterRole = "presentation"
	RoleDraft        AdapterRole = "draft"
)

// AdapterDecl names a payload schema and version a renderer adapter knows.
type AdapterDecl struct {
	Schema  string      `json:"schema"`
	Version int64       `json:"version"`
	Role    AdapterRole `json:"role,omitzero"`
}

// Bounds on manifest fields, so a manifest cannot make the host hold or print
// unbounded strings.
const (
	maxNameLen     = 128
	maxSchemaBytes = 64 << 10
)

var strictJSON = json.JoinOptions(json.RejectUnknownMembers(true), jsontext.AllowDuplicateNames(false))

// ParseManifest decodes and validates a manifest strictly: unknown members,
// duplicate names, empty or overlong names, repeated tools or adapters, more
// than one draft adapter and argument schemas that do not compile are errors
// naming the field.
func ParseManifest(data []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(data, &m, strictJSON); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidManifest, err)
	}
	if err := m.compile(); err != nil {
		return nil, err
	}
	return &m, nil
}

// NewManifest validates a manifest built in Go, as ParseManifest does.
func NewManifest(name string, tools []ToolDecl, adapters []AdapterDecl) (*Manifest, error) {
	m := &Manifest{Name: name, Tools: tools, Adapters: adapters}
	if err := m.compile(); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *Manifest) compile() error {
	bad := func(ptr, format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrInvalidManifest, ptr, fmt.Sprintf(format, args...))
	}
	if err := checkName(m.Name); err != nil {
		return bad("/name", "%v", err)
	}
	m.tools = make(map[string]*jsonschema.Schema, len(m.Tools))
	for i, t := range m.Tools {
		ptr := fmt.Sprintf("/tools/%d", i)
		if err := checkName(t.Name); err != nil {
			return bad(ptr+"/name", "%v", err)
		}
		if _, dup := m.tools[t.Name]; dup {
			return bad(ptr+"/name", "tool %q is declared twice", t.Name)
		}
		sch, err := compileSchema(t.InputSchema)
		if err != nil {
			return bad(ptr+"/inputSchema", "%v", err)
		}
		m.tools[t.Name] = sch
	}
	seen := map[AdapterDecl]bool{}
	drafts := 0
	for i, a := range m.Adapters {
		ptr := fmt.Sprintf("/adapters/%d", i)
		if err := checkName(a.Schema); err != nil {
			return bad(ptr+"/schema", "%v", err)
		}
		if a.Version < 1 {
			return bad(ptr+"/version", "must be 1 or more, got %d", a.Version)
		}
		switch a.Role {
		case "", RolePresentation:
		case RoleDraft:
			drafts++
			if drafts > 1 {
				return bad(ptr+"/role", "only one draft adapter may be declared")
			}
		default:
			return bad(ptr+"/role", "role %q is not presentation or draft", a.Role)
		}
		key := AdapterDecl{Schema: a.Schema, Version: a.Version}
		if seen[key] {
			return bad(ptr, "adapter %s v%d is declared twice", a.Schema, a.Version)
		}
		seen[key] = true
	}
	return nil
}

func checkName(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("is empty")
	case len(s) > maxNameLen:
		return fmt.Errorf("is %d bytes, over the %d-byte limit", len(s), maxNameLen)
	case strings.ContainsAny(s, " \t\r\n\"\\"):
		return fmt.Errorf("%q contains whitespace, quotes or backslashes", s)
	}
	return nil
}

// compileSchema compiles a tool's argument schema with every URL loader
// disabled, so a manifest can never make the host read files or the network.
func compileSchema(raw jsontext.Value) (*jsonschema.Schema, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("is missing")
	}
	if len(raw) > maxSchemaBytes {
		return nil, fmt.Errorf("is %d bytes, over the %d-byte limit", len(raw), maxSchemaBytes)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	const loc = "folio:tool-arguments.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	return c.Compile(loc)
}

// adapter reports whether the manifest declares schema@version, and its role.
func (m *Manifest) adapter(schema string, version int64) (AdapterRole, bool) {
	if m == nil {
		return "", false
	}
	for _, a := range m.Adapters {
		if a.Schema == schema && a.Version == version {
			if a.Role == "" {
				return RolePresentation, true
			}
			return a.Role, true
		}
	}
	return "", false
}

// draftAdapter returns the declared draft adapter, if any.
func (m *Manifest) draftAdapter() (AdapterDecl, bool) {
	if m == nil {
		return AdapterDecl{}, false
	}
	for _, a := range m.Adapters {
		if a.Role == RoleDraft {
			return a, true
		}
	}
	return AdapterDecl{}, false
}

// Tool returns the declaration of the named tool.
func (m *Manifest) Tool(name string) (ToolDecl, bool) {
	for _, t := range m.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return ToolDecl{}, false
}

// ValidateArguments checks complete arguments against the named tool's
// schema. The error wraps ErrInvalidArguments and says where the arguments
// are wrong; it is meant for the model, never for logs.
func (m *Manifest) ValidateArguments(tool string, args []byte) error {
	sch, ok := m.tools[tool]
	if !ok {
		return fmt.Errorf("%w: manifest %q declares no tool %q", ErrInvalidArguments, m.Name, tool)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return fmt.Errorf("%w: arguments are not valid JSON: %v", ErrInvalidArguments, err)
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidArguments, err)
	}
	return nil
}
