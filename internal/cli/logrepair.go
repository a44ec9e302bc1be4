package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/foliodev/folio/history"
)

func init() { register("log", newLogRepairCmd) }

func newLogRepairCmd(stdio IO) *cobra.Command {
	return fileOrIDCmd("repair", "Move the lines a log cannot keep to a side file, atomically",
		"Take out of a conversation log every line the reader cannot keep (a torn last line left by a crash, a line that is not a record, a rejected record) "+
			"and append them, byte for byte, to the file beside it named like the log with "+history.RemovedSuffix+" added. "+
			"Every valid record stays as it was, records of types this folio does not know included. "+
			"The new log replaces the old one atomically, and a healthy log is left alone.",
		"folio log repair 20260304-050607-a1b2c3\nfolio log repair conversations/20260304-050607-a1b2c3.jsonl",
		func(cmd *cobra.Command, path string) error { return logRepair(cmd, path, stdio) })
}

func logRepair(cmd *cobra.Command, path string, stdio IO) error {
	l, err := openExistingLog(cmd, path, stdio)
	if err != nil {
		return err
	}
	defer l.Close()
	res, err := l.Repair()
	if err != nil {
		return failure(cmd, err)
	}
	if len(res.Moved) == 0 {
		_, err = fmt.Fprintf(stdio.Out, "%s: nothing to repair\n", path)
		return err
	}
	for _, p := range res.Moved {
		fmt.Fprintf(stdio.Out, "%s:%s: moved: %s\n", path, p.Where(), p.Msg)
	}
	_, err = fmt.Fprintf(stdio.Out, "repaired %s: kept %d line(s), moved %d line(s) (%d bytes) to %s\n",
		path, res.Kept, len(res.Moved), res.MovedBytes, res.Side)
	return err
}

// repairable reports whether folio log repair would take any of these
// problems out of the log (it keeps records of unknown types).
func repairable(problems []history.Problem) bool {
	for _, p := range problems {
		if p.Kind != history.ProblemUnknown {
			return true
		}
	}
	return false
}
