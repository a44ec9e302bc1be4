package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/transcript"
)

// Options configure the chat program (App and Run).
type Options struct {
	// Engine runs the turns and writes the store the program shows. The
	// program never writes entries itself.
	Engine *engine.Engine
	// Classic selects the inline view that prints into the terminal's
	// scrollback instead of the fullscreen view.
	Classic bool
	// Theme is the starting theme (see DetectTheme). A background color the
	// terminal reports later switches between dark and light.
	Theme Theme
	// Notice is a standing line under the footer, such as the demo model's
	// "how to configure a real provider" hint. Empty shows nothing.
	Notice string
	// Location is the time zone of receipt times and the picker's dates
	// (default time.Local).
	Location *time.Location
	// Conversations lists saved conversations for the /resume picker, newest
	// first; Resume continues one of them. Without them /resume says it is
	// not available.
	Conversations func() ([]Conversation, error)
	Resume        func(id string) error
	// Picker opens the /resume picker at start (folio --resume without an
	// ID).
	Picker bool
	// Now is the clock for retry countdowns (default time.Now).
	Now func() time.Time
	// Transport delivers what the person sends (default: the engine's own,
	// in process). A client of a remote engine passes its own; a delivery
	// it cannot confirm shows as uncertain and is never resent by itself.
	Transport engine.Transport
	// Output is where the classic view writes. Chat sets it to the
	// terminal; without it the classic view is drawn by View like the
	// fullscreen one (for tests).
	Output io.Writer
	// Mouse captures the mouse in the fullscreen view, so the wheel
	// scrolls the transcript; the terminal's own text selection then needs
	// shift. Off, nothing asks the terminal to report the mouse.
	Mouse bool
	// Welcome fills the first screen while the conversation is empty; nil
	// shows nothing.
	Welcome *Welcome
	// History holds earlier prompts, oldest first, for up/down; OnPrompt
	// is told each prompt sent, to keep it for next time.
	History  []string
	OnPrompt func(text string)
	// Models lists the models /model offers; SetModel switches to one for
	// the turns that follow. Without them /model says it is not available.
	Models   func() ([]string, error)
	SetModel func(name string) error
	// New starts a new, empty conversation (/new, /clear); the one before
	// stays saved. Export writes the conversation to a file and returns
	// its path (/export).
	New    func() error
	Export func() (string, error)
	// Tail is how many of a resumed conversation's last turns the classic
	// view prints: 0 about two screens' worth, < 0 every entry the engine's
	// document holds. Earlier says how to see the entries before them (a
	// command), on the line that counts them.
	Tail    int
	Earlier func() string
}

// Conversation is one saved conversation as the picker lists it.
type Conversation struct {
	ID      string
	Title   string
	Updated time.Time
	Entries int
}

// App is the chat program: the transcript (a Viewport in fullscreen, the
// Classic projection inline), child agents' regions, queued and unsent
// drafts, the approval prompt, the input editor and the footer. It is a
// Bubble Tea model.
//
// It reads everything it shows from the engine's store (coalesced
// snapshots): the document, and in the live state the footer's facts, the
// queue, pending steers, approvals, and the outbox's own deliveries, which
// the outbox mirrors into the store. What the person types reaches the
// engine through an engine.Outbox. It keeps no transcript of its own.
//
// An App belongs to its Bubble Tea program's update loop.
type App struct {
	o      Options
	eng    *engine.Engine
	store  *transcript.Store
	sub    *transcript.Subscription
	outbox *engine.Outbox
	theme  Theme
	pal    *palette

	snap          transcript.Snapshot
	shown         transcript.Document // snap's document as visible now
	width, height int

	view    *Viewport // fullscreen
	classic *Classic  // inline
	live    []string  // classic live region
	printQ  []string  // classic lines waiting to be printed, in order
	inline  *Inline   // writes the classic view (nil: View draws it)
	sized   bool      // the terminal's size is known, so inline may draw

	pendingSize *tea.WindowSizeMsg // a classic resize waiting to settle
	resizeSeq   uint64

	input   textarea.Model
	appr    approvalPrompt // approval.go
	picker  *picker
	overlay *overlay // /help, /model
	// The slash menu's selection, and the text it was closed for with esc.
	menuSel    int
	menuClosed string
	// Prompt history: sent prompts, the position up/down reached (len
	// when at the draft), and the draft being typed before the recall.
	hist      []string
	histPos   int
	histDraft string
	chromeBuf []string // the chrome as last laid out; nil when stale
	status    string   // a transient line: what the last key did
	quitting  bool
	ticking   bool // a countdown redraw is scheduled

	// observe, when set, is called at the end of every Update: tests use
	// it to learn what the program has taken in.
	observe func(*App)
}

