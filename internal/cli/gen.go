package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/internal/gen"
)

func init() { register("", newGenCmd) }

func newGenCmd(stdio IO) *cobra.Command {
	var (
		n     int
		seed  uint64
		out   string
		id    string
		title string
		force bool
	)
	cmd := &cobra.Command{
		Use:   "gen --out FILE",
		Short: "Write a synthetic conversation log (for tests and load runs)",
		Long:  "Write a synthetic version 3 conversation log: user prompts, answers, tool calls and receipts, the same bytes for the same seed.",
		Example: `folio gen --messages 300000 --seed 1 --out big.jsonl
folio gen --messages 50 --out small.jsonl --id demo`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return usage(cmd, "--out FILE is required")
			}
			if n < 1 {
				return usage(cmd, "--messages must be positive, got %d", n)
			}
			return runGen(cmd, stdio, gen.Options{Messages: n, Seed: seed, ConversationID: id, Title: title}, out, force)
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&n, "messages", 300000, "how many messages to write, counted as the chat shows them (prompts, answers, thinking, tool calls, receipts)")
	fs.Uint64Var(&seed, "seed", 1, "seed; the same seed writes the same bytes")
	fs.StringVar(&out, "out", "", "file to write (required)")
	fs.StringVar(&id, "id", "", "conversation ID in the header (default gen-<seed>)")
	fs.StringVar(&title, "title", "", "title in the header (default none: listings show the first prompt)")
	fs.BoolVar(&force, "force", false, "replace --out if it exists")
	return cmd
}

func runGen(cmd *cobra.Command, stdio IO, o gen.Options, out string, force bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(out, flags, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return failure(cmd, fmt.Errorf("%s exists; pass --force to replace it", out))
	}
	if err != nil {
		return failure(cmd, err)
	}
	st, err := gen.Write(f, o)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return ExitError{Code: 1, Msg: fmt.Sprintf("gen: write %s: %v", out, err)}
	}
	// Like every folio writer, leave the log's page index beside it (in a
	// data folder), so the first open does not have to build it.
	if lf, err := os.Open(out); err == nil {
		if ix, err := history.OpenIndex(out, lf, 0); err == nil {
			ix.Close()
		}
		lf.Close()
	}
	_, err = fmt.Fprintf(stdio.Out, "wrote %s: %d messages as the chat shows them, %d model-facing messages, %d lines, %d bytes\n", out, st.Entries, st.Messages, st.Lines, st.Bytes)
	return err
}
