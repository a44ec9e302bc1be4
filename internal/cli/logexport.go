package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/history/export"
)

// logExport is `folio log export --format jazz|markdown FILE`: the export
// goes to standard output, what had to be mapped to standard error.
func logExport(args []string, stdio IO) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	format := fs.String("format", "", "jazz or markdown")
	path, err := oneFile("export", fs, args)
	if err != nil {
		return err
	}
	if *format == "" {
		return usageErr("log export: --format is required (jazz or markdown)", "folio log export --format jazz FILE")
	}
	c, err := history.ReadFile(path)
	if err != nil {
		return failed("export", err)
	}
	mapped, err := export.Write(stdio.Out, c, *format, time.Local)
	if errors.Is(err, export.ErrUnknownFormat) {
		return usageErr("log export: "+err.Error(), "folio log export --format jazz FILE")
	}
	if err != nil {
		return failed("export", err)
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
