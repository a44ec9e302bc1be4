package tui

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/foliodev/folio/tools/toolschema"
	"github.com/foliodev/folio/transcript"
)

func TestPainters(t *testing.T) {
	t.Parallel()
	presShell := &transcript.Presentation{Schema: toolschema.Shell, Version: 1, Revision: 3,
		Payload: transcript.RawJSON(`{"command":"go test ./...","output":"ok  \tfolio/tui\t0.2s\nFAIL\tfolio/x\n","exitCode":1}`)}
	presDiff := &transcript.Presentation{Schema: toolschema.Diff, Version: 1, Revision: 1,
		Payload: transcript.RawJSON(`{"path":"main.go","diff":"@@ -1,2 +1,2 @@\n-old line\n+new line\n context"}`)}
	presUnknown := &transcript.Presentation{Schema: "acme.chart", Version: 2, Revision: 7,
		Payload:  transcript.RawJSON(`{"secret":"do-not-show","points":[1,2,3]}`),
		Artifact: &transcript.Artifact{Ref: "a1", ContentType: "image/png", CommittedBytes: 20480, Revision: 2, Final: true, Available: true}}
	report := transcript.ReportContent{Report: transcript.Report{Label: "Session", Note: "totals include child agents", Rows: []transcript.ReportRow{
		{Kind: transcript.RowField, Key: "model", Value: "demo-1"},
		{Kind: transcript.RowField, Key: "tokens", Value: "12k in → 900 out", Detail: "this session"},
		{Kind: transcript.RowMeter, Used: 45, Total: 100, Caption: "% of context"},
		{Kind: transcript.RowItem, Name: "saved to disk", Marker: transcript.MarkerCurrent, Tone: transcript.ReportSuccess},
		{Kind: transcript.RowGap},
		{Kind: transcript.RowGroup, Label: "children", Count: "2"},
		{Kind: transcript.RowField, Key: "agents", Value: "2"},
		{Kind: transcript.RowText, Text: "one is still running", Tone: transcript.ReportWarning},
	}}}
	cases := []struct {
		name  string
		run   Run
		width int
	}{
		{"user", Run{Entries: []transcript.Entry{ent("u", transcript.User{Text: "Please refactor the parser so that it reports line numbers in every error message."})}}, 40},
		{"agent_markdown", Run{Entries: []transcript.Entry{ent("a", transcript.Agent{Markdown: sampleAnswer})}}, 60},
		{"reasoning_folded", Run{Entries: []transcript.Entry{reasoning("r1", "First I read.", 1200), reasoning("r2", "Then I think.", 2300), reasoning("r3", "Done.", 500)}}, 60},
		{"reasoning_one_expanded", Run{Entries: []transcript.Entry{reasoning("r1", "First I read the file to see how errors are built.", 1200), reasoning("r2", "Then I think.", 2300)},
			Expanded: []bool{false, true}}, 40},
		{"reasoning_streaming", Run{Entries: []transcript.Entry{reasoning("r1", "First.", 1200), ent("r2", transcript.Reasoning{Text: "Then"})}, Open: []bool{false, true}}, 60},
		{"tool_failed", Run{Entries: []transcript.Entry{ent("t", transcript.Tool{Receipt: transcript.ToolReceipt{App: "shell", Summary: "make build", Status: transcript.ToolFailed, DurationMs: f64(4100), Reason: "exit status 2: undefined: foo"}})}}, 60},
		{"tool_denied", Run{Entries: []transcript.Entry{ent("t", transcript.Tool{Receipt: transcript.ToolReceipt{App: "shell", Summary: "rm -rf build", Status: transcript.ToolDenied}})}}, 60},
		{"tool_expanded", Run{Entries: []transcript.Entry{ent("t", transcript.Tool{Receipt: transcript.ToolReceipt{App: "edit", Summary: "main.go", Status: transcript.ToolOK, DurationMs: f64(20),
			Args: `{"path":"main.go"}`, Detail: "1 hunk applied", DiffPreview: &transcript.DiffPreview{Lines: []string{"@@ -1 +1 @@", "-a", "+b"}, HiddenLines: 4}}})}, Expanded: []bool{true}}, 60},
		{"tool_running", Run{Entries: []transcript.Entry{ent("t", transcript.Tool{Receipt: transcript.ToolReceipt{App: "shell", Summary: "sleep 10", Status: transcript.ToolOK}})}, Open: []bool{true}}, 60},
		{"presentation_shell", Run{Entries: []transcript.Entry{ent("t", transcript.Tool{Receipt: transcript.ToolReceipt{App: "shell", Summary: "go test", Status: transcript.ToolFailed, DurationMs: f64(2000)}, Presentation: presShell})}}, 60},
		{"presentation_diff", Run{Entries: []transcript.Entry{ent("t", transcript.Tool{Receipt: transcript.ToolReceipt{App: "edit", Summary: "main.go", Status: transcript.ToolOK, DurationMs: f64(10)}, Presentation: presDiff})}}, 60},
		{"presentation_fallback", Run{Entries: []transcript.Entry{ent("t", transcript.Tool{Receipt: transcript.ToolReceipt{App: "chart", Summary: "plot", Status: transcript.ToolOK, DurationMs: f64(900)}, Presentation: presUnknown})}}, 60},
		{"presentation_supplementals", Run{Entries: []transcript.Entry{ent("t", transcript.Tool{Receipt: transcript.ToolReceipt{App: "shell", Summary: "go test", Status: transcript.ToolOK},
			Presentation: presShell, Supplementals: []transcript.KeyedPresentation{{Key: "patch", Presentation: *presDiff}, {Key: "chart", Presentation: *presUnknown}}})}, Open: []bool{true}}, 60},
		{"notice_info", Run{Entries: []transcript.Entry{ent("n", transcript.Notice{Text: "Resumed conversation from yesterday.", Tone: transcript.ToneInfo})}}, 60},
		{"notice_success", Run{Entries: []transcript.Entry{ent("n", transcript.Notice{Text: "Saved.", Tone: transcript.ToneSuccess})}}, 60},
		{"notice_warn", Run{Entries: []transcript.Entry{ent("n", transcript.Notice{Text: "Rate limited; retrying in 3s.", Tone: transcript.ToneWarn})}}, 60},
		{"notice_error", Run{Entries: []transcript.Entry{ent("n", transcript.Notice{Text: "Could not reach the provider.", Tone: transcript.ToneError})}}, 60},
		{"report", Run{Entries: []transcript.Entry{ent("rep", report)}}, 60},
		{"failure", Run{Entries: []transcript.Entry{ent("f", transcript.Failure{Reason: "provider_error", Headline: "The model provider returned an error.", Detail: "HTTP 529: overloaded", Retryable: true, RetryAfterMs: f64(3000)})}}, 60},
		{"failure_expanded", Run{Entries: []transcript.Entry{ent("f", transcript.Failure{Reason: "provider_error", Headline: "The model provider returned an error.", Detail: "HTTP 529: overloaded", Retryable: true, RetryAfterMs: f64(3000)})}, Expanded: []bool{true}}, 60},
		{"steering", Run{Entries: []transcript.Entry{ent("s", transcript.Steering{Text: "use the new API instead", CommandID: "c1"})}}, 60},
		{"turn_receipt", Run{Entries: []transcript.Entry{ent("rc", transcript.TurnReceipt{FinishedAt: i64(t0.UnixMilli()), Steps: []transcript.Step{
			{DurationMs: 4100, PromptTokens: i64(17000), CompletionTokens: i64(101), GenerationDurationMs: f64(2800)},
			{DurationMs: 2000, PromptTokens: i64(18000), CompletionTokens: i64(300), GenerationDurationMs: f64(1500)}}})}, Expanded: []bool{true}}, 80},
		{"stopped", Run{Entries: []transcript.Entry{ent("st", transcript.Stopped{Summary: transcript.StopSummary{ElapsedMs: 12300, Done: []string{"read main.go"}, NotDone: []string{"run the tests"}}})}}, 60},
		{"header", Run{Entries: []transcript.Entry{ent("h", transcript.Header{Name: "folio", Provider: "demo", Model: "demo-1"})}}, 60},
		{"compaction", Run{Entries: []transcript.Entry{ent("c", transcript.Compaction{Summary: "We fixed the parser.", Covers: transcript.CompactionRange{FromID: "a", ToID: "b"}})}, Expanded: []bool{true}}, 60},
		{"expanded", Run{Entries: []transcript.Entry{ent("x", transcript.Expanded{Text: "full output of the last command"})}}, 60},
	}
	p := NewPainter(DarkTheme, WithLocation(time.UTC))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			lines := p.Paint(c.run, c.width)
			if len(lines) == 0 {
				t.Fatal("painted nothing")
			}
			for i, l := range lines {
				if w := ansi.StringWidth(l); w > c.width {
					t.Errorf("line %d is %d columns, wider than %d: %q", i, w, c.width, l)
				}
			}
			golden(t, "paint_"+c.name, paintGrid(c.width, lines))
		})
	}
}