// snapshotMsg carries a store snapshot into the update loop.
type snapshotMsg transcript.Snapshot

// changedMsg says the engine's commands or approvals changed: the moment
// to confirm deliveries with it.
type changedMsg struct{}

// tickMsg redraws a retry countdown.
type tickMsg struct{}

var cmdSeq atomic.Uint64

// NewApp returns the chat program's model for o. Run starts it; tests may
// drive it directly with Update and View.
func NewApp(o Options) *App {
	if o.Location == nil {
		o.Location = time.Local
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	a := &App{o: o, eng: o.Engine, store: o.Engine.Store(), theme: o.Theme, pal: o.Theme.palette(), width: 80, height: 24}
	start := time.Now().UnixNano()
	if o.Transport == nil {
		o.Transport = o.Engine.Transport()
	}
	a.outbox = engine.NewOutbox(o.Transport, func() string {
		return fmt.Sprintf("tui-%x-%d", start, cmdSeq.Add(1))
	})
	// The outbox publishes what only it knows (sending, uncertain, drafts
	// that came back) into the store, so the drafts shown come from the
	// snapshot like everything else.
	a.outbox.Mirror(a.store)
	opts := []PainterOption{WithLocation(o.Location)}
	if o.Classic {
		a.classic = NewClassic(NewPainter(o.Theme, append(opts, ForClassic())...))
		a.setTail()
		a.classic.Mount()
		if o.Output != nil {
			a.inline = NewInline(o.Output)
		}
	} else {
		a.view = NewViewport(NewCache(NewPainter(o.Theme, opts...)), a.width, a.height)
		a.view.Keys = KeyMap{
			LineUp: []string{"shift+up"}, LineDown: []string{"shift+down"},
			PageUp: []string{"pgup"}, PageDown: []string{"pgdown"},
			Top: []string{"ctrl+home"}, Latest: []string{"ctrl+end"},
			Expand: []string{"ctrl+o"},
		}
	}
	a.input = newEditor(o.Theme)
	if a.inline != nil {
		// The classic view draws its own frames, so the editor draws
		// its own cursor too.
		a.input.SetVirtualCursor(true)
	}
	a.input.Focus()
	a.hist = append([]string(nil), o.History...)
	a.histPos = len(a.hist)
	a.setSnapshot(a.store.Snapshot())
	if a.classic != nil {
		// The classic first screen goes into scrollback, where it stays.
		a.printQ = append(a.printQ, a.welcomeLines()...)
	}
	if o.Picker {
		a.openPicker()
	}
	a.layout()
	return a
}

// Init subscribes to the store and the engine.
func (a *App) Init() tea.Cmd {
	a.sub = a.store.Subscribe()
	cmds := []tea.Cmd{a.waitSnapshot(), a.waitChanged()}
	if !a.theme.Plain() {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	return tea.Batch(cmds...)
}

func (a *App) waitSnapshot() tea.Cmd {
	sub := a.sub
	return func() tea.Msg {
		s, ok := <-sub.C()
		if !ok {
			return nil
		}
		return snapshotMsg(s)
	}
}

func (a *App) waitChanged() tea.Cmd {
	ch := a.eng.Changed()
	return func() tea.Msg {
		<-ch
		return changedMsg{}
	}
}

// Close stops the program's subscription.
func (a *App) Close() {
	if a.sub != nil {
		a.sub.Close()
	}
}

// Update handles snapshots, engine changes, keys, the mouse and resizes.
func (a *App) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	a.chromeBuf = nil // whatever the message changes, the chrome is drawn anew
	m, cmd := a.update(msg)
	a.drawClassic()
	if a.observe != nil {
		a.observe(a)
	}
	return m, cmd
}

func (a *App) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch m := msg.(type) {
	case snapshotMsg:
		a.setSnapshot(transcript.Snapshot(m))
		return a, tea.Batch(a.waitSnapshot(), a.syncClassic(), a.tick())
	case changedMsg:
		// What Confirm learns reaches the view through the mirror, as a
		// snapshot.
		a.outbox.Confirm(context.Background(), a.eng.StatusFunc())
		return a, a.waitChanged()
	case tickMsg:
		a.ticking = false
		return a, a.tick()
	case tea.WindowSizeMsg:
		if a.inline != nil {
			// The classic view waits for the size to settle before it
			// draws again: a terminal that rewraps its lines on resize
			// (tmux, kitty) may still be rewrapping when the signal
			// arrives, and rows counted against a half-done reflow
			// would leave stale lines behind. Dragging a window sends
			// many sizes; only the last one is drawn.
			a.resizeSeq++
			a.pendingSize = &m
			if !a.sized {
				return a, a.applySize(a.resizeSeq)
			}
			seq := a.resizeSeq
			return a, tea.Tick(resizeSettle, func(time.Time) tea.Msg { return resizeMsg(seq) })
		}
		a.width, a.height = max(m.Width, 10), max(m.Height, 4)
		a.layout()
		return a, nil
	case resizeMsg:
		return a, a.applySize(uint64(m))
	case tea.BackgroundColorMsg:
		a.setDark(m.IsDark())
		return a, nil
	case tea.MouseWheelMsg:
		if a.view != nil {
			return a, a.view.Update(m)
		}
		return a, nil
	case tea.PasteMsg:
		var cmd tea.Cmd
		a.input, cmd = a.input.Update(m)
		a.layout()
		return a, cmd
	case tea.KeyPressMsg:
		cmd := a.key(m)
		a.layout() // keys change the chrome in many small ways
		return a, cmd
	}
	return a, nil
}

