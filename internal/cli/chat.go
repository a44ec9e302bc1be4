package cli

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/provider"
	_ "github.com/foliodev/folio/provider/builtin" // every client: openai, anthropic, demo
	"github.com/foliodev/folio/server"
	"github.com/foliodev/folio/tools"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
	"github.com/foliodev/folio/tui"
)

func init() {
	register("", func(stdio IO) *cobra.Command { return newChatCmd(stdio, false) })
}

// DemoNotice is what the chat says under its footer while the offline demo
// model answers.
const DemoNotice = "demo model — for a real one set OPENAI_API_KEY and FOLIO_PROVIDER=openai, or see docs/providers.md"

// resumeValue is --resume's value: set alone it opens the picker, with an
// ID (--resume=ID, or --resume ID) it opens that conversation.
type resumeValue struct {
	set bool
	id  string
}

// pickSentinel is what pflag stores for a bare --resume: the help shows
// it as --resume ID[=pick].
const pickSentinel = "pick"

func (r *resumeValue) String() string { return r.id }
func (r *resumeValue) Type() string   { return "ID" }
func (r *resumeValue) Set(s string) error {
	r.set = true
	r.id = strings.TrimSpace(s)
	if r.id == pickSentinel {
		r.id = ""
	}
	return nil
}

// tailValue is --tail's value: a number of turns, or all.
type tailValue struct{ turns int }

func (t *tailValue) String() string {
	switch {
	case t.turns < 0:
		return "all"
	case t.turns == 0:
		return ""
	}
	return strconv.Itoa(t.turns)
}
func (t *tailValue) Type() string { return "N|all" }
func (t *tailValue) Set(s string) error {
	if s == "all" {
		t.turns = -1
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return fmt.Errorf("want a number of turns (1 or more) or all, got %q", s)
	}
	t.turns = n
	return nil
}

// chatFlags are the chat's options, on folio itself and on folio chat.
type chatFlags struct {
	classic bool
	resume  resumeValue
	tail    tailValue
	data    string
	prov    providerFlags
	dir     string
	yes     bool
	mouse   bool
	allow   string
}

const chatExample = `folio
folio --classic
folio --resume
folio chat --resume 20260304-050607-a1b2c3 --classic`

// newChatCmd builds the chat command; asRoot makes it folio itself, which
// chats on a terminal and prints help elsewhere.
func newChatCmd(stdio IO, asRoot bool) *cobra.Command {
	return chatCmd(stdio, asRoot, runChat)
}

