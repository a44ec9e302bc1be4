package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/foliodev/folio/internal/gen"
)

func init() {
	register("gen", "write a synthetic conversation log (for tests and load runs)", runGen)
}

func runGen(ctx context.Context, args []string, stdio IO) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	n := fs.Int("messages", 300000, "number of UI entries")
	seed := fs.Uint64("seed", 1, "seed; the same seed writes the same bytes")
	out := fs.String("out", "", "file to write (required)")
	id := fs.String("id", "", "conversation ID (default gen-<seed>)")
	if err := fs.Parse(args); err != nil {
		return usageErr("gen: "+err.Error(), "folio gen --messages 300000 --seed 1 --out big.jsonl")
	}
	if *out == "" || fs.NArg() > 0 || *n < 1 {
		return usageErr("gen: --out FILE is required and --messages must be positive", "folio gen --messages 300000 --seed 1 --out big.jsonl")
	}
	f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return ExitError{Code: 1, Msg: "gen: " + err.Error()}
	}
	st, err := gen.Write(f, gen.Options{Messages: *n, Seed: *seed, ConversationID: *id})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return ExitError{Code: 1, Msg: fmt.Sprintf("gen: write %s: %v", *out, err)}
	}
	_, err = fmt.Fprintf(stdio.Out, "wrote %s: %d entries, %d model messages, %d lines, %d bytes\n", *out, st.Entries, st.Messages, st.Lines, st.Bytes)
	return err
}