// A presentation without an adapter shows host metadata, never its payload.
func TestPresentationFallbackNeverShowsPayload(t *testing.T) {
	t.Parallel()
	e := ent("t", transcript.Tool{Receipt: transcript.ToolReceipt{App: "chart", Summary: "plot", Status: transcript.ToolOK},
		Presentation: &transcript.Presentation{Schema: "acme.chart", Version: 1, Payload: transcript.RawJSON(`{"secret":"hunter2"}`)}})
	for _, expanded := range []bool{false, true} {
		out := ansi.Strip(strings.Join(NewPainter(DarkTheme).PaintEntry(e, 80, expanded), "\n"))
		if strings.Contains(out, "hunter2") || strings.Contains(out, "secret") {
			t.Fatalf("payload leaked (expanded=%v):\n%s", expanded, out)
		}
		if strings.Contains(out, "acme.chart") || strings.Contains(out, "rev ") || !strings.Contains(out, "not shown here") {
			t.Fatalf("the fallback shows internal schema names or revisions, or does not say what it left out:\n%s", out)
		}
	}
	// A payload the built-in adapter cannot read also falls back.
	bad := ent("t", transcript.Tool{Receipt: transcript.ToolReceipt{App: "shell", Status: transcript.ToolOK},
		Presentation: &transcript.Presentation{Schema: toolschema.Shell, Version: 1, Payload: transcript.RawJSON(`{"cmd":"hunter2"}`)}})
	out := ansi.Strip(strings.Join(NewPainter(DarkTheme).PaintEntry(bad, 80, false), "\n"))
	if strings.Contains(out, "hunter2") || strings.Contains(out, "folio.shell") || !strings.Contains(out, "not shown here") {
		t.Fatalf("unreadable payload not handled by the fallback:\n%s", out)
	}
}

