package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/foliodev/folio/history"
)

// resolveLogArg turns the FILE|ID argument of a log command into the path
// of a log file: a path to an existing file is taken as it is; anything
// else that could be a conversation ID (what folio log ls prints) is
// looked up in the data folder (data, the --data flag, else the default),
// in folio's layout or Jazz's, as --resume finds it. An argument that
// names neither is a usage error naming both places it looked.
func resolveLogArg(cmd *cobra.Command, arg, data string) (string, error) {
	fi, err := os.Stat(arg)
	switch {
	case err == nil && fi.IsDir():
		return "", usage(cmd, "%s is a folder; give a log file or a conversation ID (folio log ls lists them)", arg)
	case err == nil:
		return arg, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", failure(cmd, err)
	}
	dir, derr := history.DataDir(data)
	if derr != nil {
		return "", failure(cmd, derr)
	}
	if looksLikeID(arg) {
		p, err := history.Locate(dir, strings.TrimSuffix(arg, ".jsonl"))
		if err == nil {
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				return p, nil
			}
		}
		return "", usageErr(fmt.Sprintf("%sno file %s and no conversation %s in %s",
			prefix(cmd), arg, strings.TrimSuffix(arg, ".jsonl"), history.ConversationsDir(dir)), logListTry(data))
	}
	return "", usageErr(fmt.Sprintf("%sno such file: %s", prefix(cmd), arg), logListTry(data))
}

// looksLikeID reports whether arg could be a conversation ID rather than a
// path: one file name, with or without ".jsonl".
func looksLikeID(arg string) bool {
	return arg != "" && !strings.ContainsAny(arg, `/\`+"\x00") && !strings.HasPrefix(arg, ".")
}

// logListTry is the try line that shows the IDs a log command takes.
func logListTry(data string) string {
	if data != "" {
		return "folio log ls --data " + data
	}
	return "folio log ls"
}