// chatCmd builds the chat command around run, which tests replace.
func chatCmd(stdio IO, asRoot bool, run func(*cobra.Command, *chatFlags, IO) error) *cobra.Command {
	f := &chatFlags{}
	cmd := &cobra.Command{
		Use:     "chat [--classic] [--resume [ID]]",
		Short:   "Chat in the terminal: fullscreen, or --classic inline",
		Long:    "Chat with a model in the terminal. Fullscreen by default; --classic draws inline and leaves the conversation in the terminal's scrollback.\n\nEach conversation is saved in the data folder under its ID; --resume continues one.",
		Example: chatExample,
		Args: func(cmd *cobra.Command, args []string) error {
			// --resume ID: pflag leaves a separate ID as a positional.
			if f.resume.set && f.resume.id == "" && len(args) == 1 {
				f.resume.id = args[0]
				return nil
			}
			if len(args) > 0 && asRoot {
				return unknownCommand(cmd, args[0])
			}
			return noArgs(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if asRoot && cmd.Flags().NFlag() == 0 && (!isTTY(stdio.In) || !isTTY(stdio.Out)) {
				// In a pipe or a CI log folio prints something useful
				// instead of waiting for keys.
				return cmd.Help()
			}
			return run(cmd, f, stdio)
		},
	}
	if asRoot {
		cmd.Use = "folio"
		cmd.Short = "A conversation engine for AI agent applications"
		cmd.Long = "folio chats with a model in the terminal (the default on a terminal), serves the web app, runs one turn headless, and inspects conversation logs."
	}
	fs := cmd.Flags()
	fs.BoolVar(&f.classic, "classic", false, "the inline view, printing into the terminal's scrollback")
	fs.Var(&f.resume, "resume", "continue the conversation with this ID (as folio log ls lists it); alone, pick one from a list")
	fs.Lookup("resume").NoOptDefVal = pickSentinel
	fs.Var(&f.tail, "tail", "--classic: print this many of a resumed conversation's last turns (default: about two screens), or all of it")
	dataFlag(fs, &f.data)
	f.prov.add(fs)
	fs.StringVar(&f.dir, "dir", "", "workspace folder the tools work in (default: the current folder)")
	fs.BoolVar(&f.yes, "yes", false, "allow every tool call without asking")
	fs.BoolVar(&f.mouse, "mouse", os.Getenv("FOLIO_MOUSE") == "1", "fullscreen: capture the mouse so the wheel scrolls (selecting text then needs shift); default $FOLIO_MOUSE=1, else off")
	fs.StringVar(&f.allow, "allow", "", allowUsage("comma-separated tools to allow without asking"))
	return cmd
}

func runChat(cmd *cobra.Command, f *chatFlags, stdio IO) error {
	work, err := workDir(cmd, f.dir)
	if err != nil {
		return err
	}
	if !isTTY(stdio.In) || !isTTY(stdio.Out) {
		return usageErr(prefix(cmd)+"needs a terminal on standard input and output", `folio run "your prompt"`)
	}
	ctx := cmd.Context()
	dataDir, err := history.DataDir(f.data)
	if err != nil {
		return failure(cmd, err)
	}
	popts := provider.Options{DataDir: dataDir, Provider: f.prov.provider, Model: f.prov.model, BaseURL: f.prov.baseURL}
	cfg, prov, err := provider.Load(popts)
	if err != nil {
		return providerErr(cmd, f.prov, err)
	}
	// The note goes on the chat's first screen (Welcome.Note), where the
	// fullscreen view cannot hide it behind the alternate screen; a
	// resumed conversation has no first screen, so it is said here then.
	if f.resume.set {
		demoModelNote(stdio.Err, cfg)
	}

	extra, mgr, err := loadMCP(ctx, dataDir, work, stdio.Err)
	if err != nil {
		return failure(cmd, err)
	}
	if mgr != nil {
		defer mgr.Close()
	}
	s, err := newChatSession(dataDir, cfg, prov, work, allowList(f.yes, f.allow), extra...)
	if err != nil {
		return failure(cmd, err)
	}
	s.popts, s.work = popts, work
	defer s.close()
	// The classic view asked for every turn reads the whole conversation;
	// everything else opens its tail.
	s.whole = f.classic && f.tail.turns < 0
	if f.classic && f.tail.turns > 0 {
		s.turns = f.tail.turns
	}
	if f.resume.id != "" {
		s.warn = stdio.Err
		if err := s.resume(f.resume.id); err != nil {
			return failure(cmd, err)
		}
		s.warn = nil
	}
	// Other folio processes attach to what this chat owns (chat_host.go).
	s.modelName = cfg.Name + "/" + cfg.Model
	if err := s.serveLocal(ctx, s.model); err != nil {
		fmt.Fprintf(stdio.Err, "folio: other folio processes cannot attach to this chat: %v\n", err)
	}

	o := tui.Options{
		Engine:        chatEngine{s},
		Attached:      s.attached,
		Classic:       f.classic,
		Theme:         tui.DetectTheme(os.Environ(), true),
		Location:      time.Local,
		Conversations: s.list,
		Resume:        s.resume,
		Picker:        f.resume.set && f.resume.id == "",
		Mouse:         f.mouse,
		Welcome:       &tui.Welcome{Model: cfg.Name + "/" + cfg.Model, Folder: work, Data: dataDir, Note: demoModelIgnored(cfg)},
		Models:        s.models,
		SetModel:      s.setModel,
		New:           s.newConversation,
		Export:        s.export,
		Search:        s.search,
		Find:          s.find,
		Tail:          f.tail.turns,
		Earlier:       s.showCommand,
		Pager:         s,
	}
	hist := newPromptHistory(dataDir)
	o.History, o.OnPrompt = hist.load(), hist.add
	if cfg.Type == provider.TypeDemo {
		o.Notice = DemoNotice
	}
	in, out := stdio.In.(*os.File), stdio.Out.(*os.File) // isTTY checked both
	if err := tui.Chat(ctx, o, in, out); err != nil {
		return failure(cmd, err)
	}
	if id, ok := s.saved(); ok {
		fmt.Fprintf(stdio.Out, "Resume this conversation with: folio --resume %s\n", id)
	}
	return nil
}

// chatSession is the wiring behind one chat: the store the engine writes,
// the engine, and the log the current conversation saves to. Resuming
// swaps the log; the store and the engine stay.
type chatSession struct {
	dataDir string
	host    *toolview.Host
	eng     *engine.Engine

	popts provider.Options // for /model's list
	work  string           // the tools' folder, where /export writes

	// warn gets notices about a resumed log (a lock taken over) while
	// nothing draws on the terminal yet; nil once the chat's view owns it.
	warn io.Writer

	// whole makes resume read the whole document (the classic view
	// printing every turn) instead of its tail.
	whole bool
	// turns makes resume reach back to the last turns user entries when
	// the engine's tail holds fewer (the classic view printing --tail N).
	turns int

	mu  sync.Mutex
	log *history.Log // nil while attached
	id  string
	// path is the current conversation's log, which the views page from
	// whether the chat owns it or is attached to its owner.
	path string
	// att is the owner the chat is attached to (attach.go); nil while it
	// owns its conversation.
	att    *attachment
	closed bool
	// saver is the engine's saver while the chat saves itself; srv and
	// ep serve the owned conversation to other processes, lent to srv
	// until release (chat_host.go).
	saver   *titledLog
	srv     *server.Server
	ep      *server.LocalEndpoint
	release func() (titled bool)
	// modelName is the model as provider/model, for the endpoint.
	modelName string
}

func newChatSession(dataDir string, cfg provider.Config, prov provider.Provider, work string, allow []string, extra ...tools.Tool) (*chatSession, error) {
	s := &chatSession{dataDir: dataDir, id: newConversationID()}
	doc, err := transcript.NewDocument(s.id, nil)
	if err != nil {
		return nil, err
	}
	// Accepted text belongs to the document at once; the pacer chooses how
	// much of it a reader sees, and the views paint only that prefix, so a
	// provider that sends in bursts still reads as a steady stream.
	// Settlement reveals the rest. (folio run prints as text arrives.)
	store := transcript.NewStore(transcript.WithPacing(transcript.DefaultPacing), transcript.WithDocument(doc))
	s.host = toolview.New(toolview.WithArtifactDir(dataDir + "/artifacts"))
	path, err := history.Locate(dataDir, s.id)
	if err != nil {
		return nil, err
	}
	if s.log, err = openLog(path, nil); err != nil {
		return nil, err
	}
	s.path = path
	s.saver = &titledLog{log: s.log}
	opts := []engine.Option{engine.WithModel(cfg.Model), engine.WithHost(s.host), engine.WithSaver(s.saver)}
	if cfg.ContextWindow > 0 {
		opts = append(opts, engine.WithContextWindow(cfg.ContextWindow))
	}
	opts = append(opts, engine.WithAllowed(allow...))
	sp := &spawner{}
	set, err := tools.Builtin(work, sp)
	if err == nil && len(extra) > 0 {
		set, err = set.With(extra...)
	}
	if err != nil {
		s.log.Close()
		return nil, err
	}
	opts = append(opts, engine.WithTools(set))
	s.eng = engine.New(store, prov, opts...)
	sp.e = s.eng
	return s, nil
}

func (s *chatSession) close() {
	s.mu.Lock()
	s.detachLocked()
	s.mu.Unlock()
	s.eng.Close() // a running turn stops and is saved, through the endpoint's server while lent
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.closeLocal()
	s.host.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log != nil {
		s.log.Close()
	}
}

// list is the /resume picker's list: the data folder's readable logs.
func (s *chatSession) list() ([]tui.Conversation, error) {
	all, err := history.List(s.dataDir)
	if err != nil {
		return nil, err
	}
	out := make([]tui.Conversation, 0, len(all))
	for _, c := range all {
		if c.Err != nil || c.Entries == 0 {
			continue
		}
		out = append(out, tui.Conversation{ID: conversationID(c), Title: c.Title, Updated: c.UpdatedAt, Entries: c.Entries})
	}
	return out, nil
}

// resume continues conversation id: its log is opened (taking its lock),
// the engine is hydrated from its tail (engine.Open), and later saves go to
// it. When another folio process holds the lock and serves a local
// endpoint, the chat attaches to it instead (attach.go).
func (s *chatSession) resume(id string) error {
	path, err := history.Locate(s.dataDir, id)
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no conversation %q in %s", id, history.ConversationsDir(s.dataDir))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if id == s.id {
		return nil
	}
	log, err := openLog(path, s.warn)
	var le *history.LockedError
	if errors.As(err, &le) && le.PID > 0 {
		if aerr := s.attachLocked(id, path, le.PID); aerr == nil {
			return nil
		}
	}
	if err != nil {
		return err
	}
	// The server's open: the page index gives the end of the document and
	// the messages a turn needs, so resuming costs the tail, not the whole
	// conversation. The views page earlier entries from the log.
	s.unhostLocked()
	conv, err := s.open(log)
	if err != nil {
		log.Close()
		s.hostLocked()
		return err
	}
	s.setSaverLocked(log, conv.Title != "")
	// Resume refuses while a turn runs, so the old log has no save in
	// flight.
	s.detachLocked()
	if s.log != nil {
		s.log.Close()
	}
	s.log, s.id, s.path = log, id, path
	s.hostLocked()
	return nil
}

