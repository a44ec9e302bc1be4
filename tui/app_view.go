package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
)

// chromeHeight is how many rows everything but the transcript takes.
func (a *App) chromeHeight() int {
	return len(a.chromeLines())
}

// chromeLines returns the chrome, drawn at most once per layout: a frame
// needs its height for the layout and its lines for the view.
func (a *App) chromeLines() []string {
	if a.chromeBuf == nil {
		a.chromeBuf = a.chrome()
	}
	return a.chromeBuf
}

// layout sizes the editor and the viewport to the window.
func (a *App) layout() {
	a.input.SetWidth(a.width)
	a.chromeBuf = nil
	if a.view != nil {
		a.view.SetSize(a.width, max(a.height-a.chromeHeight(), 1))
	}
}

// View draws the frame.
func (a *App) View() tea.View {
	var v tea.View
	if a.inline != nil || (a.quitting && a.view == nil) {
		return v
	}
	chrome := a.chromeLines()
	var lines []string
	if a.view != nil {
		room := max(a.height-len(chrome), 1)
		switch {
		case a.picker != nil:
			lines = pad(a.picker.lines(a, a.width, room), room)
		case a.overlay != nil:
			// Padded to the transcript's height: the editor stays at
			// the bottom whatever the panel holds.
			lines = pad(a.overlayLines(a.width, room), room)
		case a.o.Welcome != nil && a.snap.Document.Len() == 0:
			lines = a.welcomeLines()
			if len(lines) > room {
				lines = lines[:room]
			}
			for len(lines) < room {
				lines = append(lines, "")
			}
		default:
			lines = a.view.Lines()
		}
		v.AltScreen = true
		if a.o.Mouse {
			v.MouseMode = tea.MouseModeCellMotion
		}
	} else {
		if a.picker != nil || a.overlay != nil {
			lines = a.liveOrPanel()
		} else {
			// Lines on their way to scrollback stay in view until they
			// are printed. The inline view never grows taller than the
			// terminal: rows pushed off its top could not be redrawn.
			lines = append(append(lines, a.printQ...), a.live...)
			if room := max(a.height-len(chrome), 0); len(lines) > room {
				lines = lines[len(lines)-room:]
			}
		}
	}
	top := len(lines)
	lines = append(lines, chrome...)
	v.Content = strings.Join(lines, "\n")
	if a.find != nil && a.picker == nil && a.overlay == nil {
		if c := a.find.input.Cursor(); c != nil {
			c.Y += top + a.editorRow()
			v.Cursor = c
		}
	} else if c := a.input.Cursor(); c != nil && !a.approvalFocused() && a.picker == nil && a.overlay == nil {
		c.Y += top + a.editorRow()
		v.Cursor = c
	}
	return v
}

// pad returns lines cut or filled with empty lines to exactly n.
func pad(lines []string, n int) []string {
	if len(lines) > n {
		return lines[:n]
	}
	for len(lines) < n {
		lines = append(lines, "")
	}
	return lines
}

// editorRow is the row of the editor's first line within the chrome.
func (a *App) editorRow() int {
	n := len(a.childLines()) + len(a.draftLines()) + 1
	if a.approvalPending() {
		n += len(a.approvalLines())
	}
	return n
}

// chrome is everything under the transcript: child agents, drafts, a rule,
// the approval prompt and the editor, the footer and the standing notice.
func (a *App) chrome() []string {
	var out []string
	out = append(out, a.childLines()...)
	out = append(out, a.draftLines()...)
	out = append(out, a.rule())
	if a.approvalPending() {
		out = append(out, a.approvalLines()...)
	}
	if a.find != nil {
		out = append(out, a.finish(a.findLine()))
	} else {
		for _, l := range strings.Split(a.input.View(), "\n") {
			out = append(out, a.finish(l))
		}
	}
	out = append(out, a.menuLines()...)
	out = append(out, a.footer())
	if a.status != "" {
		out = append(out, a.finish(a.pal.info.Render(truncate(a.status, a.width))))
	} else if a.retryable() {
		out = append(out, a.finish(a.pal.info.Render(truncate("the turn failed · ctrl+r or /retry runs it again", a.width))))
	}
	if a.o.Notice != "" {
		// Wrapped, not cut: the notice names the settings to change, and
		// a cut would lose them on a narrow terminal.
		for _, l := range wrap(a.o.Notice, a.width) {
			out = append(out, a.finish(a.pal.warn.Render(l)))
		}
	}
	return out
}

func (a *App) finish(s string) string { return a.theme.finish(s) }

func (a *App) rule() string {
	return a.finish(a.pal.faint.Render(strings.Repeat("─", a.width)))
}