// setSnapshot shows s, a snapshot from the store's subscription. The views
// get the document as a reader should see it now (visibleDocument); the
// approval prompt takes the editor's place while a call waits.
func (a *App) setSnapshot(s transcript.Snapshot) {
	a.snap = s
	if a.status == stoppingStatus && !a.running() {
		a.status = "" // the stop is done; the transcript says so
	}
	a.shown = visibleDocument(s)
	if a.view != nil {
		a.view.SetDocument(a.shown, s.Generation)
	}
	if a.approvalFocused() {
		a.input.Blur()
	} else if !a.input.Focused() && a.picker == nil && a.overlay == nil {
		a.input.Focus()
	}
	a.layout()
}

// stoppingStatus is the status line while a stop takes effect.
const stoppingStatus = "stopping the turn"

// visibleDocument returns s's document with every open entry the pacer has
// not fully revealed cut to its visible prefix (Live.Visible). The source
// keeps all accepted text; only what the views paint is cut, and the cut
// grows until settlement shows the entry whole under the same ID. Only the
// open tail is looked at, so the cost does not grow with the conversation.
func visibleDocument(s transcript.Snapshot) transcript.Document {
	d := s.Document
	for i := d.Settled(); i < d.Len(); i++ {
		if !d.IsOpen(i) {
			continue
		}
		e := d.At(i)
		n, paced := s.Live.Revealed(e.ID)
		if !paced || n >= len(streamedText(e.Content)) {
			continue
		}
		if cut, err := d.Update(e.ID, s.Live.Visible(e)); err == nil {
			d = cut
		}
	}
	return d
}

// streamedText is the text of a kind the pacer reveals.
func streamedText(c transcript.Content) string {
	switch c := c.(type) {
	case transcript.Agent:
		return c.Markdown
	case transcript.Reasoning:
		return c.Text
	}
	return ""
}

// tick keeps a retry countdown moving: a redraw when the shown number of
// seconds changes, while a retry is pending.
func (a *App) tick() tea.Cmd {
	r := a.snap.Live.Retry
	if a.ticking || !r.Pending() {
		return nil
	}
	a.ticking = true
	in := r.In(a.o.Now())
	next := in % time.Second // the countdown shows whole seconds, rounded up
	if next == 0 {
		next = time.Second
	}
	if in == 0 {
		// The attempt is due; the engine's next snapshot ends the
		// countdown. Check again in a second in case it does not.
		next = time.Second
	}
	return tea.Tick(next, func(time.Time) tea.Msg { return tickMsg{} })
}

