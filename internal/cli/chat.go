package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

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
	register("chat", "chat in the terminal: fullscreen, or --classic inline (the default on a terminal)", runChat)
}

const chatTry = "folio chat --classic --resume"

// DemoNotice is what the chat says under its footer while the offline demo
// model answers.
const DemoNotice = "demo model — for a real one set OPENAI_API_KEY and FOLIO_PROVIDER=openai, or see docs/providers.md"

// chatArgs pulls --resume's optional ID out of args: "--resume ID",
// "--resume=ID" or a bare "--resume" (open the picker).
func chatArgs(args []string) (rest []string, resume bool, id string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--resume" || a == "-resume":
			resume = true
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				id = args[i+1]
				i++
			}
		case strings.HasPrefix(a, "--resume=") || strings.HasPrefix(a, "-resume="):
			resume, id = true, a[strings.IndexByte(a, '=')+1:]
		default:
			rest = append(rest, a)
		}
	}
	return rest, resume, id
}

func runChat(ctx context.Context, args []string, stdio IO) error {
	args, resume, resumeID := chatArgs(args)
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	classic := fs.Bool("classic", false, "the inline view, printing into the terminal's scrollback")
	data := fs.String("data", "", "data folder (default $FOLIO_HOME, else $XDG_DATA_HOME/folio)")
	provName := fs.String("provider", "", "provider name (default $FOLIO_PROVIDER, else the config file, else demo)")
	model := fs.String("model", "", "model name (default $FOLIO_MODEL)")
	baseURL := fs.String("base-url", "", "OpenAI-compatible server URL (default $FOLIO_BASE_URL)")
	dir := fs.String("dir", "", "workspace folder the tools work in (default: the current folder)")
	yes := fs.Bool("yes", false, "allow every tool call without asking")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdio.Out, "usage: folio [chat] [--classic] [--resume [ID]] [flags]\n\n  --resume [ID]\n    \tcontinue a saved conversation; without an ID, pick one from a list")
			fs.SetOutput(stdio.Out)
			fs.PrintDefaults()
			return nil
		}
		return usageErr("chat: "+err.Error(), chatTry)
	}
	if fs.NArg() > 0 {
		return usageErr(fmt.Sprintf("chat: unexpected argument %q", fs.Arg(0)), chatTry)
	}
	if !isTTY(stdio.In) || !isTTY(stdio.Out) {
		return usageErr("chat: needs a terminal on standard input and output", `folio run "your prompt"`)
	}

	dataDir, err := history.DataDir(*data)
	if err != nil {
		return ExitError{Code: 1, Msg: "chat: " + err.Error()}
	}
	cfg, prov, err := provider.Load(provider.Options{DataDir: dataDir, Provider: *provName, Model: *model, BaseURL: *baseURL})
	if err != nil {
		return ExitError{Code: 1, Msg: "chat: " + err.Error()}
	}
	work := *dir
	if work == "" {
		if work, err = os.Getwd(); err != nil {
			return ExitError{Code: 1, Msg: "chat: " + err.Error()}
		}
	}

	s, err := newChatSession(dataDir, cfg, prov, work, *yes)
	if err != nil {
		return ExitError{Code: 1, Msg: "chat: " + err.Error()}
	}
	defer s.close()
	if resume && resumeID != "" {
		if err := s.resume(resumeID); err != nil {
			return ExitError{Code: 1, Msg: "chat: " + err.Error()}
		}
	}

	o := tui.Options{
		Engine:        s.eng,
		Classic:       *classic,
		Theme:         tui.DetectTheme(os.Environ(), true),
		Location:      time.Local,
		Conversations: s.list,
		Resume:        s.resume,
		Picker:        resume && resumeID == "",
	}
	if cfg.Type == provider.TypeDemo {
		o.Notice = DemoNotice
	}
	in, out := stdio.In.(*os.File), stdio.Out.(*os.File) // isTTY checked both
	if err := tui.Chat(ctx, o, in, out); err != nil {
		return ExitError{Code: 1, Msg: "chat: " + err.Error()}
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

// isTTY reports whether v, a reader or a writer, is a terminal.
func isTTY(v any) bool {
	f, ok := v.(*os.File)
	return ok && isTerminal(f)
}
