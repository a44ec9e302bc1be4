package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/foliodev/folio/internal/gen"
)

func init() { register("", newGenCmd) }

func newGenCmd(stdio IO) *cobra.Command {
	var (
		n    int
		seed uint64
		out  string
		id   string
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
			return runGen(cmd, stdio, gen.Options{Messages: n, Seed: seed, ConversationID: id}, out)
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&n, "messages", 300000, "number of UI entries")
	fs.Uint64Var(&seed, "seed", 1, "seed; the same seed writes the same bytes")
	fs.StringVar(&out, "out", "", "file to write (required)")
	fs.StringVar(&id, "id", "", "conversation ID (default gen-<seed>)")
	return cmd
}

func runGen(cmd *cobra.Command, stdio IO, o gen.Options, out string) error {
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
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
	_, err = fmt.Fprintf(stdio.Out, "wrote %s: %d entries, %d model messages, %d lines, %d bytes\n", out, st.Entries, st.Messages, st.Lines, st.Bytes)
	return err
}
