package tui

import (
	"errors"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/foliodev/folio/mcp/mcpschema"
	"github.com/foliodev/folio/transcript"
)

func mcpEntry(payload string, status transcript.ToolStatus) transcript.Entry {
	pres := &transcript.Presentation{Schema: mcpschema.Progress, Version: 1, Revision: 3, Payload: transcript.RawJSON(payload)}
	return ent("m", transcript.Tool{Receipt: transcript.ToolReceipt{App: "demo__progress", Summary: "progress", Status: status, DurationMs: f64(800)}, Presentation: pres})
}

// While an MCP call runs its entry shows one meter line that each progress
// value replaces; at the end the text and an image named by its artifact.
func TestMCPAdapter(t *testing.T) {
	t.Parallel()
	const width = 60
	p := NewPainter(DarkTheme)
	running := ansi.Strip(strings.Join(p.Paint(Run{Entries: []transcript.Entry{mcpEntry(
		`{"server":"demo","tool":"progress","status":"running","progress":2,"total":4,"message":"step 2 of 4","updates":2}`, transcript.ToolOK)}}, width), "\n"))
	for _, w := range []string{"demo · progress · running", "█████░░░░░ 2/4 step 2 of 4"} {
		if !strings.Contains(running, w) {
			t.Fatalf("running view lacks %q:\n%s", w, running)
		}
	}
	lines := p.Paint(Run{Entries: []transcript.Entry{mcpEntry(`{"server":"demo","tool":"progress","status":"ok","progress":4,"total":4,"updates":4,`+
		`"content":[{"type":"text","text":"counted 4 steps"},{"type":"image","contentType":"image/png","bytes":2048,"item":"image-1","ref":"0123456789abcdef0123456789abcdef"},`+
		`{"type":"resource_link","uri":"file:///tmp/report.txt","name":"report"}]}`, transcript.ToolOK)}}, width)
	final := ansi.Strip(strings.Join(lines, "\n"))
	order := []string{"demo · progress · ok", "counted 4 steps", "▣ image image/png · 2.0 KiB · artifact 01234567", "↗ report file:///tmp/report.txt"}
	at := 0
	for _, w := range order {
		i := strings.Index(final[at:], w)
		if i < 0 {
			t.Fatalf("%q missing or out of order in:\n%s", w, final)
		}
		at += i + len(w)
	}
	if strings.Contains(final, "step 2 of 4") || strings.Contains(final, "░") {
		t.Fatalf("the final view still shows progress:\n%s", final)
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > width {
			t.Errorf("line %d is %d columns, wider than %d", i, w, width)
		}
	}
	golden(t, "paint_presentation_mcp", paintGrid(width, lines))
}

func TestMCPAdapterLongTextAndStrictness(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("line\\n", 40)
	out, err := renderMCP(&transcript.Presentation{Schema: mcpschema.Progress, Version: 1, Payload: transcript.RawJSON(
		`{"server":"s","tool":"t","status":"ok","content":[{"type":"text","text":"` + long + `","truncated":true,"bytes":90000,"item":"result","ref":"ab"}]}`)}, 40, DarkTheme)
	if err != nil {
		t.Fatal(err)
	}
	plain := ansi.Strip(strings.Join(out, "\n"))
	if strings.Count(plain, "line") != mcpTextLines || !strings.Contains(plain, "… 87.9 KiB in all, kept as an artifact") {
		t.Fatalf("long text:\n%s", plain)
	}
	_, err = renderMCP(&transcript.Presentation{Schema: mcpschema.Progress, Version: 1, Payload: transcript.RawJSON(`{"server":"s","tool":"t","status":"ok","extra":1}`)}, 40, DarkTheme)
	if !errors.Is(err, ErrPayload) {
		t.Fatalf("err %v, want ErrPayload", err)
	}
}
