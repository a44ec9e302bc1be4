package tui

import (
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/mcp/mcpschema"
	"github.com/foliodev/folio/transcript"
)

// mcpTextLines bounds how much of a result's text the terminal shows; the
// model and the log keep the rest.
const mcpTextLines = 12

// renderMCP paints an MCP call: a head line (server, tool, status), a
// progress meter while it runs, then its content blocks, with images and
// other binary blocks named by type, size and artifact, never drawn.
func renderMCP(p *transcript.Presentation, width int, th Theme) ([]string, error) {
	var v mcpschema.Call
	if err := json.Unmarshal(p.Payload, &v, strictPayload); err != nil {
		return nil, fmt.Errorf("%w: %s v%d: %v", ErrPayload, p.Schema, p.Version, err)
	}
	pal := th.palette()
	head := pal.bold
	if v.Status == mcpschema.StatusError {
		head = pal.bad
	}
	out := []string{head.Render(truncate(oneLine(v.Server+" · "+v.Tool+" · "+v.Status), width))}
	if v.Status == mcpschema.StatusRunning && (v.Updates > 0 || v.Total > 0) {
		line := meterLine(v.Progress, v.Total, pal)
		if v.Message != "" {
			line += " " + oneLine(v.Message)
		}
		out = append(out, truncate("  "+line, width))
	} else if v.Message != "" && len(v.Content) == 0 {
		out = append(out, pal.dim.Render(truncate("  "+oneLine(v.Message), width)))
	}
	shown := 0
	for _, b := range v.Content {
		switch b.Type {
		case "text":
			body := strings.Split(strings.TrimRight(sanitize(b.Text), "\n"), "\n")
			for _, l := range body {
				if shown >= mcpTextLines {
					break
				}
				for _, w := range wrap(l, max(width-2, 1)) {
					if shown >= mcpTextLines {
						break
					}
					out = append(out, pal.text.Render("  "+w))
					shown++
				}
			}
			if b.Truncated || shown >= mcpTextLines && len(body) > mcpTextLines {
				note := "  …"
				if b.Bytes > 0 {
					note += " " + byteSize(b.Bytes) + " in all"
				}
				if b.Ref != "" {
					note += ", kept as an artifact"
				}
				out = append(out, pal.faint.Render(truncate(note, width)))
			}
		case "image", "audio", "resource":
			line := "▣ " + b.Type
			if b.ContentType != "" {
				line += " " + b.ContentType
			}
			if b.URI != "" {
				line += " " + b.URI
			}
			line += " · " + byteSize(b.Bytes)
			if b.Ref != "" {
				line += " · artifact " + shortRef(b.Ref)
			}
			out = append(out, pal.accent.Render(truncate("  "+oneLine(line), width)))
		case "resource_link":
			name := b.Title
			if name == "" {
				name = b.Name
			}
			out = append(out, pal.info.Render(truncate("  ↗ "+oneLine(strings.TrimSpace(name+" "+b.URI)), width)))
		}
	}
	if v.Omitted > 0 {
		out = append(out, pal.faint.Render(truncate(fmt.Sprintf("  … %d more blocks", v.Omitted), width)))
	}
	return out, nil
}

// meterLine is a ten-cell meter and "2/4", or only the count when the
// total is unknown.
func meterLine(progress, total float64, pal *palette) string {
	if total <= 0 {
		return fmt.Sprintf("%g", progress)
	}
	on := int(10 * min(max(progress/total, 0), 1))
	return pal.meterOn.Render(strings.Repeat("█", on)) + pal.meterOff.Render(strings.Repeat("░", 10-on)) +
		fmt.Sprintf(" %g/%g", progress, total)
}

func shortRef(ref string) string {
	if len(ref) > 8 {
		return ref[:8]
	}
	return ref
}
