package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/foliodev/folio/history"
)

func init() {
	register("", newLogCmd)
	register("log", newLogValidateCmd)
	register("log", newLogUpgradeCmd)
	register("log", newLogCompactCmd)
	register("log", newLogListCmd)
	register("log", newLogExportCmd)
}

// newLogCmd is the group; its subcommands register under "log".
func newLogCmd(IO) *cobra.Command {
	return &cobra.Command{
		Use:   "log",
		Short: "Inspect, validate, repair, upgrade, compact and export conversation logs",
		Long:  "Work with conversation logs: the JSON Lines files in the data folder's conversations/ that hold each conversation.",
		Example: `folio log ls
folio log show ~/.local/share/folio/conversations/20260304-050607-a1b2c3.jsonl
folio log validate big.jsonl`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownCommand(cmd, args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usage(cmd, "missing command (show, validate, repair, upgrade, compact, ls, export)")
		},
	}
}

// idHelp ends the long help of every command that takes FILE|ID.
const idHelp = " An argument that is not a file is a conversation ID, as folio log ls prints it, looked up in the data folder (--data)."

// fileOrIDCmd builds a log command taking one FILE|ID and --data; run gets
// the log file the argument names (see resolveLogArg).
func fileOrIDCmd(use, short, long, example string, run func(cmd *cobra.Command, path string) error) *cobra.Command {
	var data string
	cmd := &cobra.Command{
		Use:     use + " FILE|ID",
		Short:   short,
		Long:    long + idHelp,
		Example: example,
		Args:    oneArg("FILE or ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := resolveLogArg(cmd, args[0], data)
			if err != nil {
				return err
			}
			return run(cmd, path)
		},
	}
	dataFlag(cmd.Flags(), &data)
	return cmd
}

func newLogValidateCmd(stdio IO) *cobra.Command {
	return fileOrIDCmd("validate", "Check every record; exit 1 and list problems if any",
		"Read a conversation log and check every record. A valid log prints one summary line; otherwise each problem is listed with its line and JSON pointer, and the exit status is 1.",
		"folio log validate 20260304-050607-a1b2c3\nfolio log validate conversations/20260304-050607-a1b2c3.jsonl",
		func(cmd *cobra.Command, path string) error { return logValidate(cmd, path, stdio) })
}

func newLogUpgradeCmd(stdio IO) *cobra.Command {
	return fileOrIDCmd("upgrade", "Rewrite a version 2 log as version 3, atomically",
		"Rewrite a version 2 conversation log in version 3 form. The new file replaces the old one atomically; a log that is already version 3 is left alone.",
		"folio log upgrade old.jsonl\nfolio log upgrade 20260304-050607-a1b2c3",
		func(cmd *cobra.Command, path string) error { return logUpgrade(cmd, path, stdio) })
}

func newLogCompactCmd(stdio IO) *cobra.Command {
	return fileOrIDCmd("compact", "Drop superseded UI snapshots, atomically",
		"Rewrite a conversation log without the UI records later ones replaced, upgrading it to version 3 on the way. The new file replaces the old one atomically.",
		"folio log compact 20260304-050607-a1b2c3\nfolio log compact conversations/20260304-050607-a1b2c3.jsonl",
		func(cmd *cobra.Command, path string) error { return logCompact(cmd, path, stdio) })
}

func newLogListCmd(stdio IO) *cobra.Command {
	var data, store string
	cmd := &cobra.Command{
		Use:   "ls [DIR]",
		Short: "List conversations in the data folder",
		Long: "List the conversations in the data folder (DIR, else --data), newest first, with the ID that folio --resume and the web app take. " +
			"Logs in Jazz's layout, conversations/<agentId>/<conversationId>.jsonl, are listed too.",
		Example: "folio log ls\nfolio log ls --data ~/notes/folio\nfolio log ls ~/.jazz",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usage(cmd, "want at most one DIR, got %d arguments", len(args))
			}
			if len(args) == 1 && data != "" && data != args[0] {
				return usage(cmd, "give the data folder as DIR or as --data, not both")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				data = args[0]
			}
			return logList(cmd, data, store, stdio)
		},
	}
	dataFlag(cmd.Flags(), &data)
	storeFlag(cmd.Flags(), &store)
	return cmd
}

