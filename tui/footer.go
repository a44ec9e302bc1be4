package tui

import (
	"fmt"
	"image/color"
	"strings"
	"time"

	"charm.land/bubbles/v2/textarea"
	"charm.land/lipgloss/v2"
	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/receipt"
	"github.com/foliodev/folio/transcript"
)

// Activity labels the footer shows for the main agent.
func activityLabel(l transcript.Live, approval bool, now time.Time) string {
	switch {
	case approval:
		return "awaiting approval"
	case l.Retry.Pending():
		return fmt.Sprintf("retrying in %ds (attempt %d, %s)", retrySeconds(l.Retry, now), l.Retry.Attempt, l.Retry.Reason)
	}
	switch l.Activity {
	case transcript.ActivityIdle:
		return "ready"
	case transcript.ActivityThinking:
		return "thinking…"
	case transcript.ActivityResponding:
		return "streaming…"
	case transcript.ActivityTool:
		return "running a tool…"
	case transcript.ActivityWaiting:
		return "waiting for the model…"
	}
	return string(l.Activity) + "…"
}

// retrySeconds is the countdown to a retry in whole seconds, rounded up, so
// it reads 0 only once the attempt is due.
func retrySeconds(r transcript.Retry, now time.Time) int {
	return int((r.In(now) + time.Second - 1) / time.Second)
}

// footerText is the footer's text for the main agent: activity, model,
// prompt context and the session totals (which include child agents'
// usage). Only the main region's facts feed it; a child agent never
// changes it except through the totals.
func footerText(l transcript.Live, approval bool, now time.Time) string {
	parts := []string{activityLabel(l, approval, now)}
	if l.Model != "" {
		parts = append(parts, l.Model)
	}
	if l.PromptContext > 0 {
		parts = append(parts, receipt.Count(l.PromptContext)+" context")
	}
	t := l.Totals
	if t.InputTokens+t.OutputTokens > 0 {
		s := "session " + receipt.Count(t.InputTokens) + " in → " + receipt.Count(t.OutputTokens) + " out"
		if t.CostUSD > 0 {
			s += " · " + receipt.Cost(t.CostUSD)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " · ")
}

func (a *App) footer() string {
	approval := false
	for _, ap := range a.snap.Live.Approvals.All() {
		if ap.Child == "" {
			approval = true
		}
	}
	text := footerText(a.snap.Live, approval, a.o.Now())
	dot := "●"
	st := a.pal.ok
	switch {
	case approval:
		st = a.pal.warn
	case a.snap.Live.Retry.Pending():
		st = a.pal.bad
	case a.running():
		st = a.pal.accent
	default:
		dot = "○"
		st = a.pal.dim
	}
	if a.o.Attached != nil {
		if who := a.o.Attached(); who != "" {
			if text != "" {
				text = " · " + text
			}
			text = "attached to " + who + text
		}
	}
	line := st.Render(dot) + " " + a.pal.dim.Render(truncate(text, a.width-2))
	if al := a.sessionAllowed(); al != "" && ansiWidth(line)+len(al)+2 < a.width { // approval.go
		line += a.pal.warn.Render("  " + al)
	}
	if u := a.unseen(); u != "" && ansiWidth(line)+len(u)+2 < a.width {
		line += a.pal.dim.Render("  " + u)
	}
	return a.finish(line)
}

// unseen says how far the reader is from the live edge, for the footer.
func (a *App) unseen() string {
	if a.view == nil || a.view.Following() {
		return ""
	}
	return "ctrl+end: latest"
}

// childLines draws each running child agent in its own region: its label,
// activity and model, and the last line of its feed. Finished children
// leave the region; their answers reach the main feed through the tool
// that spawned them.
func (a *App) childLines() []string {
	var out []string
	for _, c := range a.snap.Live.Children.All() {
		if c.Done {
			continue
		}
		head := "⎇ " + sanitize(c.Label) + " · " + activityLabel(transcript.Live{Activity: c.Activity}, a.childApproval(c.ID), a.o.Now())
		if c.Model != "" {
			head += " · " + c.Model
		}
		if c.Usage.OutputTokens > 0 {
			head += " · " + receipt.Count(c.Usage.OutputTokens) + " out"
		}
		out = append(out, a.finish(a.pal.info.Render(truncate(head, a.width))))
		if last := oneLine(sanitize(a.snap.Live.LastLine(c))); last != "" {
			out = append(out, a.finish(a.pal.faint.Render(truncate("  │ "+last, a.width))))
		}
	}
	return out
}

func (a *App) childApproval(id string) bool {
	for _, ap := range a.snap.Live.Approvals.All() {
		if ap.Child == id {
			return true
		}
	}
	return false
}

// draftLines shows commands that are not part of the transcript yet, as
// the snapshot lists them: queued messages, steers waiting for the next
// step, drafts that came back and deliveries whose fate is unknown. The
// running turn's own message is in the transcript already.
func (a *App) draftLines() []string {
	var out []string
	queued := 0
	for _, l := range []transcript.Commands{a.snap.Live.Queue, a.snap.Live.Steers} {
		for _, c := range l.All() {
			var label string
			st := a.pal.dim
			switch c.State {
			case transcript.CommandPending:
				label = "sending"
			case transcript.CommandUncertain:
				label, st = "uncertain, not resent", a.pal.warn
			case transcript.CommandRejected:
				label, st = "not sent ("+c.Reason+") · ctrl+r sends it", a.pal.warn
			case transcript.CommandRunning:
				if !c.Steer {
					continue
				}
				label = "steer, at the next step"
			case transcript.CommandQueued:
				queued++
				label = fmt.Sprintf("queued #%d", queued)
			default:
				continue
			}
			out = append(out, a.finish(st.Render(truncate("⧗ "+label+": "+oneLine(sanitize(c.Preview)), a.width))))
		}
	}
	return out
}

// approvalArgs shows a call's arguments readably: a shell command as the
// command line, other arguments as compact JSON.
func approvalArgs(args string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(args), &m); err == nil {
		if c, ok := m["command"].(string); ok && len(m) <= 2 {
			return "$ " + sanitize(c)
		}
		if p, ok := m["path"].(string); ok {
			return sanitize(p)
		}
	}
	return oneLine(sanitize(args))
}

