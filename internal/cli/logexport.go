package cli

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/foliodev/folio/history/export"
)

func newLogExportCmd(stdio IO) *cobra.Command {
	var format, store, to, data, out string
	cmd := &cobra.Command{
		Use:   "export --format jazz|markdown|html|log FILE|ID",
		Short: "Write the conversation for Jazz, as Markdown, as one HTML file, or as its stored log",
		Long: "Write a conversation log to standard output (or to --out FILE) as a version 3 log Jazz opens (--format jazz), as a Markdown transcript with its receipts (--format markdown), " +
			"as one self-contained HTML file that shows it as the web app does and opens offline in any browser (--format html), " +
			"or as the log exactly as stored (--format log), which copies a conversation out of PostgreSQL into a file. " +
			"An argument that is not a file is a conversation ID, as folio log ls prints it, looked up in the data folder (--data). " +
			"What Jazz has no place for is mapped to the nearest kind Jazz knows, and standard error lists every mapping. " +
			"With --store (or FOLIO_DATABASE_URL), an argument that is not a file names a conversation in that PostgreSQL store; " +
			"--format log --to DIR then copies it into the data folder DIR instead, with its receipts, attachments and artifacts (again changes nothing).",
		Example: `folio log export --format markdown 20260304-050607-a1b2c3
folio log export --format jazz conversations/20260304-050607-a1b2c3.jsonl > conv.jsonl
folio log export --format markdown conversations/20260304-050607-a1b2c3.jsonl
folio log export --format html --out conversation.html 20260304-050607-a1b2c3
folio log export --store "$FOLIO_DATABASE_URL" --format log 20260304-050607-a1b2c3 > 20260304-050607-a1b2c3.jsonl
folio log export --store "$FOLIO_DATABASE_URL" --format log --to ~/.local/share/folio 20260304-050607-a1b2c3`,
		Args: oneArg("FILE or ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(cmd, format); err != nil {
				return err
			}
			if to != "" {
				url := storeURL(store)
				if format != "log" || url == "" {
					return usage(cmd, "--to copies a conversation out of a --store database into a data folder; it needs --format log and --store (or FOLIO_DATABASE_URL)")
				}
				return exportTo(cmd, url, args[0], to, stdio)
			}
			if format == "html" {
				return logExportHTML(cmd, args[0], store, data, out, stdio)
			}
			if out != "" {
				return usage(cmd, "--out is for --format html; the other formats go to standard output")
			}
			return logExport(cmd, args[0], format, store, data, stdio)
		},
	}
	cmd.Flags().StringVar(&format, "format", "", "jazz, markdown, html or log (required)")
	cmd.Flags().StringVar(&out, "out", "", "with --format html: the file to write (replaced whole once the export is complete) instead of standard output")
	storeFlag(cmd.Flags(), &store)
	dataFlag(cmd.Flags(), &data)
	cmd.Flags().StringVar(&to, "to", "", "with --format log and --store: the data folder to copy the conversation into, with its attachments and artifacts")
	return cmd
}

// exportFormats are the formats folio log export writes: export's, and
// the log as stored.
var exportFormats = []string{"jazz", "markdown", "html", "log"}

// checkFormat refuses a missing or unknown --format before anything is
// read, so a bad flag is reported as such whatever the argument.
func checkFormat(cmd *cobra.Command, format string) error {
	if format == "" {
		return usage(cmd, "--format is required (jazz, markdown, html or log)")
	}
	if !slices.Contains(exportFormats, format) {
		return usage(cmd, "--format: unknown format %q (want jazz, markdown, html or log)", format)
	}
	return nil
}

// logExport writes the export to standard output and what had to be
// mapped to standard error.
func logExport(cmd *cobra.Command, arg, format, store, dataDir string, stdio IO) error {
	c, data, path, err := readConversation(cmd, arg, store, dataDir)
	if err != nil {
		return err
	}
	if format == "log" {
		return writeRaw(stdio.Out, data)
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
