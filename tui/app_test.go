package tui

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/provider/demo"
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/transcript"
)

// chatRig is a real engine over the demo model and the built-in tools,
// with the chat program's model in front of it.
type chatRig struct {
	t     *testing.T
	store *transcript.Store
	eng   *engine.Engine
	app   *App
	w, h  int
}

func newChatRig(t *testing.T, o Options, w, h int, prov *demo.Provider) *chatRig {
	t.Helper()
	return newPacedChatRig(t, o, w, h, prov, transcript.Pacing{})
}

// newPacedChatRig is newChatRig over a store that reveals streamed text
// with pacing p.
func newPacedChatRig(t *testing.T, o Options, w, h int, prov *demo.Provider, p transcript.Pacing) *chatRig {
	t.Helper()
	doc, err := transcript.NewDocument("chat", nil)
	if err != nil {
		t.Fatal(err)
	}
	store := transcript.NewStore(transcript.WithPacing(p), transcript.WithDocument(doc))
	set, err := tools.Builtin(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(store, prov, engine.WithModel("folio-demo"), engine.WithTools(set), engine.WithSystem(""))
	t.Cleanup(func() { eng.Close() })
	o.Engine = eng
	if o.Location == nil {
		o.Location = time.UTC
	}
	app := NewApp(o)
	app.sub = store.Subscribe()
	t.Cleanup(app.Close)
	r := &chatRig{t: t, store: store, eng: eng, app: app, w: w, h: h}
	r.send(tea.WindowSizeMsg{Width: w, Height: h})
	return r
}

func (r *chatRig) send(msg tea.Msg) { r.app.Update(msg) }

// running reports whether a turn runs, read where the program reads it:
// the store's live state.
func (r *chatRig) running() bool {
	_, ok := r.store.Snapshot().Live.Turn()
	return ok
}

// typeText types s into the editor, key by key.
func (r *chatRig) typeText(s string) {
	for _, c := range s {
		r.send(tea.KeyPressMsg{Code: c, Text: string(c)})
	}
}

func (r *chatRig) enter() { r.send(tea.KeyPressMsg{Code: tea.KeyEnter}) }

// catchUp hands the app what the program's subscriptions would: the
// latest snapshot and the engine's command state.
func (r *chatRig) catchUp() {
	synctest.Wait()
	r.send(snapshotMsg(r.store.Snapshot()))
	r.send(changedMsg{})
	// What the confirmation learned arrives as a snapshot of its own.
	r.send(snapshotMsg(r.store.Snapshot()))
}

// advance lets the fake clock run d, then catches up.
func (r *chatRig) advance(d time.Duration) {
	time.Sleep(d)
	r.catchUp()
}

// until advances the clock in small steps until cond holds, failing after
// a bounded amount of fake time.
func (r *chatRig) until(what string, cond func() bool) {
	r.t.Helper()
	for range 600 {
		r.advance(100 * time.Millisecond)
		if cond() {
			return
		}
	}
	r.t.Fatalf("never reached: %s", what)
}

// grid paints the app's frame into the emulator at the rig's size.
func (r *chatRig) grid() string {
	term := newTerminal(r.w, r.h)
	term.frame(strings.Split(r.app.View().Content, "\n"))
	return term.grid()
}

func demoProvider() *demo.Provider {
	return demo.New(demo.Options{TokensPerSecond: 200, FirstToken: 200 * time.Millisecond})
}

// The whole fullscreen frame, through a real engine and the demo model:
// the footer while a turn runs, a queued draft, the inline approval prompt,
// and the settled turn with its receipt and the session totals.
func TestAppFrames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newChatRig(t, Options{Theme: DarkTheme, Notice: "demo model — set OPENAI_API_KEY or see docs/providers.md"}, 80, 24, demoProvider())
		r.catchUp()
		golden(t, "app_empty", r.grid())

		r.typeText("list the files here")
		r.enter()
		r.advance(300 * time.Millisecond)
		r.typeText("and then explain them")
		r.enter()
		r.catchUp()
		if got := r.grid(); !strings.Contains(got, "queued #1: and then explain them") {
			t.Fatalf("the queued message is not shown:\n%s", got)
		}
		r.until("the shell call waits for approval", func() bool { return r.app.snap.Live.Approvals.Len() > 0 })
		grid := r.grid()
		golden(t, "app_approval", grid)
		for _, want := range []string{"? shell wants to run", "$ ls -la", "ctrl+g to answer", "queued #1: and then explain them", "demo model"} {
			if !strings.Contains(grid, want) {
				t.Errorf("the approval frame lacks %q:\n%s", want, grid)
			}
		}

		// Typing while a call waits is a draft: y, a and n answer nothing.
		r.typeText("yes, any answer is fine; no")
		r.catchUp()
		if got := r.app.input.Value(); got != "yes, any answer is fine; no" {
			t.Fatalf("the typed sentence is not in the composer: %q", got)
		}
		if r.app.snap.Live.Approvals.Len() != 1 || len(r.eng.Allowed()) != 0 {
			t.Fatalf("typing answered the approval: %d waiting, allowed %v", r.app.snap.Live.Approvals.Len(), r.eng.Allowed())
		}
		// The prompt takes the keyboard only when asked; a alone only arms
		// the session allow, and any other key disarms it.
		r.send(tea.KeyPressMsg{Code: 'g', Mod: tea.ModCtrl})
		r.typeText("a")
		r.catchUp()
		if grid := r.grid(); !strings.Contains(grid, "allow shell for the rest of the session?") || r.app.snap.Live.Approvals.Len() != 1 {
			t.Fatalf("a single a decided, or the confirmation is not shown:\n%s", grid)
		}
		r.typeText("x")
		if !strings.Contains(r.grid(), "y allow once · a allow for the session… · n deny") {
			t.Fatalf("x did not disarm the session allow:\n%s", r.grid())
		}
		r.typeText("n")
		r.catchUp()
		if got := r.app.input.Value(); got != "yes, any answer is fine; no" {
			t.Fatalf("answering the prompt changed the draft: %q", got)
		}
		r.send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}) // clear the draft
		r.until("both turns finish", func() bool {
			return !r.running() && len(r.app.draftLines()) == 0 && len(r.eng.Commands()) == 2 && r.eng.Commands()[1].State == engine.Done
		})
		grid = r.grid()
		golden(t, "app_settled", grid)
		if !strings.Contains(grid, "ready") || !strings.Contains(grid, "session") {
			t.Fatalf("the footer after the turns lacks the idle state or the session totals:\n%s", grid)
		}
	})
}