// A tool row shows each supplemental item under the primary, through its
// adapter, and is never packed with other receipts.
func TestToolRowShowsSupplementals(t *testing.T) {
	t.Parallel()
	tc := transcript.Tool{Receipt: transcript.ToolReceipt{App: "work", Summary: "count", Status: transcript.ToolOK},
		Supplementals: []transcript.KeyedPresentation{{Key: "patch", Presentation: transcript.Presentation{Schema: toolschema.Diff, Version: 1,
			Payload: transcript.RawJSON(`{"path":"notes.md","diff":"+supplemental line"}`)}}}}
	out := ansi.Strip(strings.Join(NewPainter(DarkTheme).Paint(Run{Entries: []transcript.Entry{ent("t", tc), okTool("t2", "read", "a.go", 3)}}, 80), "\n"))
	if !strings.Contains(out, "+supplemental line") || !strings.Contains(out, "notes.md") {
		t.Fatalf("the supplemental item is not shown:\n%s", out)
	}
	if strings.Contains(out, "count   ") {
		t.Fatalf("a receipt with a supplemental item was packed:\n%s", out)
	}
}

// Receipt packing puts several short receipts on one row when they fit.
func TestReceiptPacking(t *testing.T) {
	t.Parallel()
	run := Run{Entries: []transcript.Entry{
		okTool("t1", "read", "main.go", 12), okTool("t2", "grep", "TODO", 30), okTool("t3", "read", "go.mod", 8),
		okTool("t4", "list", "./internal", 15), okTool("t5", "read", "README.md", 9),
		ent("t6", transcript.Tool{Receipt: transcript.ToolReceipt{App: "shell", Summary: "go vet", Status: transcript.ToolFailed, DurationMs: f64(900), Reason: "vet: 1 issue"}}),
		okTool("t7", "read", "a.go", 3), okTool("t8", "read", "b.go", 4),
	}}
	p := NewPainter(DarkTheme)
	rows := map[int]int{}
	for _, w := range []int{40, 80, 120} {
		lines := p.Paint(run, w)
		rows[w] = len(lines)
		golden(t, "packing_"+strconv.Itoa(w), paintGrid(w, lines))
	}
	if !(rows[40] > rows[80] && rows[80] >= rows[120]) {
		t.Errorf("rows at 40/80/120 = %d/%d/%d; wider terminals should pack more receipts per row", rows[40], rows[80], rows[120])
	}
}

