package tui

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/provider/demo"
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/transcript"
)

// lockedTerm is an emulator that the program writes to from its goroutines
// while the test reads and resizes it.
type lockedTerm struct {
	mu sync.Mutex
	t  *terminal
}

func (l *lockedTerm) Write(b []byte) (int, error) {
	n := len(b)
	l.mu.Lock()
	defer l.mu.Unlock()
	// The emulator has no line discipline; a cooked terminal turns "\n"
	// into "\r\n". Leaving the alternate screen is dropped so the last
	// fullscreen frame stays on the grid.
	b = bytes.ReplaceAll(onlcr(b), []byte("\x1b[?1049l"), nil)
	l.t.write(b)
	return n, nil
}

func (l *lockedTerm) resize(w, h int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.t.resize(w, h)
}

func (l *lockedTerm) rows() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return allRows(l.t)
}

// programRig runs the real chat program (a Bubble Tea program over a real
// engine and the demo model, as fast as it streams) with its output in an
// emulator.
type programRig struct {
	t     *testing.T
	p     *tea.Program
	term  *lockedTerm
	eng   *engine.Engine
	app   *App
	state chan func(*App) bool
	done  chan error

	// waitFor blocks until cond holds for the program's model.
	waitFor func(what string, cond func(*App) bool)
}

func startProgram(t *testing.T, classic bool, w, h int) *programRig {
	t.Helper()
	doc, err := transcript.NewDocument("chat", nil)
	if err != nil {
		t.Fatal(err)
	}
	store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}), transcript.WithDocument(doc))
	set, err := tools.Builtin(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(store, demo.New(demo.Options{}), engine.WithModel("folio-demo"), engine.WithTools(set), engine.WithSystem(""))
	t.Cleanup(func() { eng.Close() })
	r := &programRig{t: t, term: &lockedTerm{t: newTerminal(w, h)}, eng: eng, state: make(chan func(*App) bool, 1), done: make(chan error, 1)}
	o := Options{Engine: eng, Classic: classic, Theme: DarkTheme, Location: time.UTC}
	out := tea.WithOutput(r.term)
	if classic {
		o.Output = r.term
		out = tea.WithOutput(&bytes.Buffer{})
	}
	app := NewApp(o)
	r.app = app
	// The hook runs on the program's goroutine after each update: it
	// answers the test's "has the program got there yet?" questions.
	var pending func(*App) bool
	waiting := make(chan struct{}, 1)
	app.observe = func(a *App) {
		for {
			if pending == nil {
				select {
				case pending = <-r.state:
				default:
					return
				}
			}
			if !pending(a) {
				return
			}
			pending = nil
			waiting <- struct{}{}
		}
	}
	// The emulator is an xterm, so the program is told so, as a terminal
	// tells it through TERM: its cursor-movement optimizations depend on
	// the terminal type, and the test must not take it from whatever shell
	// runs it (CI has no TERM at all).
	r.p = tea.NewProgram(app, tea.WithContext(context.Background()), tea.WithInput(nil), out,
		tea.WithWindowSize(w, h), tea.WithColorProfile(colorprofile.TrueColor), tea.WithoutSignals(),
		tea.WithEnvironment([]string{"TERM=xterm-256color"}))
	go func() { _, err := r.p.Run(); r.done <- err }()
	r.waitFor = func(what string, cond func(*App) bool) {
		t.Helper()
		r.state <- cond
		r.p.Send(tickMsg{}) // an update, so the hook looks at once
		select {
		case <-waiting:
		case <-time.After(60 * time.Second):
			t.Fatalf("the program never got to: %s", what)
		}
	}
	return r
}

func (r *programRig) typeLine(s string) {
	for _, c := range s {
		r.p.Send(tea.KeyPressMsg{Code: c, Text: string(c)})
	}
	r.p.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
}