// Enter while a turn runs queues; tab steers the running turn instead;
// esc stops it, and a steer the stop refused stays a visible draft that
// ctrl+r sends.
func TestAppQueueSteerStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newChatRig(t, Options{Theme: PlainTheme}, 80, 24, demo.New(demo.Options{TokensPerSecond: 20, FirstToken: 100 * time.Millisecond}))
		r.typeText("write a long essay")
		r.enter()
		r.until("the answer streams", func() bool { return r.store.Snapshot().Live.Activity == transcript.ActivityResponding })
		r.typeText("keep it short")
		r.send(tea.KeyPressMsg{Code: tea.KeyTab})
		r.catchUp()
		r.until("the steer is applied", func() bool {
			for _, e := range r.store.Snapshot().Document.All() {
				if s, ok := e.Content.(transcript.Steering); ok && s.Text == "keep it short" {
					return true
				}
			}
			return false
		})
		r.until("the steered answer streams", func() bool { return r.store.Snapshot().Live.Activity == transcript.ActivityResponding })
		r.send(tea.KeyPressMsg{Code: tea.KeyEscape})
		r.until("the turn stops", func() bool { return !r.running() })
		var stopped bool
		for _, e := range r.store.Snapshot().Document.All() {
			_, stopped = e.Content.(transcript.Stopped)
		}
		if !stopped {
			t.Fatalf("esc did not stop the turn: the document does not end with a stopped entry")
		}
		r.catchUp()
		if !strings.Contains(r.grid(), "Stopped after") {
			t.Fatalf("the frame does not show the stop:\n%s", r.grid())
		}
		// Once stopped, the frame no longer says it is stopping.
		if strings.Contains(r.grid(), "stopping the turn") {
			t.Fatalf("\"stopping the turn\" stays after the turn stopped:\n%s", r.grid())
		}
	})
}