// Themes: NO_COLOR keeps attributes and drops colors; a dumb terminal gets
// no escape sequences at all.
func TestThemeFromEnvironment(t *testing.T) {
	t.Parallel()
	e := ent("n", transcript.Notice{Text: "careful", Tone: transcript.ToneWarn})
	cases := []struct {
		env             []string
		wantEsc, wantFg bool
	}{
		{[]string{"TERM=xterm-256color", "COLORTERM=truecolor"}, true, true},
		{[]string{"TERM=xterm-256color", "NO_COLOR=1"}, true, false},
		{[]string{"TERM=dumb"}, false, false},
	}
	for _, c := range cases {
		th := DetectTheme(c.env, true)
		out := strings.Join(NewPainter(th).PaintEntry(ent("u", transcript.User{Text: "hi"}), 40, false), "") +
			strings.Join(NewPainter(th).PaintEntry(e, 40, false), "")
		if got := strings.Contains(out, "\x1b["); got != c.wantEsc {
			t.Errorf("%v: escapes present = %v, want %v: %q", c.env, got, c.wantEsc, out)
		}
		if got := strings.Contains(out, "38;"); got != c.wantFg {
			t.Errorf("%v: foreground colors present = %v, want %v: %q", c.env, got, c.wantFg, out)
		}
		if !strings.Contains(ansi.Strip(out), "careful") {
			t.Errorf("%v: text lost: %q", c.env, out)
		}
	}
	if DetectTheme([]string{"TERM=xterm", "NO_COLOR=1"}, false).Dark {
		t.Error("light background not honoured")
	}
}

func TestLightThemeDiffersFromDark(t *testing.T) {
	t.Parallel()
	e := ent("n", transcript.Notice{Text: "careful", Tone: transcript.ToneWarn})
	d := NewPainter(DarkTheme).PaintEntry(e, 40, false)
	l := NewPainter(LightTheme).PaintEntry(e, 40, false)
	if strings.Join(d, "") == strings.Join(l, "") {
		t.Fatal("light and dark themes paint the same colors")
	}
}

// The oracle under NO_COLOR (attributes, no colors) and on a dumb terminal
// (nothing but text).
func TestPaintersWithoutColor(t *testing.T) {
	t.Parallel()
	entries := []transcript.Entry{
		ent("u", transcript.User{Text: "Show me the plan."}),
		ent("a", transcript.Agent{Markdown: sampleAnswer}),
		ent("f", transcript.Failure{Reason: "provider_error", Headline: "The model provider returned an error."}),
	}
	for name, th := range map[string]Theme{
		"nocolor": DetectTheme([]string{"TERM=xterm-256color", "NO_COLOR=1"}, true),
		"dumb":    DetectTheme([]string{"TERM=dumb"}, true),
	} {
		p := NewPainter(th)
		var lines []string
		for _, e := range entries {
			lines = append(lines, p.PaintEntry(e, 60, false)...)
		}
		all := strings.Join(lines, "\n")
		if strings.Contains(all, "38;") || strings.Contains(all, "48;") {
			t.Errorf("%s: colors in output", name)
		}
		if name == "dumb" && strings.Contains(all, "\x1b") {
			t.Errorf("dumb: escape sequences in output")
		}
		golden(t, "theme_"+name, paintGrid(60, lines))
	}
}
