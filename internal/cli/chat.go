package cli

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/provider"
	_ "github.com/foliodev/folio/provider/builtin" // every client: openai, anthropic, demo
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

// chatFlags are the chat's options, on folio itself and on folio chat.
type chatFlags struct {
	classic bool
	resume  resumeValue
	data    string
	prov    providerFlags
	dir     string
	yes     bool
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
				return usageErr(fmt.Sprintf("unknown command %q", args[0]), "folio --help")
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
	dataFlag(fs, &f.data)
	f.prov.add(fs)
	fs.StringVar(&f.dir, "dir", "", "workspace folder the tools work in (default: the current folder)")
	fs.BoolVar(&f.yes, "yes", false, "allow every tool call without asking")
	return cmd
}

func runChat(cmd *cobra.Command, f *chatFlags, stdio IO) error {
	if !isTTY(stdio.In) || !isTTY(stdio.Out) {
		return usageErr(prefix(cmd)+"needs a terminal on standard input and output", `folio run "your prompt"`)
	}
	ctx := cmd.Context()
	dataDir, err := history.DataDir(f.data)
	if err != nil {
		return failure(cmd, err)
	}
	cfg, prov, err := provider.Load(provider.Options{DataDir: dataDir, Provider: f.prov.provider, Model: f.prov.model, BaseURL: f.prov.baseURL})
	if err != nil {
		return failure(cmd, err)
	}
	work := f.dir
	if work == "" {
		if work, err = os.Getwd(); err != nil {
			return failure(cmd, err)
		}
	}

	s, err := newChatSession(dataDir, cfg, prov, work, f.yes)
	if err != nil {
		return failure(cmd, err)
	}
	defer s.close()
	if f.resume.id != "" {
		if err := s.resume(f.resume.id); err != nil {
			return failure(cmd, err)
		}
	}

	o := tui.Options{
		Engine:        s.eng,
		Classic:       f.classic,
		Theme:         tui.DetectTheme(os.Environ(), true),
		Location:      time.Local,
		Conversations: s.list,
		Resume:        s.resume,
		Picker:        f.resume.set && f.resume.id == "",
	}
	if cfg.Type == provider.TypeDemo {
		o.Notice = DemoNotice
	}
	in, out := stdio.In.(*os.File), stdio.Out.(*os.File) // isTTY checked both
	if err := tui.Chat(ctx, o, in, out); err != nil {
		return failure(cmd, err)
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

	mu  sync.Mutex
	log *history.Log
	id  string
}

func newChatSession(dataDir string, cfg provider.Config, prov provider.Provider, work string, yes bool) (*chatSession, error) {
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
	path, err := history.Path(dataDir, s.id)
	if err != nil {
		return nil, err
	}
	if s.log, err = history.Open(path); err != nil {
		return nil, err
	}
	opts := []engine.Option{engine.WithModel(cfg.Model), engine.WithHost(s.host), engine.WithSaver(&titledLog{log: s.log})}
	if cfg.ContextWindow > 0 {
		opts = append(opts, engine.WithContextWindow(cfg.ContextWindow))
	}
	if yes {
		opts = append(opts, engine.WithAllowed("*"))
	}
	sp := &spawner{}
	set, err := tools.Builtin(work, sp)
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
	s.eng.Close()
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
		out = append(out, tui.Conversation{ID: c.ID, Title: c.Title, Updated: c.UpdatedAt, Entries: c.Entries})
	}
	return out, nil
}

// resume continues conversation id: its log is opened (taking its lock),
// the engine is hydrated from it, and later saves go to it.
func (s *chatSession) resume(id string) error {
	path, err := history.Path(s.dataDir, id)
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
	log, err := history.Open(path)
	if err != nil {
		return err
	}
	conv, err := log.Load()
	if err != nil {
		log.Close()
		return err
	}
	if err := s.eng.Resume(conv.Document, conv.Messages); err != nil {
		log.Close()
		return err
	}
	s.eng.SetSaver(&titledLog{log: log, titled: conv.Title != ""})
	// Resume refuses while a turn runs, so the old log has no save in
	// flight.
	s.log.Close()
	s.log, s.id = log, id
	return nil
}

// titledLog saves to a log and gives a new conversation its title, the
// first line of the first message, so the picker can name it.
type titledLog struct {
	log    *history.Log
	titled bool
}

func (t *titledLog) Save(doc transcript.Document, msgs []message.Message) error {
	if err := t.log.Save(doc, msgs); err != nil {
		return err
	}
	if t.titled {
		return nil
	}
	if title, ok := history.FirstMessageTitle(doc); ok {
		t.titled = true
		return t.log.SetTitle(title)
	}
	return nil
}

// newConversationID names a new conversation by its start time, with a
// random suffix so two chats started in the same second differ.
func newConversationID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}