// open hydrates the engine from log: its tail, or with whole every entry.
func (s *chatSession) open(log *history.Log) (*history.Conversation, error) {
	if s.turns > 0 {
		return s.eng.Open(turnsLoader{log, s.turns})
	}
	if !s.whole {
		return s.eng.Open(log)
	}
	conv, err := log.Load()
	if err != nil {
		return nil, err
	}
	return conv, s.eng.Resume(conv.Document, conv.Messages)
}

// turnsLoader is a log whose tail reaches back to its last turns user
// entries, for the classic view printing that many turns on resume.
type turnsLoader struct {
	log   *history.Log
	turns int
}

func (t turnsLoader) LoadTail(n int, _ *history.TailStart) (*history.Conversation, error) {
	return t.log.LoadTail(n, lastTurns(t.turns))
}

// lastTurns is a TailStart that starts the window at the last turns user
// entries of the document (or its first entry when it has fewer).
func lastTurns(turns int) *history.TailStart {
	return &history.TailStart{Kinds: []transcript.Kind{transcript.KindUser}, Start: func(picked []history.Picked, from int, _ []message.Message) (int, bool) {
		if len(picked) >= turns {
			return picked[len(picked)-turns].Index, false
		}
		return 0, from > 0
	}}
}

// saved returns the current conversation's ID if anything of it is saved.
func (s *chatSession) saved() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	path, err := history.Locate(s.dataDir, s.id)
	if err != nil {
		return "", false
	}
	st, err := os.Stat(path)
	return s.id, err == nil && st.Size() > 0
}

