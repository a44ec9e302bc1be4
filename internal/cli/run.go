package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/provider"
	_ "github.com/foliodev/folio/provider/demo"   // the default model
	_ "github.com/foliodev/folio/provider/openai" // OpenAI-compatible servers
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
	"github.com/foliodev/folio/tui"
)

func init() { register("", newRunCmd) }

// runOutput is what --json prints: the turn's outcome and the entries.
type runOutput struct {
	State    string             `json:"state"`
	Reason   string             `json:"reason,omitzero"`
	Provider string             `json:"provider"`
	Model    string             `json:"model"`
	Entries  []transcript.Entry `json:"entries"`
	Messages []message.Message  `json:"messages"`
}

type runFlags struct {
	asJSON  bool
	yes     bool
	allow   string
	prov    providerFlags
	data    string
	dir     string
	logPath string
	width   int
	system  string
}

func newRunCmd(stdio IO) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run [PROMPT | -]",
		Short: "Run one turn headless and print it (--json for the entries)",
		Long: `Run one turn without a terminal UI: send PROMPT, print the reply as the classic view draws it, and exit 0 when the turn finished, 1 when it failed or was stopped.

Without PROMPT, or with "-", the prompt is read from standard input. A tool call that needs approval stops the turn with exit 1 unless --yes or --allow TOOL allows it.

With --log, the turn continues that conversation, opened from its end: the model gets its messages, and what is printed (or listed under "entries" with --json) is the last 64 entries before the turn, after a line counting the earlier ones, then the turn; folio log show prints the whole conversation.`,
		Example: `folio run "list the files here"
folio run --json --yes "summarize README.md"
folio run --log notes.jsonl "and now the tests"
git diff | folio run --allow shell -`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usage(cmd, "give the prompt as one argument (quote it), got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			prompt, err := runPrompt(cmd, args, stdio.In)
			if err != nil {
				return err
			}
			return runRun(cmd, f, prompt, stdio)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&f.asJSON, "json", false, "print the turn's entries and messages as one JSON object")
	fs.BoolVar(&f.yes, "yes", false, "allow every tool call without asking")
	fs.StringVar(&f.allow, "allow", "", allowUsage("comma-separated tools to allow without asking"))
	f.prov.add(fs)
	fs.StringVar(&f.data, "data", "", "data folder for config.json and artifacts (default $FOLIO_HOME, else $XDG_DATA_HOME/folio)")
	fs.StringVar(&f.dir, "dir", "", "workspace folder the tools work in (default: the current folder)")
	fs.StringVar(&f.logPath, "log", "", "conversation log to continue and save to (default: none)")
	fs.IntVar(&f.width, "width", 0, "wrap width (default: $COLUMNS, else 100)")
	fs.StringVar(&f.system, "system", "", "system prompt (default: folio's built-in one, which describes the tools)")
	return cmd
}

// runPrompt is the prompt argument, or standard input when there is none
// or it is "-". A terminal on standard input is not read: nobody may be
// about to type, and folio run has no editor.
func runPrompt(cmd *cobra.Command, args []string, in io.Reader) (string, error) {
	if len(args) == 1 && args[0] != "-" {
		if strings.TrimSpace(args[0]) == "" {
			return "", usage(cmd, "the prompt is empty")
		}
		return args[0], nil
	}
	if in == nil || isTTY(in) {
		return "", usage(cmd, "give a prompt, or pipe one in on standard input")
	}
	b, err := io.ReadAll(in)
	if err != nil {
		return "", failure(cmd, fmt.Errorf("read the prompt from standard input: %w", err))
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", usage(cmd, "the prompt on standard input is empty")
	}
	return strings.TrimRight(string(b), "\n"), nil
}

