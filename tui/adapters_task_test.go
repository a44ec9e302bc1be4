package tui

import (
	"errors"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/foliodev/folio/tools/toolschema"
	"github.com/foliodev/folio/transcript"
)

// A task entry paints the sub-agent's label and status and its nested
// calls, in order, with their outcomes; the same payload live and after a
// reload paints the same lines.
func TestTaskAdapterNestedCalls(t *testing.T) {
	t.Parallel()
	pres := &transcript.Presentation{Schema: toolschema.Task, Version: 1, Revision: 4, Payload: transcript.RawJSON(`{"label":"scout","child":"c9","status":"done",` +
		`"steps":[{"kind":"reasoning","summary":"where to start","status":"ok","durationMs":800},` +
		`{"kind":"tool","name":"shell","summary":"ls -la","status":"ok","durationMs":12},` +
		`{"kind":"tool","name":"edit","summary":"main.go","status":"denied"},` +
		`{"kind":"tool","name":"shell","summary":"make build","status":"failed","durationMs":2100},` +
		`{"kind":"answer","summary":"Found it.","status":"ok"}],"omitted":3,"answer":"Found it."}`)}
	run := Run{Entries: []transcript.Entry{ent("t", transcript.Tool{Receipt: transcript.ToolReceipt{App: "task", Summary: "task scout", Status: transcript.ToolOK, DurationMs: f64(5000)}, Presentation: pres})}}
	const width = 60
	lines := NewPainter(DarkTheme).Paint(run, width)
	plain := ansi.Strip(strings.Join(lines, "\n"))
	order := []string{"Sub-agent: scout · done", "… 3 earlier steps", "✓ reasoning where to start", "✓ shell ls -la 12ms", "⊘ edit main.go", "✗ shell make build 2.1s", "✓ answer Found it."}
	at := 0
	for _, w := range order {
		i := strings.Index(plain[at:], w)
		if i < 0 {
			t.Fatalf("%q missing or out of order in:\n%s", w, plain)
		}
		at += i + len(w)
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > width {
			t.Errorf("line %d is %d columns, wider than %d", i, w, width)
		}
	}
	golden(t, "paint_presentation_task", paintGrid(width, lines))
}

// A folio.task payload with an unknown member is refused, not guessed at.
func TestTaskAdapterIsStrict(t *testing.T) {
	t.Parallel()
	_, err := renderTask(&transcript.Presentation{Schema: toolschema.Task, Version: 1, Payload: transcript.RawJSON(`{"label":"x","status":"done","extra":1}`)}, 40, DarkTheme)
	if !errors.Is(err, ErrPayload) {
		t.Fatalf("err %v, want ErrPayload", err)
	}
}