func (a *App) setDark(dark bool) {
	if a.theme.Dark == dark {
		return
	}
	a.theme.Dark = dark
	a.pal = a.theme.palette()
	if a.view != nil {
		a.view.Update(tea.BackgroundColorMsg{Color: bg(dark)})
	}
	if a.classic != nil {
		a.classic.cache.SetPainter(a.classic.cache.painter.WithTheme(a.theme))
	}
	a.input.SetStyles(editorStyles(a.theme))
}

// syncClassic brings the classic projection up to the snapshot: new lines
// join the print queue, the live region is redrawn.
func (a *App) syncClassic() tea.Cmd {
	if a.classic == nil {
		return nil
	}
	f := a.classic.Sync(a.shown, a.snap.Generation, a.width, max(a.height-a.chromeHeight()-1, 3))
	a.live = f.Live
	a.printQ = append(a.printQ, f.Print...)
	return nil
}

// setTail tells the classic projection how much of a resumed conversation
// to print, at the terminal's current height.
func (a *App) setTail() {
	t := Tail{Turns: a.o.Tail, Rows: a.height}
	if a.o.Earlier != nil {
		t.Hint = func(transcript.Document) string { return a.o.Earlier() }
	}
	a.classic.SetTail(t)
}

// resizeSettle is how long the classic view waits after a size change
// before it draws at the new size.
const resizeSettle = 80 * time.Millisecond

// resizeMsg applies the classic view's pending size if no newer one came.
type resizeMsg uint64

// applySize takes the pending size of the classic view: the live region is
// drawn again at the new width, and what is in scrollback stays as it was
// printed.
func (a *App) applySize(seq uint64) tea.Cmd {
	if seq != a.resizeSeq || a.pendingSize == nil {
		return nil
	}
	m := *a.pendingSize
	a.pendingSize = nil
	a.inline.Resize(max(m.Width, 10))
	// Draw one column short of the edge. A line that fills its row
	// leaves the cursor in the pending-wrap state, which rewrapping
	// terminals resolve differently; the writer's row count could then
	// be one short.
	a.width, a.height = max(m.Width-1, 10), max(m.Height, 4)
	a.sized = true
	a.setTail()
	a.layout()
	return a.syncClassic()
}

// drawClassic writes the classic view through the Inline writer: the lines
// that became final go into scrollback, in order and once, and the live
// region (the transcript's unsettled tail, then the chrome) is redrawn from
// its first changed line. Writing here, in the update loop, keeps printed
// lines and redraws in one ordered stream of bytes.
func (a *App) drawClassic() {
	if a.inline == nil || !a.sized || a.pendingSize != nil {
		return
	}
	f := Frame{Print: a.printQ}
	a.printQ = nil
	if a.quitting {
		// Leaving: what was live becomes final, and the chrome goes.
		f.Print = append(f.Print, a.live...)
		a.live = nil
	} else {
		f.Live = append(append(f.Live, a.liveOrPanel()...), a.chromeLines()...)
	}
	_, _ = a.inline.Write(f)
}