// newConversation switches to a new, empty conversation under a fresh ID;
// the one before stays saved as it was.
func (s *chatSession) newConversation() error {
	id := newConversationID()
	path, err := history.Path(s.dataDir, id)
	if err != nil {
		return err
	}
	doc, err := transcript.NewDocument(id, nil)
	if err != nil {
		return err
	}
	log, err := openLog(path, nil)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unhostLocked()
	if err := s.eng.Resume(doc, nil); err != nil {
		log.Close()
		s.hostLocked()
		return err
	}
	s.setSaverLocked(log, false)
	s.detachLocked()
	if s.log != nil {
		s.log.Close()
	}
	s.log, s.id, s.path = log, id, path
	s.hostLocked()
	return nil
}

// export writes the conversation into the tools' folder as plain text, or
// for "html" as one self-contained HTML file: the whole saved log, read
// through its page index as folio log export --format html reads it (the
// engine's document holds only the resumed tail), or the document while
// nothing is saved yet.
func (s *chatSession) export(format string) (string, error) {
	s.mu.Lock()
	id, logPath := s.id, s.path // s.log is nil while attached
	s.mu.Unlock()
	doc := s.eng.Store().Snapshot().Document
	if doc.Len() == 0 {
		return "", errors.New("the conversation is empty")
	}
	if format == "html" {
		return s.exportHTML(id, doc)
	}
	if n := doc.Elided(); n > 0 {
		// The engine holds the conversation's end (a resume's tail, or a
		// long session's window); the entries before it come from the
		// log.
		earlier, _, err := history.HeadEntries(logPath, 0, n)
		if err != nil {
			return "", fmt.Errorf("read the conversation's earlier entries: %w", err)
		}
		doc = transcript.NewCheckedDocument(doc.ID(), append(earlier, doc.Entries()...))
	}
	path := filepath.Join(s.work, "folio-"+id+".txt")
	if err := os.WriteFile(path, []byte(renderDocument(doc, tui.PlainTheme, 100)), 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// models lists what /model offers: the models folio models shows as
// usable, as provider/model.
func (s *chatSession) models() ([]string, error) {
	opts, err := server.ConfiguredModels(s.popts)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(opts))
	for i, o := range opts {
		out[i] = o.Name
	}
	return out, nil
}

// setModel switches the engine to the named model for the turns after.
func (s *chatSession) setModel(name string) error {
	opts, err := server.ConfiguredModels(s.popts)
	if err != nil {
		return err
	}
	for _, o := range opts {
		if o.Name != name {
			continue
		}
		p, err := provider.New(o.Config)
		if err != nil {
			return err
		}
		if err := s.eng.SetModel(engine.ModelChoice{Provider: p, Model: o.Model, ContextWindow: o.Config.ContextWindow}); err != nil {
			return err
		}
		s.mu.Lock()
		s.modelName = name
		s.mu.Unlock()
		return nil
	}
	return fmt.Errorf("no model %q", name)
}

// newConversationID names a new conversation by its start time, with a
// random suffix so two chats started in the same second differ.
func newConversationID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}
