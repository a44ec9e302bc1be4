package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// This file holds what the chat offers besides sending: the slash commands
// and their menu, the overlays (/help, /model), the prompt history and the
// first screen.

// slashCommand is one slash command as the menu lists it.
type slashCommand struct {
	name, summary string
}

// slashCommands are the chat's commands, in the order the menu lists them.
var slashCommands = []slashCommand{
	{"/help", "every key and command"},
	{"/resume", "continue a saved conversation"},
	{"/search", "search every conversation and open one at a hit (ctrl+k)"},
	{"/find", "find words in this conversation, hit by hit (ctrl+f)"},
	{"/model", "choose the model for the next turn"},
	{"/new", "start a new conversation"},
	{"/clear", "start a new conversation on a clear screen"},
	{"/export", "write this conversation to a file (text, or /export html)"},
	{"/retry", "run a failed turn again (ctrl+r)"},
	{"/quit", "leave (the conversation stays saved)"},
}

// menuMatches lists the commands the editor's text is a prefix of, while
// the text is a lone word starting with "/"; nil otherwise.
func (a *App) menuMatches() []slashCommand {
	v := a.input.Value()
	if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \n\t") || a.menuClosed == v {
		return nil
	}
	var out []slashCommand
	for _, c := range slashCommands {
		if strings.HasPrefix(c.name, v) {
			out = append(out, c)
		}
	}
	return out
}

// menuLines draws the slash menu under the editor.
func (a *App) menuLines() []string {
	m := a.menuMatches()
	if len(m) == 0 {
		return nil
	}
	sel := min(a.menuSel, len(m)-1)
	out := make([]string, 0, len(m))
	for i, c := range m {
		row := fmt.Sprintf("  %-9s %s", c.name, c.summary)
		if i == sel {
			row = "› " + row[2:]
			out = append(out, a.finish(a.pal.user.Render(truncate(row, a.width))))
			continue
		}
		out = append(out, a.finish(a.pal.dim.Render(truncate(row, a.width))))
	}
	return out
}

// menuKey handles a key while the slash menu shows; handled is false for
// keys the editor should take.
func (a *App) menuKey(s string) (cmd tea.Cmd, handled bool) {
	m := a.menuMatches()
	if len(m) == 0 {
		return nil, false
	}
	sel := min(a.menuSel, len(m)-1)
	switch s {
	case "up", "ctrl+p":
		a.menuSel = (sel - 1 + len(m)) % len(m)
		return nil, true
	case "down", "ctrl+n":
		a.menuSel = (sel + 1) % len(m)
		return nil, true
	case "tab":
		a.input.SetValue(m[sel].name)
		a.input.CursorEnd()
		a.menuSel = 0
		return nil, true
	case "esc":
		a.menuClosed = a.input.Value()
		return nil, true
	case "enter":
		a.input.Reset()
		a.menuSel = 0
		cmd, _ := a.slash(m[sel].name)
		return cmd, true
	}
	a.menuSel = 0
	return nil, false
}

// overlay is a panel drawn in place of the transcript (fullscreen) or the
// live region (classic): the /help text, or a list to choose from.
type overlay struct {
	title string
	lines []string // text shown above the items
	items []string
	sel   int
	pick  func(i int) error // called on enter with the selected item
	err   string
	top   int // the first text line shown, when the text is taller than the panel
	rows  int // the text rows the panel showed last (for paging)
}

func (a *App) openOverlay(o *overlay) {
	a.overlay = o
	a.input.Blur()
}

func (a *App) closeOverlay() {
	a.overlay = nil
	a.input.Focus()
	a.layout()
}

func (a *App) overlayKey(s string) tea.Cmd {
	o := a.overlay
	switch s {
	case "ctrl+c":
		return a.quit()
	case "esc", "q":
		a.closeOverlay()
	case "up", "ctrl+p", "k":
		o.sel = max(o.sel-1, 0)
		o.scroll(-1)
	case "down", "ctrl+n", "j":
		o.sel = min(o.sel+1, max(len(o.items)-1, 0))
		o.scroll(1)
	case "pgup", "b":
		o.scroll(-max(o.rows-1, 1))
	case "pgdown", "space", " ", "f":
		o.scroll(max(o.rows-1, 1))
	case "home", "g":
		o.scroll(-len(o.lines))
	case "end", "G":
		o.scroll(len(o.lines))
	case "enter":
		if o.pick == nil || len(o.items) == 0 {
			a.closeOverlay()
			return nil
		}
		if err := o.pick(o.sel); err != nil {
			o.err = err.Error()
			return nil
		}
		a.closeOverlay()
	}
	return nil
}