// The footer's activity names each state the engine reports, counts down
// a retry, and sums the session including child agents.
func TestFooterText(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		live     transcript.Live
		approval bool
		want     string
	}{
		{"idle", transcript.Live{Model: "m"}, false, "ready · m"},
		{"thinking", transcript.Live{Activity: transcript.ActivityThinking, Model: "m", PromptContext: 1500}, false, "thinking… · m · 1.5k context"},
		{"streaming", transcript.Live{Activity: transcript.ActivityResponding}, false, "streaming…"},
		{"tool", transcript.Live{Activity: transcript.ActivityTool}, false, "running a tool…"},
		{"approval", transcript.Live{Activity: transcript.ActivityWaiting}, true, "awaiting approval"},
		{"retry", transcript.Live{Activity: transcript.ActivityWaiting, Retry: transcript.Retry{Attempt: 2, Reason: "rate_limit", At: now.Add(4 * time.Second)}}, false, "retrying in 4s (attempt 2, rate_limit)"},
		{"totals", transcript.Live{Model: "m", Totals: transcript.Usage{InputTokens: 12_400, OutputTokens: 950, CostUSD: 0.0123}}, false, "ready · m · session 12k in → 950 out · $0.01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := footerText(tt.live, tt.approval, now); got != tt.want {
				t.Fatalf("FooterText = %q, want %q", got, tt.want)
			}
		})
	}
}

// A child agent shows in its own region; the main footer keeps the main
// agent's activity, model and context while the child works.
func TestAppChildRegion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newChatRig(t, Options{Theme: PlainTheme}, 80, 16, demoProvider())
		lease := r.store.Lease()
		cw, err := lease.StartChild("explore the parser")
		if err != nil {
			t.Fatal(err)
		}
		_ = cw
		r.catchUp()
		grid := r.grid()
		if !strings.Contains(grid, "⎇ explore the parser · thinking…") {
			t.Fatalf("the child's region is missing:\n%s", grid)
		}
		if !strings.Contains(grid, "○ ready · folio-demo") {
			t.Fatalf("a child changed the main footer:\n%s", grid)
		}
	})
}

// With a plain theme (TERM=dumb) the whole frame is text without escape
// sequences; with NO_COLOR it keeps attributes but has no colors.
func TestAppFramePlainAndNoColor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newChatRig(t, Options{Theme: DetectTheme([]string{"TERM=dumb"}, true), Notice: "demo model"}, 70, 20, demoProvider())
		r.typeText("hello")
		r.enter()
		r.until("the turn finishes", func() bool { return !r.running() && r.store.Snapshot().Document.Len() >= 3 })
		if got := r.app.View().Content; strings.Contains(got, "\x1b") {
			t.Fatalf("a dumb terminal got escape sequences: %q", got)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		r := newChatRig(t, Options{Theme: DetectTheme([]string{"TERM=xterm-256color", "NO_COLOR=1"}, true), Notice: "demo model"}, 70, 20, demoProvider())
		r.typeText("hello")
		r.enter()
		r.until("the turn finishes", func() bool { return !r.running() && r.store.Snapshot().Document.Len() >= 3 })
		got := r.app.View().Content
		if strings.Contains(got, "38;5;") || strings.Contains(got, "38;2;") {
			t.Fatalf("NO_COLOR got foreground colors: %q", got)
		}
		if !strings.Contains(got, "\x1b[") {
			t.Fatal("NO_COLOR lost its text attributes too")
		}
	})
}

