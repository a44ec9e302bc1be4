package tui

import (
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/mcp/mcpschema"
	"github.com/foliodev/folio/tools/toolschema"
	"github.com/foliodev/folio/transcript"
)

// The built-in presentation schemas are package toolschema's: tools that
// publish those values get terminal rendering without an adapter of their
// own.

var defaultRegistry = func() *Registry {
	r := NewRegistry()
	_ = r.Register(toolschema.Shell, 1, AdapterFunc(renderShell))
	_ = r.Register(toolschema.Diff, 1, AdapterFunc(renderDiff))
	_ = r.Register(toolschema.Task, 1, AdapterFunc(renderTask))
	_ = r.Register(toolschema.Args, 1, AdapterFunc(renderArgs))
	_ = r.Register(mcpschema.Progress, 1, AdapterFunc(renderMCP))
	return r
}()

// DefaultRegistry returns a new registry holding the built-in adapters
// (toolschema.Shell, toolschema.Diff, toolschema.Task, toolschema.Args and mcpschema.Progress, version 1), to which more can be added.
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
	var v toolschema.ShellView
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
	var v toolschema.DiffView
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
	var v toolschema.TaskView
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
	var v toolschema.ArgsDraft
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