func runRun(cmd *cobra.Command, f *runFlags, prompt string, stdio IO) error {
	ctx := cmd.Context()
	if err := checkWidth(cmd, f.width); err != nil {
		return err
	}
	work, err := workDir(cmd, f.dir)
	if err != nil {
		return err
	}
	dataDir, _ := history.DataDir(f.data) // no data folder: no config file, no artifacts
	cfg, prov, err := provider.Load(provider.Options{DataDir: dataDir, Provider: f.prov.provider, Model: f.prov.model, BaseURL: f.prov.baseURL})
	if err != nil {
		return providerErr(cmd, f.prov, err)
	}
	if cfg.Type == provider.TypeDemo && !f.asJSON {
		fmt.Fprintln(stdio.Err, "folio: using the offline demo model; set FOLIO_PROVIDER and a key (or --base-url) to use a real one, see folio models")
	}
	demoModelNote(stdio.Err, cfg)

	store := transcript.NewStore(transcript.WithPacing(transcript.Pacing{}))
	var hostOpts []toolview.Option
	if dataDir != "" {
		hostOpts = append(hostOpts, toolview.WithArtifactDir(dataDir+"/artifacts"))
	}
	host := toolview.New(hostOpts...)
	defer host.Close()

	opts := []engine.Option{engine.WithModel(cfg.Model), engine.WithHost(host), engine.WithSystem(cmp.Or(f.system, engine.DefaultSystem))}
	if cfg.ContextWindow > 0 {
		opts = append(opts, engine.WithContextWindow(cfg.ContextWindow))
	}
	opts = append(opts, engine.WithAllowed(allowList(f.yes, f.allow)...))
	// Nobody can answer an approval here: a call that needs one stops the
	// turn, and the exit says what would have allowed it.
	var (
		eng          *engine.Engine
		needsMu      sync.Mutex
		needApproval string
	)
	opts = append(opts, engine.WithApprover(func(_ context.Context, a engine.Approval) engine.Decision {
		needsMu.Lock()
		if needApproval == "" {
			needApproval = a.Tool
		}
		needsMu.Unlock()
		eng.Stop()
		return engine.Deny
	}))
	var log *history.Log
	if f.logPath != "" {
		if log, err = openLog(f.logPath, stdio.Err); err != nil {
			return failure(cmd, err)
		}
		defer log.Close()
		opts = append(opts, engine.WithSaver(log))
	}

	// The task tool needs the engine, which needs the tools: a small
	// indirection breaks the cycle.
	sp := &spawner{}
	extra, mgr, err := loadMCP(ctx, dataDir, work, stdio.Err)
	if err != nil {
		return failure(cmd, err)
	}
	if mgr != nil {
		defer mgr.Close()
	}
	set, err := tools.Builtin(work, sp)
	if err == nil && len(extra) > 0 {
		set, err = set.With(extra...)
	}
	if err != nil {
		return failure(cmd, err)
	}
	opts = append(opts, engine.WithTools(set))
	eng = engine.New(store, prov, opts...)
	sp.e = eng
	defer eng.Close()

	if log != nil {
		// A turn needs the model's messages and the end of the document,
		// not the conversation: the log is opened through its tail (its
		// page index in a data folder), so a long one costs what a short
		// one does.
		if _, err := eng.Open(log); err != nil {
			return failure(cmd, err)
		}
	}

	w := f.width
	if w <= 0 {
		w = envWidth()
	}
	var view *liveView
	if !f.asJSON {
		view = newLiveView(stdio.Out, w)
	}
	sub := store.Subscribe()
	defer sub.Close()

	const id = "run-1"
	if _, err := eng.Send(ctx, id, prompt, nil); err != nil {
		return failure(cmd, err)
	}
	finished := make(chan engine.Receipt, 1)
	go func() {
		r, _ := eng.Wait(context.Background(), id)
		finished <- r
	}()
	var r engine.Receipt
	stopping := false
	var shownRetry transcript.Retry
wait:
	for {
		select {
		case snap := <-sub.C():
			if view != nil {
				view.sync(snap)
			}
			// The retry wait is live state, not an entry: say it on
			// standard error so a script's output stays the transcript.
			if rt := snap.Live.Retry; rt.Pending() && rt != shownRetry {
				shownRetry = rt
				fmt.Fprintf(stdio.Err, "folio: %s; retrying in %s (attempt %d)\n", rt.Reason,
					time.Until(rt.At).Round(100*time.Millisecond), rt.Attempt)
			}
		case r = <-finished:
			break wait
		case <-ctx.Done():
			if !stopping {
				stopping = true
				eng.Stop()
			}
		}
	}
	snap := store.Snapshot()
	if view != nil {
		view.finish(snap)
	} else {
		out := runOutput{State: string(r.State), Reason: r.Reason, Provider: cfg.Name, Model: cfg.Model,
			Entries: snap.Document.Entries(), Messages: eng.Messages()}
		if err := json.MarshalWrite(stdio.Out, out, json.Deterministic(true), jsontext.Multiline(false)); err != nil {
			return err
		}
		io.WriteString(stdio.Out, "\n")
	}
	needsMu.Lock()
	tool := needApproval
	needsMu.Unlock()
	if tool != "" {
		return ExitError{Code: 1, Msg: fmt.Sprintf("run: %s needs approval; pass --yes or --allow %s", tool, tool)}
	}
	switch r.State {
	case engine.Done:
		return nil
	case engine.Failed:
		return ExitError{Code: 1, Msg: "run: the turn failed: " + r.Reason}
	default:
		msg := "run: the turn was stopped"
		if r.Reason != "" {
			msg += ": " + r.Reason
		}
		return ExitError{Code: 1, Msg: msg}
	}
}

type spawner struct{ e *engine.Engine }

func (s *spawner) Spawn(ctx context.Context, inv, label, prompt string) (string, string, error) {
	return s.e.Spawn(ctx, inv, label, prompt)
}

// liveView prints the classic projection as the turn streams: settled
// lines once, in order. On a terminal the live region is redrawn in place;
// elsewhere (pipes, files) it is printed once at the end, so the output is
// plain text a script can read.
type liveView struct {
	out     io.Writer
	width   int
	tty     bool
	classic *tui.Classic
	inline  *tui.Inline
}

func newLiveView(out io.Writer, width int) *liveView {
	theme := tui.PlainTheme
	tty := isTerminal(out)
	if tty {
		theme = tui.DetectTheme(os.Environ(), true)
	}
	c := tui.NewClassic(tui.NewPainter(theme, tui.ForClassic(), tui.Unattended(), tui.WithLocation(time.Local)))
	c.Mount()
	return &liveView{out: out, width: width, tty: tty, classic: c, inline: tui.NewInline(out)}
}

func (v *liveView) sync(s transcript.Snapshot) {
	f := v.classic.Sync(s.Document, s.Generation, v.width, 12)
	if v.tty {
		v.inline.Write(f)
		return
	}
	for _, l := range f.Print {
		io.WriteString(v.out, l+"\n")
	}
}

func (v *liveView) finish(s transcript.Snapshot) {
	f := v.classic.Sync(s.Document, s.Generation, v.width, 1<<30)
	if v.tty {
		v.inline.Write(tui.Frame{Print: append(f.Print, f.Live...)})
		return
	}
	for _, l := range append(f.Print, f.Live...) {
		io.WriteString(v.out, l+"\n")
	}
}