// ctrl+y copies the answer's markdown source, not its wrapped rendering,
// with OSC 52 in both views: through the program in the fullscreen view,
// straight to the terminal in the classic one, which prints nothing into
// scrollback.
func TestAppCopyAnswer(t *testing.T) {
	const source = "**folio's built-in demo model**"
	synctest.Test(t, func(t *testing.T) {
		r := newChatRig(t, Options{Theme: PlainTheme}, 60, 20, demoProvider())
		r.typeText("hello")
		r.enter()
		r.until("the turn finishes", func() bool { return !r.running() && r.store.Snapshot().Document.Len() >= 3 })
		cmd := r.app.key(tea.KeyPressMsg{Code: 'y', Mod: tea.ModCtrl})
		if cmd == nil {
			t.Fatal("ctrl+y gave no command in the fullscreen view")
		}
		if !strings.Contains(r.app.status, "copied the answer's markdown") {
			t.Fatalf("status after ctrl+y: %q", r.app.status)
		}
		if got := fmt.Sprint(cmd()); !strings.Contains(got, source) {
			t.Fatalf("the clipboard message does not carry the markdown source: %v", got)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		term := newTerminal(60, 20)
		var raw strings.Builder
		out := writerFunc(func(b []byte) { raw.Write(b); term.write(b) })
		r := newChatRig(t, Options{Theme: PlainTheme, Classic: true, Output: out}, 60, 20, demoProvider())
		r.typeText("hello")
		r.enter()
		r.until("the turn finishes", func() bool { return !r.running() && r.store.Snapshot().Document.Len() >= 3 })
		raw.Reset()
		before := strings.Count(strings.Join(allRows(term), "\n"), source)
		r.send(tea.KeyPressMsg{Code: 'y', Mod: tea.ModCtrl})
		if !strings.Contains(r.app.status, "copied the answer's markdown") {
			t.Fatalf("status after ctrl+y: %q", r.app.status)
		}
		i := strings.Index(raw.String(), "\x1b]52;c;")
		if i < 0 {
			t.Fatalf("the classic view wrote no OSC 52 sequence: %q", raw.String())
		}
		enc := raw.String()[i+len("\x1b]52;c;"):]
		enc = enc[:strings.IndexByte(enc, '\a')]
		md, err := base64.StdEncoding.DecodeString(enc)
		if err != nil || !strings.Contains(string(md), source) {
			t.Fatalf("the OSC 52 payload is not the markdown source: %q, %v", md, err)
		}
		if rows := strings.Join(allRows(term), "\n"); strings.Count(rows, source) != before {
			t.Fatalf("the classic view printed the markdown source into scrollback:\n%s", rows)
		}
	})
}

// /resume lists saved conversations (title, updated, entries); choosing
// one resumes it through the callback and shows its document.
func TestAppResumePicker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		saved := doc(ent("s1", transcript.User{Text: "the saved question"}), ent("s2", transcript.Agent{Markdown: "The saved answer."}))
		var r *chatRig
		var resumed string
		o := Options{
			Theme: PlainTheme,
			Conversations: func() ([]Conversation, error) {
				return []Conversation{
					{ID: "c2", Title: "parser errors", Updated: t0.Add(2 * time.Hour), Entries: 42},
					{ID: "c1", Title: "", Updated: t0, Entries: 2},
				}, nil
			},
			Resume: func(id string) error {
				resumed = id
				return r.eng.Resume(saved, nil)
			},
		}
		r = newChatRig(t, o, 70, 12, demoProvider())
		r.typeText("/resume")
		r.enter()
		grid := r.grid()
		golden(t, "app_picker", grid)
		if !strings.Contains(grid, "› parser errors") || !strings.Contains(grid, "42 entries") || !strings.Contains(grid, "c1") {
			t.Fatalf("the picker does not list the conversations:\n%s", grid)
		}
		r.send(tea.KeyPressMsg{Code: tea.KeyDown})
		r.enter()
		if resumed != "c1" {
			t.Fatalf("resumed %q, want c1", resumed)
		}
		r.catchUp()
		if grid := r.grid(); !strings.Contains(grid, "the saved question") || !strings.Contains(grid, "The saved answer.") {
			t.Fatalf("the resumed conversation is not shown:\n%s", grid)
		}
	})
}

// The classic view through its own writer: the settled turn is printed
// into scrollback once, and the chrome stays below it.
func TestAppClassicFrame(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		term := newTerminal(70, 16)
		r := newChatRig(t, Options{Theme: DarkTheme, Classic: true, Output: writerFunc(term.write), Notice: "demo model — see docs/providers.md"}, 70, 16, demoProvider())
		r.typeText("show me a table")
		r.enter()
		r.until("the turn finishes", func() bool { return !r.running() && r.store.Snapshot().Document.Len() >= 4 })
		grid := term.grid()
		golden(t, "app_classic", grid)
		rows := allRows(term)
		for _, needle := range []string{"› show me a table", "OpenRouter", "Set one with", "tok/s"} {
			if n := countAll(rows, needle); n != 1 {
				t.Errorf("%q is on the terminal %d times, want once:\n%s", needle, n, grid)
			}
		}
	})
}

