package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/foliodev/folio/tools/toolschema"
	"github.com/foliodev/folio/transcript"
)

// Tool rows as the engine writes them say each thing once: a call named
// only by its tool shows the name once, a shell call's command is not
// repeated by its presentation, arguments still arriving read as such,
// and no schema name or revision reaches the screen.
func TestToolRowsSayEachThingOnce(t *testing.T) {
	t.Parallel()
	shellPayload := transcript.RawJSON(`{"command":"ls -la","output":"README.md\ngo.mod","exitCode":0}`)
	run := Run{
		Entries: []transcript.Entry{
			ent("t1", transcript.Tool{Receipt: transcript.ToolReceipt{App: "shell", Summary: "shell", Status: transcript.ToolOK}}),
			ent("t2", transcript.Tool{Receipt: transcript.ToolReceipt{App: "shell", Summary: "shell", Status: transcript.ToolDenied, Reason: "denied"}}),
			ent("t3", transcript.Tool{Receipt: transcript.ToolReceipt{App: "shell", Summary: "$ ls -la", Status: transcript.ToolOK, DurationMs: f64(12)},
				Presentation: &transcript.Presentation{Schema: toolschema.Shell, Version: 1, Revision: 3, Payload: shellPayload}}),
			ent("t4", transcript.Tool{Receipt: transcript.ToolReceipt{App: "write_file", Summary: "write_file", Status: transcript.ToolOK},
				Presentation: &transcript.Presentation{Schema: toolschema.Args, Version: 1, Revision: 2,
					Payload: transcript.RawJSON(`{"text":"{\"path\":\"notes.md\",\"content\":\"# Plan","bytes":39,"truncated":false}`)}}),
		},
		Open: []bool{true, false, false, true},
	}
	lines := NewPainter(DarkTheme).Paint(run, 60)
	grid := paintGrid(60, lines)
	golden(t, "paint_tool_rows", grid)
	text := ansi.Strip(strings.Join(lines, "\n"))
	for _, bad := range []string{"shell shell", "write_file write_file", "folio.", " rev ", " v1"} {
		if strings.Contains(text, bad) {
			t.Errorf("tool rows show %q:\n%s", bad, text)
		}
	}
	if n := strings.Count(text, "ls -la"); n != 1 {
		t.Errorf("the command is on screen %d times, want once:\n%s", n, text)
	}
	if !strings.Contains(text, "writing arguments") {
		t.Errorf("arguments still arriving do not say so:\n%s", text)
	}
}
