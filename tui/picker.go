package tui

import (
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// picker is the /resume list: saved conversations, newest first, with
// their title, when they were last updated and how many entries they hold.
type picker struct {
	list []Conversation
	sel  int
	err  string
}

func (a *App) openPicker() {
	p := &picker{}
	switch {
	case a.o.Conversations == nil || a.o.Resume == nil:
		p.err = "resuming is not available here"
	default:
		list, err := a.o.Conversations()
		if err != nil {
			p.err = err.Error()
		}
		p.list = list
	}
	a.picker = p
	a.input.Blur()
}

func (a *App) closePicker() {
	a.picker = nil
	a.input.Focus()
	a.layout()
}

func (a *App) pickerKey(s string) tea.Cmd {
	p := a.picker
	switch s {
	case "up", "ctrl+p", "k":
		p.sel = max(p.sel-1, 0)
	case "down", "ctrl+n", "j":
		p.sel = min(p.sel+1, max(len(p.list)-1, 0))
	case "pgup":
		p.sel = max(p.sel-10, 0)
	case "pgdown":
		p.sel = min(p.sel+10, max(len(p.list)-1, 0))
	case "esc", "q":
		a.closePicker()
	case "ctrl+c":
		return a.quit()
	case "enter":
		if len(p.list) == 0 {
			a.closePicker()
			return nil
		}
		c := p.list[p.sel]
		if a.running() {
			p.err = "a turn is running: press esc to stop it first"
			return nil
		}
		if err := a.o.Resume(c.ID); err != nil {
			p.err = err.Error()
			return nil
		}
		a.closePicker()
		a.status = "resumed " + pickerTitle(c)
		// The engine hydrated the store; the new generation arrives as a
		// snapshot. Take it now so the frame after this key shows it.
		a.setSnapshot(a.store.Snapshot())
		return a.syncClassic()
	}
	return nil
}

func pickerTitle(c Conversation) string {
	if c.Title != "" {
		return c.Title
	}
	return c.ID
}

// lines draws the picker in a window of width×height.
func (p *picker) lines(a *App, width, height int) []string {
	s := a.pal
	out := []string{a.finish(s.accent.Render(truncate("Resume a conversation · ↑/↓ choose · enter open · esc close", width)))}
	if p.err != "" {
		out = append(out, a.finish(s.bad.Render(truncate("✗ "+p.err, width))))
	}
	if len(p.list) == 0 && p.err == "" {
		out = append(out, a.finish(s.dim.Render("  no saved conversations yet")))
	}
	room := max(height-len(out), 1)
	first := 0
	if p.sel >= room {
		first = p.sel - room + 1
	}
	dateW, countW := 16, 12
	titleW := max(width-2-dateW-countW-2, 8)
	for i := first; i < len(p.list) && len(out) < height; i++ {
		c := p.list[i]
		updated := "-"
		if !c.Updated.IsZero() {
			updated = c.Updated.In(a.o.Location).Format("2006-01-02 15:04")
		}
		title := truncate(oneLine(sanitize(pickerTitle(c))), titleW)
		row := fmt.Sprintf("%s%s %s %s", "  ", padRight(title, titleW), padRight(updated, dateW), padLeft(strconv.Itoa(c.Entries)+" entries", countW))
		if i == p.sel {
			row = "› " + row[2:]
			out = append(out, a.finish(s.user.Render(truncate(row, width))))
			continue
		}
		out = append(out, a.finish(s.text.Render(truncate(row, width))))
	}
	for len(out) < height {
		out = append(out, "")
	}
	return out
}

func padRight(s string, w int) string {
	return s + strings.Repeat(" ", max(w-textWidth(s), 0))
}

func padLeft(s string, w int) string {
	return strings.Repeat(" ", max(w-textWidth(s), 0)) + s
}