// A delivery that failed in transport is shown as uncertain and never
// resent as another turn; once the engine says it never got it, it is a
// draft that ctrl+r sends.
func TestAppUncertainDelivery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var r *chatRig
		fail := true
		o := Options{Theme: PlainTheme, Transport: func(ctx context.Context, id, text string, steer bool) (engine.Receipt, error) {
			if fail {
				fail = false
				return engine.Receipt{}, fmt.Errorf("connection reset")
			}
			return r.eng.Transport()(ctx, id, text, steer)
		}}
		r = newChatRig(t, o, 80, 12, demoProvider())
		r.typeText("hello")
		r.enter()
		synctest.Wait()
		r.send(snapshotMsg(r.store.Snapshot())) // the outbox's mirror, before any confirmation
		if grid := r.grid(); !strings.Contains(grid, "uncertain, not resent: hello") {
			t.Fatalf("the uncertain delivery is not shown:\n%s", grid)
		}
		r.catchUp() // confirms with the engine, which never got it
		if grid := r.grid(); !strings.Contains(grid, "not sent (the engine never received it) · ctrl+r sends it: hello") {
			t.Fatalf("the unconfirmed delivery did not become a draft:\n%s", grid)
		}
		if n := len(r.eng.Commands()); n != 0 {
			t.Fatalf("the engine has %d commands; nothing may be resent by itself", n)
		}
		r.send(tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl})
		r.until("the draft's turn finishes", func() bool {
			c := r.eng.Commands()
			return len(c) == 1 && c[0].State == engine.Done
		})
		if u, ok := r.store.Snapshot().Document.At(0).Content.(transcript.User); !ok || u.Text != "hello" {
			t.Fatalf("the conversation does not start with the draft's message: %#v", r.store.Snapshot().Document.At(0).Content)
		}
		if grid := r.grid(); strings.Contains(grid, "not sent") {
			t.Fatalf("after ctrl+r the draft is still shown:\n%s", grid)
		}
	})
}

// A message a stop sent back is listed in the snapshot as a returned
// draft. ctrl+r sends it again under a new command ID and ctrl+x drops
// it; either way the engine is told (Dismiss), so the old ID leaves the
// live state instead of lingering next to its resent copy.
func TestAppReturnedDraft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newChatRig(t, Options{Theme: PlainTheme}, 120, 24, demo.New(demo.Options{TokensPerSecond: 20, FirstToken: 100 * time.Millisecond}))
		rejected := func() []transcript.Command {
			var out []transcript.Command
			for _, c := range r.store.Snapshot().Live.Queue.All() {
				if c.State == transcript.CommandRejected {
					out = append(out, c)
				}
			}
			return out
		}
		stopWithQueued := func(text string) transcript.Command {
			t.Helper()
			r.typeText("write a long essay")
			r.enter()
			r.until("the answer streams", func() bool { return r.store.Snapshot().Live.Activity == transcript.ActivityResponding })
			r.typeText(text)
			r.enter()
			r.catchUp()
			r.send(tea.KeyPressMsg{Code: tea.KeyEscape})
			r.until("the turn stops", func() bool { return !r.running() && len(rejected()) == 1 })
			if grid := r.grid(); !strings.Contains(grid, "· ctrl+r sends it: "+text) {
				t.Fatalf("the returned draft is not shown:\n%s", grid)
			}
			return rejected()[0]
		}
		users := func(text string) int {
			n := 0
			for _, e := range r.store.Snapshot().Document.All() {
				if u, ok := e.Content.(transcript.User); ok && u.Text == text {
					n++
				}
			}
			return n
		}

		old := stopWithQueued("and a poem")
		r.send(tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl})
		r.until("the resent message's turn finishes", func() bool { return !r.running() && users("and a poem") == 1 })
		if got := rejected(); len(got) != 0 {
			t.Fatalf("after ctrl+r the live state still lists returned drafts: %+v", got)
		}
		for _, c := range r.eng.Commands() {
			if c.CommandID == old.ID && c.State != engine.Rejected {
				t.Fatalf("the old command %s is %s; it must stay rejected", old.ID, c.State)
			}
		}
		if grid := r.grid(); strings.Contains(grid, "not sent") {
			t.Fatalf("after ctrl+r the draft is still shown:\n%s", grid)
		}

		stopWithQueued("and a limerick")
		r.send(tea.KeyPressMsg{Code: 'x', Mod: tea.ModCtrl})
		r.catchUp()
		r.advance(5 * time.Second)
		if got := rejected(); len(got) != 0 {
			t.Fatalf("after ctrl+x the live state still lists returned drafts: %+v", got)
		}
		if n := users("and a limerick"); n != 0 {
			t.Fatalf("a dropped draft was sent: %d user entries", n)
		}
		if grid := r.grid(); strings.Contains(grid, "and a limerick") {
			t.Fatalf("after ctrl+x the draft is still shown:\n%s", grid)
		}
	})
}