// turnsDone waits until n turns finished and the program has shown them.
func (r *programRig) turnsDone(n int) {
	r.waitFor("the turns finish and are shown", func(a *App) bool {
		cmds := a.eng.(*engine.Engine).Commands()
		if len(cmds) < n || cmds[n-1].State != engine.Done {
			return false
		}
		receipts := 0
		for _, e := range a.snap.Document.All() {
			if _, ok := e.Content.(transcript.TurnReceipt); ok {
				receipts++
			}
		}
		return receipts == n && a.snap.Live.Activity == transcript.ActivityIdle
	})
}

func (r *programRig) quit() {
	r.p.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	if err := <-r.done; err != nil {
		r.t.Fatal(err)
	}
}

// tableRows are rows of the demo's table answer; each must be on the
// terminal exactly once.
var tableRows = []string{"OpenRouter", "LM Studio", "Anthropic", "Set one with"}

func countAll(rows []string, needle string) int {
	return strings.Count(strings.Join(rows, "\n"), needle)
}

// Resizing the fullscreen program reflows the transcript from the source
// at the new width: nothing is lost or repeated, and the frame is what
// the program draws at that size from scratch.
func TestProgramFullscreenResize(t *testing.T) {
	t.Parallel()
	r := startProgram(t, false, 60, 24)
	r.typeLine("show me a table")
	r.turnsDone(1)
	r.term.resize(100, 24)
	r.p.Send(tea.WindowSizeMsg{Width: 100, Height: 24})
	r.waitFor("the new width", func(a *App) bool { return a.width == 100 })
	r.typeLine("show me the table again")
	r.turnsDone(2)
	r.quit()
	rows := r.term.rows()
	fresh := newTerminal(100, 24)
	fresh.frame(strings.Split(r.app.View().Content, "\n"))
	if got, want := strings.Join(rows, "\n"), strings.Join(allRows(fresh), "\n"); got != want {
		t.Errorf("after the resize the screen differs from a frame drawn from scratch at 100×24:\n--- want\n%s\n--- got\n%s", want, got)
	}
	for _, needle := range tableRows[:3] {
		if n := countAll(rows, needle); n != 1 {
			t.Errorf("%q is on the screen %d times, want once (the window shows the second answer):\n%s", needle, n, strings.Join(rows, "\n"))
		}
	}
	wide := false
	for _, row := range rows {
		if len([]rune(row)) > 60 {
			wide = true
		}
	}
	if !wide {
		t.Fatalf("no row uses the new width:\n%s", strings.Join(rows, "\n"))
	}
}

// Resizing the classic program: what was printed stays printed once, the
// answer after the resize is drawn at the new width, and leaving erases
// the chrome and keeps the transcript.
func TestProgramClassicResize(t *testing.T) {
	t.Parallel()
	r := startProgram(t, true, 60, 20)
	r.typeLine("show me a table")
	r.turnsDone(1)
	r.term.resize(100, 20)
	r.p.Send(tea.WindowSizeMsg{Width: 100, Height: 20})
	// The classic view draws one column short of the edge.
	r.waitFor("the new width", func(a *App) bool { return a.width == 99 })
	r.typeLine("show me the table again")
	r.turnsDone(2)
	r.quit()
	rows := r.term.rows()
	all := strings.Join(rows, "\n")
	for _, needle := range tableRows {
		if n := countAll(rows, needle); n != 2 {
			t.Errorf("%q is in scrollback %d times, want twice (once per answer):\n%s", needle, n, all)
		}
	}
	for _, needle := range []string{"› show me a table", "› show me the table again"} {
		if n := countAll(rows, needle); n != 1 {
			t.Errorf("%q appears %d times, want once:\n%s", needle, n, all)
		}
	}
	if strings.Contains(all, "Message folio") || strings.Contains(all, "ready ·") {
		t.Errorf("the chrome is still on the terminal after leaving:\n%s", all)
	}
	narrow, wide := 0, 0
	for _, row := range rows {
		switch n := len([]rune(row)); {
		case n > 60:
			wide++
		case n > 40:
			narrow++
		}
	}
	if wide == 0 || narrow == 0 {
		t.Fatalf("want rows drawn at both widths (narrow %d, wide %d):\n%s", narrow, wide, all)
	}
}
