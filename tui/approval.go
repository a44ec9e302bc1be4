package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/transcript"
)

// The approval prompt. A call waiting for a decision is shown above the
// composer, painted as the transcript paints its tool entry (through the
// tool's adapter), but it never takes the keyboard by itself: typing goes on
// into the composer as a draft, so a word that happens to hold a y, an a or
// an n answers nothing. The person answers deliberately:
//
//   - approvalFocusKey moves the keyboard to the prompt (and esc gives it
//     back to the composer);
//   - in the prompt, y allows this call, n denies it, and a asks for a
//     second a (or enter) before the tool is allowed for the rest of the
//     session; any other key disarms it.
//
// The footer lists the tools allowed for the session.

// approvalFocusKey is the key that moves the keyboard to a waiting prompt.
const approvalFocusKey = "ctrl+g"

// approvalPrompt is the prompt's own state: whether it has the keyboard and
// whether a session allow waits for its confirming key. Both belong to one
// approval, and reset when another is first in line.
type approvalPrompt struct {
	id      string
	focused bool
	armed   bool
}

// approvalPending reports whether a call waits, resetting the prompt's
// state when the first waiting call changed.
func (a *App) approvalPending() bool {
	aps := a.snap.Live.Approvals
	if aps.Len() == 0 {
		a.appr = approvalPrompt{}
		return false
	}
	if id := aps.At(0).ID; id != a.appr.id {
		a.appr = approvalPrompt{id: id}
	}
	return true
}

// approvalFocused reports whether the prompt has the keyboard.
func (a *App) approvalFocused() bool { return a.approvalPending() && a.appr.focused }

// approvalKey handles a key while a call waits. handled is false for a key
// the prompt leaves to the composer (everything, while it is not focused,
// but the focus key itself).
func (a *App) approvalKey(k tea.KeyPressMsg) (tea.Cmd, bool) {
	if !a.approvalPending() {
		return nil, false
	}
	s := k.String()
	if !a.appr.focused {
		if s == approvalFocusKey {
			a.appr.focused = true
			a.input.Blur()
			return nil, true
		}
		return nil, false
	}
	if s == "ctrl+c" || s == "ctrl+d" {
		return nil, false // quitting works from anywhere
	}
	id := a.appr.id
	decide := func(d engine.Decision) {
		a.appr = approvalPrompt{}
		a.input.Focus()
		if err := a.eng.Approve(id, d); err != nil {
			a.status = err.Error()
		}
	}
	switch {
	case a.appr.armed && (s == "a" || s == "enter"):
		decide(engine.AllowSession)
	case s == "y":
		decide(engine.AllowOnce)
	case s == "n":
		decide(engine.Deny)
	case s == "a":
		a.appr.armed = true
	case s == "esc" || s == approvalFocusKey:
		a.appr.focused, a.appr.armed = false, false
		a.input.Focus()
	default:
		a.appr.armed = false
	}
	return nil, true
}

// approvalLines draws the waiting call: who asks, the call as its tool
// entry is painted, and the keys.
func (a *App) approvalLines() []string {
	a.approvalPending()
	aps := a.snap.Live.Approvals
	ap := aps.At(0)
	who := ap.Tool
	if ap.Child != "" {
		if c, ok := a.snap.Live.Children.Get(ap.Child); ok {
			who = sanitize(c.Label) + ": " + ap.Tool
		}
	}
	head := a.pal.warn.Bold(true).Render("? " + who + " wants to run")
	out := []string{a.finish(truncate(head, a.width))}
	body := a.approvalCall(ap)
	if len(body) > 6 {
		body = body[len(body)-6:]
	}
	for _, l := range body {
		out = append(out, a.finish(l))
	}
	b := a.pal.bold.Render
	var keys string
	switch {
	case !a.appr.focused:
		keys = b(approvalFocusKey) + " to answer · typing goes to the draft below"
	case a.appr.armed:
		keys = a.pal.warn.Render("allow "+ap.Tool+" for the rest of the session?") + " " + b("a") + "/" + b("enter") + " yes · any other key no"
	default:
		keys = b("y") + " allow once · " + b("a") + " allow for the session… · " + b("n") + " deny · " + b("esc") + " back to the draft"
	}
	if aps.Len() > 1 {
		keys += fmt.Sprintf(" · %d more waiting", aps.Len()-1)
	}
	out = append(out, a.finish(truncate("  "+keys, a.width)))
	return out
}

// approvalCall paints the waiting call's presentation through its
// adapter, as the transcript paints it in the call's entry: for a built-in
// tool that is the tool's preview of the call (the command line a shell
// call runs, the diff a write makes), which the engine puts into the entry
// while it waits. A call without one (a tool with no preview, or a child
// agent's call, whose entry is not in the main document) shows its
// arguments.
func (a *App) approvalCall(ap transcript.PendingApproval) []string {
	d := a.snap.Document
	for i := d.Len() - 1; i >= 0 && i >= d.Len()-64; i-- {
		e := d.At(i)
		if e.ID != ap.ID {
			continue
		}
		if c, ok := e.Content.(transcript.Tool); ok && c.Presentation != nil {
			return NewPainter(a.theme).presentation(c.Presentation, "", a.width, false)
		}
		break
	}
	var out []string
	for _, l := range wrapIndent(approvalArgs(ap.Args), a.width, "  ", "  ") {
		out = append(out, a.pal.text.Render(l))
	}
	return out
}

// sessionAllowed is the footer's note of the tools allowed for the session.
func (a *App) sessionAllowed() string {
	tools := a.eng.Allowed()
	if len(tools) == 0 {
		return ""
	}
	return "allowed: " + strings.Join(tools, ", ")
}