// The footer counts a pending retry down from Live.Retry without another
// snapshot: it redraws when the whole number of seconds shown changes, so
// "retrying in 3s" at 2.5s out becomes 2s half a second later, then 1s,
// then 0s when the attempt is due.
func TestAppRetryCountdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newChatRig(t, Options{Theme: PlainTheme}, 80, 12, demoProvider())
		start := time.Now()
		if err := r.store.Lease().SetRetry(transcript.Retry{Attempt: 2, Reason: "rate_limit", At: start.Add(2500 * time.Millisecond)}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()

		// run executes what Update asked for, as the program would, and
		// hands back only the countdown's ticks.
		ticks := make(chan tea.Msg, 4)
		var run func(tea.Cmd)
		run = func(cmd tea.Cmd) {
			if cmd == nil {
				return
			}
			go func() {
				switch m := cmd().(type) {
				case tea.BatchMsg:
					for _, c := range m {
						run(c)
					}
				case tickMsg:
					ticks <- m
				}
			}()
		}
		_, cmd := r.app.Update(snapshotMsg(r.store.Snapshot()))
		run(cmd)
		if grid := r.grid(); !strings.Contains(grid, "retrying in 3s (attempt 2, rate_limit)") {
			t.Fatalf("2.5s before the retry the footer lacks \"retrying in 3s\":\n%s", grid)
		}

		for _, step := range []struct {
			at   time.Duration
			want string
		}{
			{500 * time.Millisecond, "retrying in 2s"},
			{1500 * time.Millisecond, "retrying in 1s"},
			{2500 * time.Millisecond, "retrying in 0s"},
		} {
			if grid := r.grid(); strings.Contains(grid, step.want) {
				t.Fatalf("%q is shown before its time (%v):\n%s", step.want, time.Since(start), grid)
			}
			m := <-ticks
			if got := time.Since(start); got != step.at {
				t.Fatalf("the countdown redrew at %v, want %v", got, step.at)
			}
			_, cmd := r.app.Update(m)
			if grid := r.grid(); !strings.Contains(grid, step.want) {
				t.Fatalf("at %v the footer lacks %q:\n%s", step.at, step.want, grid)
			}
			run(cmd)
		}
		// A retry that started clears the countdown; no tick is asked for.
		if err := r.store.Lease().SetRetry(transcript.Retry{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		r.send(snapshotMsg(r.store.Snapshot()))
		m := <-ticks // the tick asked for at 0s, a second later
		if _, cmd := r.app.Update(m); cmd != nil {
			t.Fatalf("the countdown keeps ticking after the retry started")
		}
		if grid := r.grid(); strings.Contains(grid, "retrying") {
			t.Fatalf("the footer still counts down:\n%s", grid)
		}
	})
}

// The footer says which tools run without asking for the rest of the session.
func TestFooterShowsSessionAllowedTools(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newChatRig(t, Options{Theme: PlainTheme}, 100, 24, demoProvider())
		r.catchUp()
		if strings.Contains(r.grid(), "allowed:") {
			t.Fatalf("nothing is allowed yet:\n%s", r.grid())
		}
		r.eng.Allow("shell")
		r.eng.Allow("edit_file")
		r.catchUp()
		if g := r.grid(); !strings.Contains(g, "allowed: edit_file, shell") {
			t.Fatalf("the footer does not list the session's allowed tools:\n%s", g)
		}
	})
}

