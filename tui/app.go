package tui

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/transcript"
)

// Options configure the chat program (App and Run).
type Options struct {
	// Engine runs the turns and writes the store the program shows (or
	// mirrors another process's, see Engine). The program never writes
	// entries itself.
	Engine Engine
	// Attached, when set, says which process owns the conversation this
	// program is attached to ("folio serve (pid 42)"); the footer shows
	// it. Empty: this process owns it.
	Attached func() string
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
	// stays saved. Export writes the conversation to a file in format
	// ("text", or "html" for /export html) and returns its path (/export).
	New    func() error
	Export func(format string) (string, error)
	// Search finds a query's hits over every conversation (/search,
	// tui/search.go); without it /search says it is not available.
	Search func(query string) ([]SearchHit, error)
	// Find finds a query's hits inside the conversation shown, newest
	// first (ctrl+f, /find, tui/find.go); without it /find says it is not
	// available.
	Find func(query string) (FindResult, error)
	// Tail is how many of a resumed conversation's last turns the classic
	// view prints: 0 about two screens' worth, < 0 every entry the engine's
	// document holds. Earlier says how to see the entries before them (a
	// command), on the line that counts them.
	Tail    int
	Earlier func() string
	// Pager reads the entries of a resumed conversation that the engine's
	// document does not hold, for the fullscreen view's scrolling back;
	// nil scrolls back only through what the engine holds.
	Pager Pager
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
	eng    Engine
	store  *transcript.Store
	sub    *transcript.Subscription
	outbox *engine.Outbox
	theme  Theme
	pal    *palette

	snap          transcript.Snapshot
	shown         transcript.Document // snap's document as visible now
	width, height int

	view    *viewport // fullscreen
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
	find    *finder  // the open find line (ctrl+f), or nil
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
		a.view = newViewport(newRenderCache(NewPainter(o.Theme, opts...)), a.width, a.height)
		a.view.Keys = keyMap{
			LineUp: []string{"shift+up"}, LineDown: []string{"shift+down"},
			PageUp: []string{"pgup"}, PageDown: []string{"pgdown"},
			Top: []string{"ctrl+home"}, Latest: []string{"ctrl+end"},
			Expand: []string{"ctrl+o"},
		}
		a.view.Pager = o.Pager
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
