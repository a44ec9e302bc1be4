package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
	"github.com/foliodev/folio/tui"
)

func init() {
	register("log", "inspect, validate, upgrade and compact conversation logs", runLog)
}

const logUsage = `usage: folio log <command> [flags]

  show [--json] [--width N] FILE   print the conversation as the classic view would
  validate FILE                    check every record; exit 1 and list problems if any
  upgrade FILE                     rewrite a version 2 log as version 3, atomically
  compact FILE                     drop superseded UI snapshots, atomically
  ls [--data DIR]                  list conversations in the data folder
  export --format jazz|markdown FILE
                                   write the conversation for Jazz, or as Markdown`

func runLog(ctx context.Context, args []string, stdio IO) error {
	if len(args) == 0 {
		return usageErr("log: missing command\n"+logUsage, "folio log show FILE")
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "show":
		return logShow(args, stdio)
	case "validate":
		return logValidate(args, stdio)
	case "upgrade":
		return logUpgrade(args, stdio)
	case "compact":
		return logCompact(args, stdio)
	case "ls":
		return logList(args, stdio)
	case "export":
		return logExport(args, stdio)
	case "help", "-h", "--help":
		_, err := fmt.Fprintln(stdio.Out, logUsage)
		return err
	}
	return usageErr(fmt.Sprintf("log: unknown command %q\n%s", sub, logUsage), "folio log show FILE")
}

// parseInterspersed parses flags wherever they appear among the positional
// arguments, so "folio log show FILE --json" works like "--json FILE".
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// oneFile parses a subcommand that takes exactly one FILE.
func oneFile(name string, fs *flag.FlagSet, args []string) (string, error) {
	try := "folio log " + name + " FILE"
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return "", usageErr("log "+name+": "+err.Error(), try)
	}
	if len(pos) != 1 {
		return "", usageErr(fmt.Sprintf("log %s: want one FILE, got %d arguments", name, len(pos)), try)
	}
	return pos[0], nil
}

func failed(name string, err error) error {
	return ExitError{Code: 1, Msg: "log " + name + ": " + err.Error()}
}

