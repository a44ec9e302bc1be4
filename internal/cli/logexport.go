package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/history/export"
)

func newLogExportCmd(stdio IO) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "export --format jazz|markdown FILE",
		Short: "Write the conversation for Jazz, or as Markdown",
		Long: "Write a conversation log to standard output as a version 3 log Jazz opens (--format jazz), or as a Markdown transcript with its receipts (--format markdown). " +
			"What Jazz has no place for is mapped to the nearest kind Jazz knows, and standard error lists every mapping.",
		Example: `folio log export --format jazz conversations/20260304-050607-a1b2c3.jsonl > conv.jsonl
folio log export --format markdown conversations/20260304-050607-a1b2c3.jsonl`,
		Args: oneArg("FILE"),
		RunE: func(cmd *cobra.Command, args []string) error { return logExport(cmd, args[0], format, stdio) },
	}
	cmd.Flags().StringVar(&format, "format", "", "jazz or markdown (required)")
	return cmd
}

// logExport writes the export to standard output and what had to be
// mapped to standard error.
func logExport(cmd *cobra.Command, path, format string, stdio IO) error {
	if format == "" {
		return usage(cmd, "--format is required (jazz or markdown)")
	}
	c, err := history.ReadFile(path)
	if err != nil {
		return failure(cmd, err)
	}
	mapped, err := export.Write(stdio.Out, c, format, time.Local)
	if errors.Is(err, export.ErrUnknownFormat) {
		return usage(cmd, "%v", err)
	}
	if err != nil {
		return failure(cmd, err)
	}
	if len(mapped) > 0 {
		fmt.Fprintf(stdio.Err, "folio: exported %s for Jazz; %d item(s) Jazz has no place for were mapped:\n", path, len(mapped))
		for _, m := range mapped {
			fmt.Fprintf(stdio.Err, "  %s\n", m)
		}
	}
	if n := len(c.Problems); n > 0 {
		fmt.Fprintf(stdio.Err, "folio: %s: %d problem(s) were not exported; run folio log validate %s\n", path, n, path)
	}
	return nil
}
