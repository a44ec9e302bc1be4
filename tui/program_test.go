package tui

import (
	"bytes"
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/foliodev/folio/transcript"
)

// docMsg hands the test program a new snapshot.
type docMsg struct {
	doc transcript.Document
	gen uint64
}

// paneModel is the smallest program around a Viewport: what the fullscreen
// view will do, minus the editor and footer.
type paneModel struct{ v *viewport }

func (m paneModel) Init() tea.Cmd { return nil }

func (m paneModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case docMsg:
		m.v.SetDocument(msg.doc, msg.gen)
	case tea.KeyPressMsg:
		if msg.String() == "ctrl+c" {
			return m, tea.Quit
		}
	}
	return m, m.v.Update(msg)
}

func (m paneModel) View() tea.View { return tea.NewView(m.v.View()) }

// The oracle over a real Bubble Tea program: its output bytes, replayed in
// the emulator, must show the viewport's frame.
func TestViewportInBubbleTeaProgram(t *testing.T) {
	t.Parallel()
	const w, h = 50, 8
	var out bytes.Buffer
	v := newTestViewport(w, h)
	p := tea.NewProgram(paneModel{v},
		tea.WithContext(context.Background()),
		tea.WithInput(nil), tea.WithOutput(&out),
		tea.WithWindowSize(w, h), tea.WithColorProfile(colorprofile.TrueColor),
		tea.WithoutSignals())
	d := doc(userEntries(0, 12)...)
	done := make(chan error, 1)
	go func() { _, err := p.Run(); done <- err }()
	p.Send(docMsg{d, 1})
	p.Send(tea.KeyPressMsg{Code: tea.KeyPgUp})
	d = must(d.Append(ent("late1", transcript.User{Text: "late one"})))
	d = must(d.Append(ent("late2", transcript.User{Text: "late two"})))
	p.Send(docMsg{d, 1})
	p.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	term := newTerminal(w, h)
	// The program wrote to what it took for a terminal in cooked mode,
	// where the line discipline turns "\n" into "\r\n"; the emulator has no
	// line discipline, so do that here.
	// On exit the program erases the line under its cursor; the oracle
	// looks at the last frame it drew, before that teardown.
	b := out.Bytes()
	if i := bytes.LastIndex(b, []byte("\r\x1b[J\x1b[?25h")); i > 0 {
		b = b[:i]
	}
	term.write(onlcr(b))
	grid := term.grid()
	golden(t, "program_viewport", grid)
	if !strings.Contains(grid, "2 new ↓") || strings.Contains(grid, "late one") {
		t.Fatalf("the program's screen does not show the reader's position with 2 unseen:\n%s", grid)
	}
}

func onlcr(b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))
}