// newEditor is the input: a multi-line textarea where Enter is left to the
// program (send) and shift+enter, alt+enter or ctrl+j add a line.
func newEditor(th Theme) textarea.Model {
	ta := textarea.New()
	ta.Prompt = "› "
	ta.ShowLineNumbers = false
	ta.Placeholder = "Message folio · enter send · shift+enter newline · /help"
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = 8
	ta.CharLimit = 0
	ta.MaxWidth = 0
	ta.KeyMap.InsertNewline.SetKeys("shift+enter", "alt+enter", "ctrl+j")
	ta.SetVirtualCursor(false)
	ta.SetStyles(editorStyles(th))
	ta.SetHeight(1)
	return ta
}

func editorStyles(th Theme) textarea.Styles {
	s := textarea.DefaultStyles(th.Dark)
	pal := th.palette()
	for _, st := range []*textarea.StyleState{&s.Focused, &s.Blurred} {
		st.CursorLine = lipgloss.NewStyle()
		st.Text = lipgloss.NewStyle()
		st.Prompt = pal.user
		st.Placeholder = pal.faint
		st.EndOfBuffer = lipgloss.NewStyle()
	}
	s.Blurred.Text = pal.dim
	s.Cursor.Blink = false
	if th.Plain() {
		plain := lipgloss.NewStyle()
		for _, st := range []*textarea.StyleState{&s.Focused, &s.Blurred} {
			st.Prompt, st.Placeholder, st.Text = plain, plain, plain
		}
	}
	return s
}

// bg is a background color of the given darkness, for handing the
// viewport the same message the terminal sent.
func bg(dark bool) color.Color {
	if dark {
		return color.Black
	}
	return color.White
}

func ansiWidth(s string) int { return textWidth(s) }