// liveOrPanel is what the classic view draws above its chrome: the
// picker or an overlay while one is open (in the live region, so it is
// seen and leaves no trace in scrollback), the transcript's live tail
// otherwise.
func (a *App) liveOrPanel() []string {
	room := min(12, max(a.height-a.chromeHeight(), 1))
	switch {
	case a.picker != nil:
		return a.picker.lines(a, a.width, room)
	case a.overlay != nil:
		return a.overlayLines(a.width, max(a.height-a.chromeHeight(), 1))
	}
	return a.live
}

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
	if c := a.input.Cursor(); c != nil && !a.approvalFocused() && a.picker == nil && a.overlay == nil {
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
	for _, l := range strings.Split(a.input.View(), "\n") {
		out = append(out, a.finish(l))
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

// running reports whether a top-level turn is running, read from the
// store's live state as every view reads it (the server's too), not from
// the engine.
func (a *App) running() bool {
	_, ok := a.store.Snapshot().Live.Turn()
	return ok
}

// key handles a key press: the picker, approvals, the program's own keys,
// the viewport's keys, and everything else goes to the editor.
func (a *App) key(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	a.status = ""
	if a.picker != nil {
		return a.pickerKey(s)
	}
	if a.overlay != nil {
		return a.overlayKey(s)
	}
	if cmd, ok := a.approvalKey(k); ok {
		return cmd
	}
	if cmd, ok := a.menuKey(s); ok {
		return cmd
	}
	if a.historyKey(s) {
		return nil
	}
	switch s {
	case "ctrl+c":
		if a.input.Value() != "" {
			a.input.Reset()
			a.layout()
			return nil
		}
		return a.quit()
	case "ctrl+d":
		if a.input.Value() == "" {
			return a.quit()
		}
	case "esc":
		if a.eng.Stop() {
			a.status = stoppingStatus
		}
		return nil
	case "enter":
		return a.submit(false)
	case "ctrl+s", "tab":
		return a.submit(true)
	case "ctrl+r":
		if _, ok := a.rejected(); !ok {
			return a.retry()
		}
		return a.takeBackDraft(true)
	case "ctrl+x":
		return a.takeBackDraft(false)
	case "ctrl+y":
		return a.copyAnswer()
	}
	if a.view != nil {
		empty := a.input.Value() == ""
		if matches(s, a.view.Keys.LineUp) || matches(s, a.view.Keys.LineDown) || matches(s, a.view.Keys.PageUp) ||
			matches(s, a.view.Keys.PageDown) || matches(s, a.view.Keys.Top) || matches(s, a.view.Keys.Latest) ||
			matches(s, a.view.Keys.Expand) {
			return a.view.Update(k)
		}
		if empty {
			// With nothing typed, the plain navigation keys scroll.
			switch s {
			case "up":
				a.view.ScrollBy(-1)
				return nil
			case "down":
				a.view.ScrollBy(1)
				return nil
			case "home":
				a.view.Top()
				return nil
			case "end":
				a.view.JumpToLatest()
				return nil
			}
		}
	}
	var cmd tea.Cmd
	a.input, cmd = a.input.Update(k)
	a.layout()
	return cmd
}

func (a *App) quit() tea.Cmd {
	a.quitting = true
	a.Close()
	return tea.Quit
}

// submit sends what is typed: a slash command, a message (queued behind a
// running turn), or with steer an instruction to the running turn.
func (a *App) submit(steer bool) tea.Cmd {
	text := strings.TrimSpace(a.input.Value())
	if text == "" {
		return nil
	}
	if !steer && strings.HasPrefix(text, "/") {
		if cmd, ok := a.slash(text); ok {
			a.input.Reset()
			a.layout()
			return cmd
		}
	}
	steer = steer && a.running()
	a.remember(text)
	id := a.outbox.Add(text, steer)
	a.input.Reset()
	it, err := a.outbox.Send(context.Background(), id)
	if a.view != nil {
		// The person's own message is what they want to see next.
		a.view.JumpToLatest()
	}
	if err != nil && steer && it.Delivery == engine.Draft {
		// The turn ended (or is stopping) before the instruction got
		// there: it stays a draft the person can send with ctrl+r.
		a.status = "not steered: " + it.Reason
	} else if err != nil && it.Delivery == engine.Uncertain {
		a.status = "delivery uncertain (it will not be resent): " + err.Error()
	} else if err != nil && it.Delivery != engine.Accepted {
		a.status = "not sent: " + err.Error()
	}
	return nil
}

// rejected returns the oldest draft that came back (refused by a stop, or
// never received), as the snapshot lists it: queued messages first, then
// steers.
func (a *App) rejected() (transcript.Command, bool) {
	for _, l := range []transcript.Commands{a.snap.Live.Queue, a.snap.Live.Steers} {
		for _, c := range l.All() {
			if c.State == transcript.CommandRejected {
				return c, true
			}
		}
	}
	return transcript.Command{}, false
}

// takeBackDraft takes the oldest draft that came back: with send, it goes
// out again as an ordinary message under a new command ID (the explicit
// Send action such a draft offers); without, it is dropped. Either way the
// engine is told to stop listing it (Dismiss).
func (a *App) takeBackDraft(send bool) tea.Cmd {
	c, ok := a.rejected()
	if !ok {
		return nil
	}
	// A message a stop sent back may still be accepted as far as the
	// outbox knows; asking first makes it a draft the outbox can remove,
	// so it does not come back later as a rejection of its own.
	a.outbox.Confirm(context.Background(), a.eng.StatusFunc())
	text := ""
	for _, it := range a.outbox.Items() {
		if it.CommandID == c.ID {
			text = it.Text // the whole text; the snapshot has a preview
		}
	}
	if text == "" {
		// Not one of ours: only the engine lists it, so all that can be
		// done is to dismiss it.
		send = false
	}
	_ = a.outbox.Remove(c.ID)
	// The engine lists only drafts it sent back itself; one the outbox
	// got back from the transport is not the engine's to dismiss.
	if err := a.eng.Dismiss(c.ID); err != nil && !errors.Is(err, engine.ErrUnknownCommand) {
		a.status = err.Error()
	}
	if !send {
		a.status = "dropped the draft"
		return nil
	}
	id := a.outbox.Add(text, false)
	if _, err := a.outbox.Send(context.Background(), id); err != nil {
		a.status = "not sent: " + err.Error()
	}
	if a.view != nil {
		a.view.JumpToLatest()
	}
	return nil
}

// retryable reports whether the conversation ends in a failure a retry
// may fix, with no turn running: the moment to offer one.
func (a *App) retryable() bool {
	d := a.snap.Document
	if d.Len() == 0 || a.running() {
		return false
	}
	f, ok := d.At(d.Len() - 1).Content.(transcript.Failure)
	return ok && f.Retryable
}

// retry runs the failed last turn again through the engine's Retry, the
// action a failure entry offers (the web's retry button does the same).
func (a *App) retry() tea.Cmd {
	_, err := a.eng.Retry(fmt.Sprintf("tui-retry-%x", cmdSeq.Add(1)))
	switch {
	case errors.Is(err, engine.ErrNothingToRetry):
		a.status = "nothing to retry: the last turn did not fail"
	case err != nil:
		a.status = "not retried: " + err.Error()
	default:
		a.status = "retrying the failed turn"
		if a.view != nil {
			a.view.JumpToLatest()
		}
	}
	return nil
}

// slash runs a slash command; ok is false for text that only looks like
// one, which is then sent as a message.
func (a *App) slash(text string) (tea.Cmd, bool) {
	switch strings.Fields(text)[0] {
	case "/resume":
		a.openPicker()
		return nil, true
	case "/quit", "/exit":
		return a.quit(), true
	case "/help":
		a.openHelp()
		return nil, true
	case "/retry":
		return a.retry(), true
	case "/model":
		a.openModels()
		return nil, true
	case "/new", "/clear":
		return a.newConversation(text == "/clear"), true
	case "/export":
		if a.o.Export == nil {
			a.status = "exporting is not available here"
			return nil, true
		}
		path, err := a.o.Export()
		if err != nil {
			a.status = "not exported: " + err.Error()
		} else {
			a.status = "exported to " + path
		}
		return nil, true
	}
	return nil, false
}

// newConversation starts an empty conversation through the host; clear
// also empties the screen.
func (a *App) newConversation(clear bool) tea.Cmd {
	if a.o.New == nil {
		a.status = "starting a new conversation is not available here"
		return nil
	}
	if a.running() {
		a.status = "a turn is running: press esc to stop it first"
		return nil
	}
	if err := a.o.New(); err != nil {
		a.status = "no new conversation: " + err.Error()
		return nil
	}
	a.setSnapshot(a.store.Snapshot())
	a.status = "new conversation"
	if a.classic != nil {
		a.printQ = nil
		if clear && a.inline != nil {
			a.inline.Clear()
		}
		return a.syncClassic()
	}
	if clear {
		return tea.ClearScreen
	}
	return nil
}

// copyAnswer copies the latest answer's markdown source to the clipboard
// with OSC 52. The text carries no wrapping of ours.
func (a *App) copyAnswer() tea.Cmd {
	d := a.snap.Document
	for i := d.Len() - 1; i >= 0; i-- {
		ag, ok := d.At(i).Content.(transcript.Agent)
		if !ok || ag.Markdown == "" {
			continue
		}
		// Both views copy with OSC 52. The classic view's program writes
		// nowhere (the view draws itself), so the sequence goes straight
		// to the terminal, between frames; it moves no cursor.
		a.status = fmt.Sprintf("copied the answer's markdown (%d bytes) to the clipboard", len(ag.Markdown))
		if a.inline != nil {
			_, _ = io.WriteString(a.o.Output, ansi.SetSystemClipboard(ag.Markdown))
			return nil
		}
		return tea.SetClipboard(ag.Markdown)
	}
	a.status = "no answer to copy yet"
	return nil
}