func logShow(args []string, stdio IO) error {
	fs := flag.NewFlagSet("show", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "print one JSON object")
	width := fs.Int("width", 0, "wrap width (default: $COLUMNS, else 100)")
	path, err := oneFile("show", fs, args)
	if err != nil {
		return err
	}
	c, err := history.ReadFile(path)
	if err != nil {
		return failed("show", err)
	}
	if *asJSON {
		return showJSON(c, stdio.Out)
	}
	w := *width
	if w <= 0 {
		w = envWidth()
	}
	theme := tui.PlainTheme
	if isTerminal(stdio.Out) {
		theme = tui.DetectTheme(os.Environ(), true)
	}
	classic := tui.NewClassic(tui.NewPainter(theme, tui.ForClassic(), tui.WithLocation(time.Local)))
	classic.Mount()
	frame := classic.Sync(c.Document, 1, w, 1<<30)
	var b strings.Builder
	for _, l := range frame.Print {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	for _, l := range frame.Live {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if len(c.Problems) > 0 {
		fmt.Fprintf(stdio.Err, "folio: %s: %d problem(s); run folio log validate %s\n", path, len(c.Problems), path)
	}
	_, err = io.WriteString(stdio.Out, b.String())
	return err
}

func showJSON(c *history.Conversation, w io.Writer) error {
	out := struct {
		ConversationID string             `json:"conversationId"`
		Version        int                `json:"version"`
		Entries        []transcript.Entry `json:"entries"`
		Messages       []message.Message  `json:"messages"`
		Rejected       []history.Problem  `json:"rejected"`
	}{c.Header.ConversationID, c.Header.Version, c.Document.Entries(), c.Messages, c.Problems}
	if out.Messages == nil {
		out.Messages = []message.Message{}
	}
	if out.Rejected == nil {
		out.Rejected = []history.Problem{}
	}
	if err := json.MarshalWrite(w, out, json.Deterministic(true), jsontext.Multiline(false)); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func logValidate(args []string, stdio IO) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	path, err := oneFile("validate", fs, args)
	if err != nil {
		return err
	}
	c, err := history.ReadFile(path)
	if err != nil {
		return failed("validate", err)
	}
	if len(c.Header.Missing) > 0 {
		fmt.Fprintf(stdio.Err, "%s:1: note: the header has no %s; Jazz will not open this log (folio log export --format jazz writes one it will)\n",
			path, strings.Join(c.Header.Missing, " or "))
	}
	if len(c.Problems) == 0 {
		_, err := fmt.Fprintf(stdio.Out, "%s: valid, version %d, %d entries, %d messages\n",
			path, c.Header.Version, c.Document.Len(), len(c.Messages))
		return err
	}
	var b strings.Builder
	for _, p := range c.Problems {
		fmt.Fprintf(&b, "%s:%s: %s\n", path, p.Where(), p.Msg)
	}
	io.WriteString(stdio.Out, b.String())
	return ExitError{Code: 1, Msg: fmt.Sprintf("log validate: %s has %d problem(s)", path, len(c.Problems))}
}

func logUpgrade(args []string, stdio IO) error {
	fs := flag.NewFlagSet("upgrade", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	path, err := oneFile("upgrade", fs, args)
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); err != nil {
		return failed("upgrade", err)
	}
	l, err := history.Open(path)
	if err != nil {
		return failed("upgrade", err)
	}
	defer l.Close()
	res, err := l.Upgrade()
	if err != nil {
		return failed("upgrade", err)
	}
	if !res.Upgraded {
		_, err = fmt.Fprintf(stdio.Out, "%s is already version %d; nothing to do\n", path, res.From)
		return err
	}
	_, err = fmt.Fprintf(stdio.Out, "upgraded %s from version %d to %d: %d UI record(s) rewritten, %d line(s) kept as they were\n",
		path, res.From, history.Version, res.Records, res.Kept)
	return err
}

func logCompact(args []string, stdio IO) error {
	fs := flag.NewFlagSet("compact", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	path, err := oneFile("compact", fs, args)
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); err != nil {
		return failed("compact", err)
	}
	l, err := history.Open(path)
	if err != nil {
		return failed("compact", err)
	}
	defer l.Close()
	res, err := l.Compact()
	if err != nil {
		return failed("compact", err)
	}
	if res.Dropped == 0 && !res.Upgraded && res.After == res.Before {
		_, err = fmt.Fprintf(stdio.Out, "%s: nothing to compact\n", path)
		return err
	}
	up := ""
	if res.Upgraded {
		up = ", upgraded to version 3"
	}
	_, err = fmt.Fprintf(stdio.Out, "compacted %s: dropped %d superseded UI record(s)%s, %d → %d bytes\n",
		path, res.Dropped, up, res.Before, res.After)
	return err
}

func logList(args []string, stdio IO) error {
	fs := flag.NewFlagSet("ls", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	data := fs.String("data", "", "data folder (default $FOLIO_HOME, else $XDG_DATA_HOME/folio)")
	pos, err := parseInterspersed(fs, args)
	if err != nil || len(pos) > 0 {
		if err == nil {
			err = fmt.Errorf("unexpected argument %q", pos[0])
		}
		return usageErr("log ls: "+err.Error(), "folio log ls --data DIR")
	}
	dir, err := history.DataDir(*data)
	if err != nil {
		return failed("ls", err)
	}
	list, err := history.List(dir)
	if err != nil {
		return failed("ls", err)
	}
	if len(list) == 0 {
		_, err := fmt.Fprintf(stdio.Out, "no conversations in %s\n", history.ConversationsDir(dir))
		return err
	}
	tw := tabwriter.NewWriter(stdio.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTITLE\tENTRIES\tUPDATED")
	for _, s := range list {
		if s.Err != nil {
			msg := s.Err.Error()
			if errors.Is(s.Err, history.ErrNewerVersion) {
				msg = "written by a newer folio"
			}
			fmt.Fprintf(tw, "%s\t(unreadable: %s)\t-\t-\n", s.ID, msg)
			continue
		}
		title := s.Title
		if title == "" {
			title = "(untitled)"
		}
		updated := "-" // a log with only its header has no date
		if !s.UpdatedAt.IsZero() {
			updated = s.UpdatedAt.Local().Format("2006-01-02 15:04")
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", s.ID, title, s.Entries, updated)
	}
	return tw.Flush()
}

func envWidth() int {
	var n int
	if _, err := fmt.Sscan(os.Getenv("COLUMNS"), &n); err == nil && n > 0 {
		return n
	}
	return 100
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