// The standing notice wraps on a narrow terminal instead of losing the
// names of the settings it points to.
func TestAppNoticeWrapsAtSixtyColumns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		notice := "demo model — for a real one set OPENAI_API_KEY and FOLIO_PROVIDER=openai, or see docs/providers.md"
		r := newChatRig(t, Options{Theme: PlainTheme, Notice: notice}, 60, 20, demoProvider())
		grid := strings.Join(strings.Fields(r.grid()), " ")
		for _, want := range []string{"OPENAI_API_KEY", "FOLIO_PROVIDER=openai", "docs/providers.md"} {
			if !strings.Contains(grid, want) {
				t.Errorf("at 60 columns the notice lost %q:\n%s", want, r.grid())
			}
		}
	})
}

// /clear in the classic view starts a new conversation on an empty
// screen and scrollback; /new keeps what is already printed.
func TestAppClassicNewAndClear(t *testing.T) {
	for _, cmd := range []string{"/new", "/clear"} {
		synctest.Test(t, func(t *testing.T) {
			term := newTerminal(60, 20)
			var r *chatRig
			o := Options{Theme: PlainTheme, Classic: true, Output: writerFunc(term.write), New: func() error {
				doc, err := transcript.NewDocument("fresh", nil)
				if err != nil {
					return err
				}
				return r.eng.Resume(doc, nil)
			}}
			r = newChatRig(t, o, 60, 20, demoProvider())
			r.typeText("hello")
			r.enter()
			r.until("the turn finishes", func() bool { return !r.running() && r.store.Snapshot().Document.Len() >= 3 })
			r.catchUp()
			r.typeText(cmd)
			r.enter()
			r.catchUp()
			rows := strings.Join(allRows(term), "\n")
			if got := r.store.Snapshot().Document.Len(); got != 0 {
				t.Fatalf("%s: the document has %d entries", cmd, got)
			}
			kept := strings.Contains(rows, "› hello")
			if cmd == "/new" && !kept || cmd == "/clear" && kept {
				t.Fatalf("%s: the earlier turn on screen or in scrollback: %v\n%s", cmd, kept, rows)
			}
			if !strings.Contains(rows, "Message folio") {
				t.Fatalf("%s: the editor is not drawn again:\n%s", cmd, rows)
			}
		})
	}
}

// The fullscreen view asks for mouse reports only with Options.Mouse.
func TestAppMouseModeIsOptIn(t *testing.T) {
	for _, mouse := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			r := newChatRig(t, Options{Theme: PlainTheme, Mouse: mouse}, 60, 20, demoProvider())
			got := r.app.View().MouseMode
			want := tea.MouseModeNone
			if mouse {
				want = tea.MouseModeCellMotion
			}
			if got != want {
				t.Fatalf("Mouse=%v: the view asks for mouse mode %v, want %v", mouse, got, want)
			}
		})
	}
}

// The terminal knows a turn runs from the store's live state, the fact
// the server's tabs are sent too, not from asking the engine: a turn the
// snapshot names makes tab a steer, which the engine (running nothing)
// gives back as a draft instead of starting a turn with it.
func TestRunningTurnIsTheSnapshots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newChatRig(t, Options{Theme: PlainTheme}, 80, 24, demoProvider())
		if r.app.running() {
			t.Fatal("a turn runs before any was sent")
		}
		if err := r.store.Lease().Do(func(tx *transcript.Tx) error {
			tx.SetTurn(&transcript.Turn{CommandID: "c-1", Entry: "u-1"})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !r.app.running() {
			t.Fatal("the snapshot names a running turn; the terminal does not see it")
		}
		r.typeText("shorter, please")
		r.send(tea.KeyPressMsg{Code: tea.KeyTab})
		r.catchUp()
		if !strings.HasPrefix(r.app.status, "not steered") {
			t.Fatalf("tab with a running turn in the snapshot: status %q", r.app.status)
		}
		if cmds := r.eng.Commands(); len(cmds) != 0 {
			t.Fatalf("the steer became a command: %+v", cmds)
		}
	})
}