// scroll moves a text panel's first shown line by n (a list's keys move
// its selection instead).
func (o *overlay) scroll(n int) {
	if len(o.items) > 0 {
		return
	}
	o.top = min(max(o.top+n, 0), max(len(o.lines)-o.rows, 0))
}

// overlayLines draws the overlay in a window of width×height. Text taller
// than the window scrolls (↑/↓, pgup/pgdown, home/end), with a last row
// that says how much is below; the panel never grows past height, so the
// editor under it stays where it is.
func (a *App) overlayLines(width, height int) []string {
	o := a.overlay
	s := a.pal
	out := []string{a.finish(s.accent.Render(truncate(o.title, width)))}
	if o.err != "" {
		out = append(out, a.finish(s.bad.Render(truncate("✗ "+o.err, width))))
	}
	text := o.lines
	if room := height - len(out); len(o.items) == 0 && len(text) > room {
		o.rows = max(room-1, 1)
		o.top = min(o.top, max(len(text)-o.rows, 0))
		end := min(o.top+o.rows, len(text))
		for _, l := range text[o.top:end] {
			out = append(out, a.finish(s.text.Render(truncate(l, width))))
		}
		more := fmt.Sprintf("↓ %d more · ↑/↓ pgup/pgdown scroll", len(text)-end)
		if end == len(text) {
			more = "↑ more above · ↑/↓ pgup/pgdown scroll"
		}
		out = append(out, a.finish(s.faint.Render(truncate(more, width))))
		if len(out) > height {
			out = out[:height]
		}
		return out
	}
	o.rows = len(text)
	for _, l := range text {
		out = append(out, a.finish(s.text.Render(truncate(l, width))))
	}
	room := max(height-len(out), 1)
	first := 0
	if o.sel >= room {
		first = o.sel - room + 1
	}
	for i := first; i < len(o.items) && len(out) < height; i++ {
		row := "  " + o.items[i]
		if i == o.sel {
			out = append(out, a.finish(s.user.Render(truncate("› "+o.items[i], width))))
			continue
		}
		out = append(out, a.finish(s.text.Render(truncate(row, width))))
	}
	if len(out) > height {
		out = out[:height]
	}
	return out
}

// helpKeys is every key the chat takes, for /help.
var helpKeys = [][2]string{
	{"enter", "send (queued behind a running turn)"},
	{"shift+enter, alt+enter, ctrl+j", "new line"},
	{"tab, ctrl+s", "steer the running turn with what is typed"},
	{"esc", "stop the running turn"},
	{"up, down", "earlier and later prompts (on the editor's first or last line)"},
	{"ctrl+g", "answer a tool call: y once, a a session, n deny"},
	{"ctrl+r, ctrl+x", "send again, or drop, a message a stop sent back"},
	{"ctrl+r", "run a failed turn again (also /retry)"},
	{"ctrl+y", "copy the latest answer's markdown"},
	{"ctrl+k", "search every conversation (/search QUERY)"},
	{"ctrl+f", "find in this conversation, newest hit first (/find QUERY)"},
	{"enter, ctrl+n / ctrl+p", "in find: the next (older) hit / the one before; esc closes"},
	{"ctrl+o", "expand or collapse the entry in view (fullscreen)"},
	{"pgup, pgdown, shift+up, shift+down", "scroll (fullscreen)"},
	{"ctrl+home, ctrl+end", "first entry, latest entry (fullscreen)"},
	{"ctrl+c", "clear the editor; quit when it is empty"},
}

// openHelp shows every key and slash command.
func (a *App) openHelp() {
	var lines []string
	w := 0
	for _, k := range helpKeys {
		w = max(w, len(k[0]))
	}
	for _, c := range slashCommands {
		w = max(w, len(c.name))
	}
	lines = append(lines, "", "Keys")
	for _, k := range helpKeys {
		lines = append(lines, fmt.Sprintf("  %-*s  %s", w, k[0], k[1]))
	}
	lines = append(lines, "", "Commands (type / for the menu, tab completes)")
	for _, c := range slashCommands {
		lines = append(lines, fmt.Sprintf("  %-*s  %s", w, c.name, c.summary))
	}
	a.openOverlay(&overlay{title: "folio help · esc close", lines: lines})
}

