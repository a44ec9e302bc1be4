package tui

import (
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/transcript"
)

// The built-in presentation schemas. Tools that publish these payloads get
// terminal rendering without shipping an adapter of their own.
const (
	// SchemaShell (version 1) is a shell command and its terminal output:
	// {"command": "go test ./...", "output": "ok ...", "exitCode": 0}.
	// exitCode is omitted while the command runs.
	SchemaShell = "folio.shell"
	// SchemaDiff (version 1) is a change to one file as a unified diff:
	// {"path": "main.go", "diff": "@@ -1,3 +1,4 @@\n..."}.
	SchemaDiff = "folio.diff"
)

type shellPayload struct {
	Command  string `json:"command"`
	Output   string `json:"output"`
	ExitCode *int   `json:"exitCode,omitzero"`
}

type diffPayload struct {
	Path string `json:"path"`
	Diff string `json:"diff"`
}

var defaultRegistry = func() *Registry {
	r := NewRegistry()
	_ = r.Register(SchemaShell, 1, AdapterFunc(renderShell))
	_ = r.Register(SchemaDiff, 1, AdapterFunc(renderDiff))
	return r
}()

// DefaultRegistry returns a new registry holding the built-in adapters
// (SchemaShell and SchemaDiff, version 1), to which more can be added.
func DefaultRegistry() *Registry {
	r := NewRegistry()
	defaultRegistry.mu.RLock()
	for k, a := range defaultRegistry.m {
		r.m[k] = a
	}
	defaultRegistry.mu.RUnlock()
	return r
}

var strictPayload = json.RejectUnknownMembers(true)

func renderShell(p *transcript.Presentation, width int, th Theme) ([]string, error) {
	var v shellPayload
	if err := json.Unmarshal(p.Payload, &v, strictPayload); err != nil {
		return nil, fmt.Errorf("%w: %s v%d: %v", ErrPayload, p.Schema, p.Version, err)
	}
	pal := th.palette()
	out := styleAll(wrapIndent(oneLine(v.Command), width, "$ ", "  "), pal.bold)
	body := strings.TrimRight(sanitize(v.Output), "\n")
	if body != "" {
		for _, l := range strings.Split(body, "\n") {
			for _, w := range wrap(l, width) {
				out = append(out, pal.dim.Render(w))
			}
		}
	}
	if v.ExitCode != nil && *v.ExitCode != 0 {
		out = append(out, pal.bad.Render(fmt.Sprintf("exit status %d", *v.ExitCode)))
	}
	return out, nil
}

func renderDiff(p *transcript.Presentation, width int, th Theme) ([]string, error) {
	var v diffPayload
	if err := json.Unmarshal(p.Payload, &v, strictPayload); err != nil {
		return nil, fmt.Errorf("%w: %s v%d: %v", ErrPayload, p.Schema, p.Version, err)
	}
	pal := th.palette()
	out := []string{pal.bold.Render(truncate(oneLine(v.Path), width))}
	for _, l := range diffLines(strings.Split(strings.TrimRight(v.Diff, "\n"), "\n"), 0, width+2, pal) {
		out = append(out, strings.TrimPrefix(l, "  "))
	}
	return out, nil
}
