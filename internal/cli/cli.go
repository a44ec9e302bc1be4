// Package cli wires folio's subcommands. Each command lives in its own file
// and registers itself in the commands table; Run is the whole program, so
// every command can be tested in-process.
//
// Exit codes: 0 success, 1 failure or invalid data, 2 usage error.
package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Version is folio's version, set at build time with
// -ldflags "-X github.com/foliodev/folio/internal/cli.Version=...".
var Version = "0.1.0-dev"

// ExitError carries an exit code out of Run. Msg, when set, is printed on
// standard error by main.
type ExitError struct {
	Code int
	Msg  string
}

func (e ExitError) Error() string { return e.Msg }

// usageErr reports a usage mistake with one "try:" line.
func usageErr(msg, try string) error {
	if try != "" {
		msg += "\ntry: " + try
	}
	return ExitError{Code: 2, Msg: msg}
}

// IO is what a command reads and writes.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
}

type command struct {
	summary string
	run     func(ctx context.Context, args []string, io IO) error
}

// commands is the table of subcommands; each file adds its own entry in init.
var commands = map[string]command{}

func register(name, summary string, run func(context.Context, []string, IO) error) {
	commands[name] = command{summary: summary, run: run}
}

// defaultCommand is what folio runs without a subcommand: the chat when
// both standard input and output are terminals, help otherwise, so
// `folio` in a pipe or a CI log prints something useful instead of
// waiting for keys.
func defaultCommand(in io.Reader, out io.Writer) string {
	if _, ok := commands["chat"]; ok && isTTY(in) && isTTY(out) {
		return "chat"
	}
	return "help"
}

// Run runs folio with the given arguments (without the program name).
func Run(ctx context.Context, args []string, in io.Reader, out, errOut io.Writer) error {
	stdio := IO{In: in, Out: out, Err: errOut}
	name := defaultCommand(in, out)
	if len(args) > 0 && (!strings.HasPrefix(args[0], "-") || args[0] == "-h" || args[0] == "--help" || args[0] == "--version") {
		name, args = args[0], args[1:]
	}
	switch name {
	case "help", "-h", "--help":
		return help(stdio.Out)
	case "version", "--version":
		_, err := fmt.Fprintf(stdio.Out, "folio %s\n", Version)
		return err
	}
	cmd, ok := commands[name]
	if !ok {
		return usageErr(fmt.Sprintf("unknown command %q", name), "folio help")
	}
	return cmd.run(ctx, args, stdio)
}

func help(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "folio %s: a conversation engine for AI agent applications\n\n", Version)
	b.WriteString("usage: folio <command> [flags]\n\ncommands:\n")
	names := make([]string, 0, len(commands)+2)
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(&b, "  %-10s %s\n", "version", "print the version")
	fmt.Fprintf(&b, "  %-10s %s\n", "help", "print this help")
	_, err := io.WriteString(w, b.String())
	return err
}
