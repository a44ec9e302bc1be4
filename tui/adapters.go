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
	// SchemaTask (version 1) is a sub-agent and its newest steps:
	// {"label": "scout", "child": "<region ID>", "status": "running",
	// "steps": [{"kind": "tool", "name": "shell", "summary": "ls",
	// "status": "ok", "durationMs": 12}], "omitted": 3, "answer": "…"}.
	SchemaTask = "folio.task"
	// SchemaArgs (version 1) is a call's arguments while the model still
	// writes them: {"text": "{\"command\": \"ls", "bytes": 14,
	// "truncated": false}.
	SchemaArgs = "folio.args"
)

type argsPayload struct {
	Text      string `json:"text"`
	Bytes     int64  `json:"bytes"`
	Truncated bool   `json:"truncated"`
}

type shellPayload struct {
	Command  string `json:"command"`
	Output   string `json:"output"`
	ExitCode *int   `json:"exitCode,omitzero"`
}

type diffPayload struct {
	Path string `json:"path"`
	Diff string `json:"diff"`
}

type taskStep struct {
	Kind       string   `json:"kind"`
	Name       string   `json:"name,omitzero"`
	Summary    string   `json:"summary"`
	Status     string   `json:"status"`
	DurationMs *float64 `json:"durationMs,omitzero"`
}

type taskPayload struct {
	Label   string     `json:"label"`
	Child   string     `json:"child,omitzero"`
	Status  string     `json:"status"`
	Steps   []taskStep `json:"steps,omitzero"`
	Omitted int        `json:"omitted,omitzero"`
	Answer  string     `json:"answer,omitzero"`
}

var defaultRegistry = func() *Registry {
	r := NewRegistry()
	_ = r.Register(SchemaShell, 1, AdapterFunc(renderShell))
	_ = r.Register(SchemaDiff, 1, AdapterFunc(renderDiff))
	_ = r.Register(SchemaTask, 1, AdapterFunc(renderTask))
	_ = r.Register(SchemaArgs, 1, AdapterFunc(renderArgs))
	_ = r.Register(SchemaMCP, 1, AdapterFunc(renderMCP))
	return r
}()

// DefaultRegistry returns a new registry holding the built-in adapters
// (SchemaShell, SchemaDiff, SchemaTask, SchemaArgs and SchemaMCP, version 1), to which more can be added.
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

// renderTask paints a sub-agent: its label and status, then one line per
// nested step with the same glyphs as the main receipts, so a child's calls
// read like the parent's. The answer preview is left to the tool result.
func renderTask(p *transcript.Presentation, width int, th Theme) ([]string, error) {
	var v taskPayload
	if err := json.Unmarshal(p.Payload, &v, strictPayload); err != nil {
		return nil, fmt.Errorf("%w: %s v%d: %v", ErrPayload, p.Schema, p.Version, err)
	}
	pal := th.palette()
	out := []string{pal.bold.Render(truncate(oneLine("Sub-agent: "+v.Label+" · "+v.Status), width))}
	if v.Omitted > 0 {
		out = append(out, pal.faint.Render(truncate(fmt.Sprintf("  … %d earlier steps", v.Omitted), width)))
	}
	for _, st := range v.Steps {
		glyph, style := "✓", pal.dim
		switch st.Status {
		case "running":
			glyph = "◌"
		case "failed":
			glyph, style = "✗", pal.bad
		case "denied":
			glyph, style = "⊘", pal.warn
		}
		name := st.Name
		if name == "" {
			name = st.Kind
		}
		line := glyph + " " + name
		if st.Summary != "" {
			line += " " + st.Summary
		}
		if st.DurationMs != nil && st.Status != "running" {
			line += " " + shortDuration(*st.DurationMs)
		}
		out = append(out, style.Render(truncate("  "+oneLine(line), width)))
	}
	return out, nil
}

// renderArgs shows arguments still arriving: how much so far and the tail
// of the text, on one line.
func renderArgs(p *transcript.Presentation, width int, th Theme) ([]string, error) {
	var v argsPayload
	if err := json.Unmarshal(p.Payload, &v, strictPayload); err != nil {
		return nil, fmt.Errorf("%w: %s v%d: %v", ErrPayload, p.Schema, p.Version, err)
	}
	pal := th.palette()
	head := "writing arguments · " + byteSize(v.Bytes)
	text := oneLine(v.Text)
	if room := width - textWidth(head) - 3; text != "" && room > 8 {
		if textWidth(text) > room {
			r := []rune(text)
			for textWidth(string(r)) > room-1 {
				r = r[1:]
			}
			text = "…" + string(r)
		}
		head += " · " + text
	}
	return []string{pal.faint.Render(truncate(head, width))}, nil
}