func logValidate(cmd *cobra.Command, path string, stdio IO) error {
	c, err := history.ReadFile(path)
	if err != nil {
		return failure(cmd, err)
	}
	if missing := jazzMissing(path, c.Header.Missing); len(missing) > 0 {
		fmt.Fprintf(stdio.Err, "%s:1: note: the header has no %s; Jazz will not open this log (folio log export --format jazz writes one it will)\n",
			path, strings.Join(missing, " or "))
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
	msg := fmt.Sprintf("log validate: %s has %d problem(s)", path, len(c.Problems))
	if repairable(c.Problems) {
		msg += fmt.Sprintf("\nfolio log repair %s keeps every valid record and moves the other lines to %s", path, history.RemovedPath(path))
	}
	return ExitError{Code: 1, Msg: msg}
}

// jazzMissing is what validate notes a log's header lacks for Jazz. folio
// writes no agentId (it has no agents), so a missing one is worth a note
// only for a log in Jazz's layout, conversations/<agentId>/<id>.jsonl,
// where Jazz is expected to open it.
func jazzMissing(path string, missing []string) []string {
	dir := filepath.Dir(path)
	inJazz := filepath.Base(dir) != "conversations" && filepath.Base(filepath.Dir(dir)) == "conversations"
	if inJazz {
		return missing
	}
	var out []string
	for _, m := range missing {
		if m != "agentId" {
			out = append(out, m)
		}
	}
	return out
}

func logUpgrade(cmd *cobra.Command, path string, stdio IO) error {
	l, err := openExistingLog(cmd, path, stdio)
	if err != nil {
		return err
	}
	defer l.Close()
	res, err := l.Upgrade()
	if err != nil {
		return failure(cmd, err)
	}
	if !res.Upgraded {
		_, err = fmt.Fprintf(stdio.Out, "%s is already version %d; nothing to do\n", path, res.From)
		return err
	}
	_, err = fmt.Fprintf(stdio.Out, "upgraded %s from version %d to %d: %d UI record(s) rewritten, %d line(s) kept as they were\n",
		path, res.From, history.Version, res.Records, res.Kept)
	return err
}

func logCompact(cmd *cobra.Command, path string, stdio IO) error {
	l, err := openExistingLog(cmd, path, stdio)
	if err != nil {
		return err
	}
	defer l.Close()
	res, err := l.Compact()
	if err != nil {
		return failure(cmd, err)
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

func logList(cmd *cobra.Command, data, store string, stdio IO) error {
	var list []history.Summary
	where := ""
	if url := storeURL(store); url != "" && data == "" {
		s, err := openStore(cmd, url)
		if err != nil {
			return err
		}
		defer s.Close()
		if list, err = s.List(); err != nil {
			return failure(cmd, err)
		}
		for i := range list {
			list[i].Path = list[i].ID // listed by ID, as the store keys them
		}
		where = redactURL(url)
	} else {
		dir, err := history.DataDir(data)
		if err != nil {
			return failure(cmd, err)
		}
		// A folder named on the command line must be there: a typo
		// would otherwise read as "no conversations". The default one
		// may not exist yet.
		if fi, err := os.Stat(dir); data != "" && (err != nil || !fi.IsDir()) {
			if err == nil {
				return usage(cmd, "data folder %s is not a folder", data)
			}
			return usage(cmd, "data folder %s: no such folder", data)
		}
		if list, err = history.List(dir); err != nil {
			return failure(cmd, err)
		}
		where = history.ConversationsDir(dir)
	}
	if len(list) == 0 {
		_, err := fmt.Fprintf(stdio.Out, "no conversations in %s\n", where)
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
			fmt.Fprintf(tw, "%s\t(unreadable: %s)\t-\t-\n", conversationID(s), msg)
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
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", conversationID(s), title, s.Entries, updated)
	}
	return tw.Flush()
}

// conversationID is the one ID a conversation goes by everywhere: its log's
// file name without ".jsonl", which --resume, the web app and the server's
// API all take. The header's conversationId may differ (a generated or
// copied log), so listings do not show it.
func conversationID(s history.Summary) string {
	return strings.TrimSuffix(filepath.Base(s.Path), ".jsonl")
}

// openExistingLog opens the log at path for a command that rewrites it
// (upgrade, compact, repair): a missing file is an error, never a new log.
func openExistingLog(cmd *cobra.Command, path string, stdio IO) (*history.Log, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, failure(cmd, err)
	}
	l, err := openLog(path, stdio.Err)
	if err != nil {
		return nil, failure(cmd, err)
	}
	return l, nil
}