// openModels lists the models /model can switch to.
func (a *App) openModels() {
	if a.o.Models == nil || a.o.SetModel == nil {
		a.status = "choosing a model is not available here"
		return
	}
	list, err := a.o.Models()
	o := &overlay{title: "Choose a model · ↑/↓ choose · enter use · esc close", items: list}
	if err != nil {
		o.err = err.Error()
	}
	cur := a.eng.Model()
	for i, m := range list {
		if m == cur || strings.HasSuffix(m, "/"+cur) {
			o.sel = i
		}
	}
	o.pick = func(i int) error {
		if a.running() {
			return fmt.Errorf("a turn is running: press esc to stop it first")
		}
		if err := a.o.SetModel(list[i]); err != nil {
			return err
		}
		a.status = "the next turn uses " + list[i]
		return nil
	}
	a.openOverlay(o)
}

// historyKey recalls earlier (up) and later (down) prompts while the
// cursor is on the editor's first or last line; handled is false
// otherwise, so the editor moves its cursor.
func (a *App) historyKey(s string) bool {
	if len(a.hist) == 0 {
		return false
	}
	switch s {
	case "up":
		if a.input.Line() > 0 || a.histPos == 0 {
			return false
		}
		if a.histPos == len(a.hist) {
			a.histDraft = a.input.Value()
		}
		a.histPos--
		a.input.SetValue(a.hist[a.histPos])
		a.input.CursorEnd()
		return true
	case "down":
		if a.input.Line() < a.input.LineCount()-1 || a.histPos == len(a.hist) {
			return false
		}
		a.histPos++
		if a.histPos == len(a.hist) {
			a.input.SetValue(a.histDraft)
		} else {
			a.input.SetValue(a.hist[a.histPos])
		}
		a.input.CursorEnd()
		return true
	}
	return false
}

// remember adds a sent prompt to the history (not twice in a row) and
// hands it to the host to keep.
func (a *App) remember(text string) {
	if n := len(a.hist); n == 0 || a.hist[n-1] != text {
		a.hist = append(a.hist, text)
		if a.o.OnPrompt != nil {
			a.o.OnPrompt(text)
		}
	}
	a.histPos, a.histDraft = len(a.hist), ""
}

// Welcome is what the first screen says about the chat.
type Welcome struct {
	Model  string // the model the first turn asks, with its provider
	Folder string // the folder the tools work in
	Data   string // the data folder conversations are saved in
	// Note is a warning about the setup the person should read before the
	// first send, such as a --model the offline demo ignores. Said on the
	// first screen because, in the fullscreen view, what folio wrote to
	// standard error before it started is behind the alternate screen.
	Note string
}

// welcomeLines is the first screen: what this is, where it works, and three
// tips. It shows while the conversation is empty.
func (a *App) welcomeLines() []string {
	w := a.o.Welcome
	if w == nil || a.snap.Document.Len() > 0 {
		return nil
	}
	s := a.pal
	row := func(label, v string) string {
		return a.finish(s.dim.Render(truncate(fmt.Sprintf("  %-7s ", label), a.width)) + s.text.Render(truncate(v, max(a.width-10, 1))))
	}
	out := []string{
		a.finish(s.accent.Render(truncate("✻ folio · a conversation engine in your terminal", a.width))),
		"",
		row("model", w.Model),
		row("folder", w.Folder),
		row("data", w.Data),
		"",
	}
	if w.Note != "" {
		for i, l := range wrap(w.Note, max(a.width-4, 10)) {
			p := "  ! "
			if i > 0 {
				p = "    "
			}
			out = append(out, a.finish(s.warn.Render(p+l)))
		}
		out = append(out, "")
	}
	for _, tip := range []string{
		"Ask about this folder: the model can list, read and edit files here, and asks before it runs a command.",
		"Type / for commands: /help lists every key, /resume continues a saved conversation, /model switches models.",
		"Up recalls earlier prompts; tab steers a running turn, esc stops it.",
	} {
		for i, l := range wrap(tip, max(a.width-4, 10)) {
			p := "  · "
			if i > 0 {
				p = "    "
			}
			out = append(out, a.finish(s.faint.Render(p+l)))
		}
	}
	return out
}
