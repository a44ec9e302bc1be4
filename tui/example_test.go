package tui_test

import (
	"fmt"
	"os"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/provider/demo"

	"github.com/foliodev/folio/transcript"
	"github.com/foliodev/folio/tui"
)

// A program whose own tool publishes a presentation of its own schema
// gives the terminal an adapter for it. The adapter draws the value in the
// tool's terms; without one, the row shows only bounded metadata.
func ExampleRegistry() {
	reg := tui.DefaultRegistry() // the built-in adapters, and room for more
	err := reg.Register("acme.progress", 1, tui.AdapterFunc(func(p *transcript.Presentation, width int, th tui.Theme) ([]string, error) {
		var v struct {
			Done  int `json:"done"`
			Total int `json:"total"`
		}
		if err := json.Unmarshal(p.Payload, &v); err != nil {
			return nil, err
		}
		bar := strings.Repeat("█", v.Done) + strings.Repeat("░", v.Total-v.Done)
		return []string{fmt.Sprintf("%s %d/%d", bar, v.Done, v.Total)}, nil
	}))
	if err != nil {
		panic(err)
	}
	ms := 1200.0
	painter := tui.NewPainter(tui.PlainTheme, tui.WithAdapters(reg), tui.WithLocation(time.UTC))
	call := transcript.Entry{ID: "t1", Timestamp: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC), Content: transcript.Tool{
		Receipt:      transcript.ToolReceipt{App: "acme_build", Summary: "build the site", Status: transcript.ToolOK, DurationMs: &ms},
		Presentation: &transcript.Presentation{Schema: "acme.progress", Version: 1, Revision: 1, Payload: transcript.RawJSON(`{"done":3,"total":5}`)},
	}}
	for _, l := range painter.PaintEntry(call, 60, false) {
		fmt.Println(strings.TrimRight(l, " "))
	}
	// Output:
	// ✓ acme_build build the site 1.2s
	//   ███░░ 3/5
}

// A program that picks the colors itself, instead of asking the terminal
// (DetectTheme), paints with the dark or light theme.
func ExampleNewPainter() {
	dark := tui.NewPainter(tui.DarkTheme)
	light := dark.WithTheme(tui.LightTheme)
	fmt.Println(dark.Theme().Dark, light.Theme().Dark)
	// Output:
	// true false
}

// A registry without the built-in adapters paints every presentation as
// its bounded metadata: for a program that shows tools' values only
// through adapters of its own.
func ExampleNewRegistry() {
	painter := tui.NewPainter(tui.PlainTheme, tui.WithAdapters(tui.NewRegistry()))
	call := transcript.Entry{ID: "t1", Timestamp: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC), Content: transcript.Tool{
		Receipt:      transcript.ToolReceipt{App: "shell", Summary: "$ ls", Status: transcript.ToolOK},
		Presentation: &transcript.Presentation{Schema: "folio.shell", Version: 1, Revision: 2, Payload: transcript.RawJSON(`{"command":"ls","output":"go.mod","exitCode":0}`)},
	}}
	for _, l := range painter.PaintEntry(call, 60, false) {
		fmt.Println(strings.TrimRight(l, " "))
	}
	// Output:
	// ✓ shell $ ls
	//   ⧉ 47 B of details not shown here
}

// A program with a Bubble Tea program of its own embeds folio's chat as a
// model instead of handing the terminal to tui.Chat.
func ExampleNewApp() {
	eng := engine.New(transcript.NewStore(), demo.New(demo.Options{}), engine.WithModel("folio-demo"))
	defer eng.Close()
	app := tui.NewApp(tui.Options{Engine: eng, Theme: tui.DetectTheme(os.Environ(), true)})
	defer app.Close()
	var _ tea.Model = app
	if _, err := tea.NewProgram(app).Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
}
