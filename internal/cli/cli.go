// Package cli is folio's command line, built on cobra. Run is the whole program, so every command can be
// tested in-process; cmd/folio only maps its error to an exit code.
//
// Each command group lives in its own file and adds itself with register
// in an init function. A command is built afresh for every Run (flags
// hold per-run state), so register takes a constructor:
//
//	func init() { register("log", newLogExportCmd) } // folio log export
//	func init() { register("", newMCPCmd) }          // folio mcp
//
// Exit codes: 0 success, 1 failure or invalid data, 2 usage error. A usage
// error names what was wrong and ends with one "try:" line.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/search"
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

// failure reports a command that ran and failed (exit 1), prefixed with
// the command's path below folio ("log show: ...").
func failure(cmd *cobra.Command, err error) error {
	var ex ExitError
	if errors.As(err, &ex) {
		return ex
	}
	return ExitError{Code: 1, Msg: prefix(cmd) + err.Error()}
}

// IO is what a command reads and writes.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
}

// builder makes one command from the run's IO.
type builder func(IO) *cobra.Command

type registration struct {
	parent string // the parent's path below folio ("" is folio itself, "log" is folio log)
	build  builder
}

// registry holds every command's constructor, in registration order; each
// file adds its own in init.
var registry []registration

// register adds a command under parent: "" for a top-level command, or
// the space-separated path of a command group ("log"). The group must be
// registered too (in any file); the tree is assembled when Run starts.
func register(parent string, build builder) {
	registry = append(registry, registration{parent: parent, build: build})
}

// newRoot builds the whole command tree for one run.
func newRoot(stdio IO) *cobra.Command {
	root := newChatCmd(stdio, true)
	root.SetIn(stdio.In)
	root.SetOut(stdio.Out)
	root.SetErr(stdio.Err)
	root.Version = Version
	root.SetVersionTemplate("folio {{.Version}}\n")
	// Run's caller prints the error: main as "folio: ...", tests by
	// reading it.
	root.SilenceErrors = true
	root.SilenceUsage = true
	root.SetUsageTemplate(usageTemplate)
	root.SetFlagErrorFunc(flagError)
	root.CompletionOptions.HiddenDefaultCmd = false

	paths := map[string]*cobra.Command{"": root}
	pending := registry
	// Groups may be registered after their children (init order follows
	// file names), so attach in passes until nothing is left.
	for len(pending) > 0 {
		var later []registration
		for _, r := range pending {
			parent, ok := paths[r.parent]
			if !ok {
				later = append(later, r)
				continue
			}
			c := r.build(stdio)
			parent.AddCommand(c)
			key := c.Name()
			if r.parent != "" {
				key = r.parent + " " + key
			}
			paths[key] = c
		}
		if len(later) == len(pending) {
			panic(fmt.Sprintf("cli: no command group %q for a registered subcommand", later[0].parent))
		}
		pending = later
	}
	root.AddCommand(&cobra.Command{
		Use:     "version",
		Short:   "Print folio's version (as --version does)",
		Example: "folio version",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(stdio.Out, "folio %s\n", Version)
			return err
		},
	})
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	walk(root, exampleFor)
	walk(root, addCompletions)
	return root
}

// Run runs folio with the given arguments (without the program name).
func Run(ctx context.Context, args []string, in io.Reader, out, errOut io.Writer) error {
	root := newRoot(IO{In: in, Out: out, Err: errOut})
	if args == nil {
		args = []string{} // cobra reads os.Args when given nil
	}
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return nil
	}
	var ex ExitError
	if errors.As(err, &ex) {
		return ex
	}
	// What cobra itself refuses is a usage mistake: an unknown command, or
	// a wrong argument to a built-in command.
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, `unknown command "`); ok {
		name, _, _ = strings.Cut(name, `"`)
		return unknownCommand(root, name)
	}
	if strings.HasPrefix(msg, "invalid argument") ||
		strings.HasPrefix(msg, "accepts ") || strings.HasPrefix(msg, "requires ") {
		return usageErr(msg, "folio --help")
	}
	return ExitError{Code: 1, Msg: msg}
}

// flagError turns pflag's complaint (which names the flag) into a usage
// error. An unknown flag gets the nearest one the command has, when one is
// close, and the command's --help as the try line; any other flag mistake
// gets the command's first example.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		if near := nearestFlag(cmd, name); near != "" {
			msg += " (did you mean --" + near + "?)"
		}
		return usageErr(prefix(cmd)+msg, cmd.CommandPath()+" --help")
	}
	if strings.HasPrefix(msg, "unknown shorthand flag") {
		return usageErr(prefix(cmd)+msg, cmd.CommandPath()+" --help")
	}
	return usageErr(prefix(cmd)+msg, tryLine(cmd))
}

// nearestFlag is the flag of cmd whose name is closest to name, if it is
// close enough to be a typo (as cobra judges commands: two edits, or a
// prefix); "" otherwise.
func nearestFlag(cmd *cobra.Command, name string) string {
	best, bestD := "", 3
	visit := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := editDistance(name, f.Name)
		if strings.HasPrefix(f.Name, name) && len(name) >= 2 {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = f.Name, d
		}
	}
	cmd.LocalFlags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// unknownCommand is the usage error for an unknown subcommand of cmd,
// with the nearest one cobra finds, if any.
func unknownCommand(cmd *cobra.Command, name string) error {
	msg := fmt.Sprintf("%sunknown command %q", prefix(cmd), name)
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's own default
	}
	if s := cmd.SuggestionsFor(name); len(s) > 0 {
		msg += " (did you mean " + cmd.CommandPath() + " " + s[0] + "?)"
	}
	return usageErr(msg, cmd.CommandPath()+" --help")
}

// usage is a usage error for cmd with its first example as the try line.
func usage(cmd *cobra.Command, format string, a ...any) error {
	return usageErr(prefix(cmd)+fmt.Sprintf(format, a...), tryLine(cmd))
}

// prefix starts a message about cmd with its path below folio
// ("log show: "); folio itself needs none, main prints "folio:" first.
func prefix(cmd *cobra.Command) string {
	if !cmd.HasParent() {
		return ""
	}
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ") + ": "
}

// tryLine is cmd's first example, else its --help.
func tryLine(cmd *cobra.Command) string {
	for _, l := range strings.Split(cmd.Example, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return l
		}
	}
	return cmd.CommandPath() + " --help"
}

// noArgs refuses positional arguments with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usage(cmd, "unexpected argument %q", args[0])
	}
	return nil
}

// oneArg wants exactly one positional argument, named what in errors.
func oneArg(what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usage(cmd, "want one %s, got %d arguments", what, len(args))
		}
		return nil
	}
}

// providerFlags are the flags that choose a model, shared by every
// command that talks to one.
type providerFlags struct {
	provider, model, baseURL string
}

func (p *providerFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&p.provider, "provider", "", "provider name (default $FOLIO_PROVIDER, else the config file, else demo)")
	fs.StringVar(&p.model, "model", "", "model name (default $FOLIO_MODEL)")
	fs.StringVar(&p.baseURL, "base-url", "", "OpenAI-compatible server URL (default $FOLIO_BASE_URL)")
}

// dataFlag adds --data, the data folder.
func dataFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "data", "", "data folder (default $FOLIO_HOME, else $XDG_DATA_HOME/folio)")
}

func envWidth() int {
	var n int
	if _, err := fmt.Sscan(os.Getenv("COLUMNS"), &n); err == nil && n > 0 {
		return n
	}
	return 100
}

// isTerminal reports whether w is a terminal. Being a character device
// is not enough: /dev/null is one, and output sent there (or to any file)
// gets no terminal styling.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// isTTY reports whether v, a reader or a writer, is a terminal.
func isTTY(v any) bool {
	f, ok := v.(*os.File)
	return ok && isTerminal(f)
}

// usageTemplate is cobra's, with the example section last so a long flag
// list does not push it off screen, and a single blank-line rhythm.
const usageTemplate = `Usage:{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} <command> [flags]{{end}}{{if gt (len .Aliases) 0}}

Aliases:
  {{.NameAndAliases}}{{end}}{{if .HasAvailableSubCommands}}

Commands:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

Flags:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableInheritedFlags}}

Global flags:
{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasExample}}

Examples:
{{.Example | indent}}{{end}}{{if .HasAvailableSubCommands}}

Run "{{.CommandPath}} <command> --help" for more about a command.{{end}}
`

func init() {
	cobra.AddTemplateFunc("indent", func(s string) string {
		return "  " + strings.ReplaceAll(s, "\n", "\n  ")
	})
}

// exampleFor gives cobra's own commands (help, completion and its shells)
// an example like every folio command has.
func exampleFor(c *cobra.Command) {
	if c.Example != "" {
		return
	}
	switch path := c.CommandPath(); {
	case c.Name() == "help":
		c.Example = "folio help log show"
	case c.Name() == "completion":
		c.Example = "source <(folio completion bash)\nfolio completion zsh > \"${fpath[1]}/_folio\"\nfolio completion fish > ~/.config/fish/completions/folio.fish"
	case c.HasParent() && c.Parent().Name() == "completion":
		c.Example = path + " > folio-completion." + c.Name()
	}
}

// walk calls fn on c and every command below it.
func walk(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		walk(sub, fn)
	}
}

// openLog opens a log for writing and tells the user on w when it took
// over the lock of a folio process that died holding it.
func openLog(path string, w io.Writer) (*history.Log, error) {
	// The data folder's search index follows every save (package search).
	l, err := history.Open(path, search.FollowLog(path))
	if err != nil {
		return nil, err
	}
	if pid := l.TookOverFrom(); pid > 0 && w != nil {
		fmt.Fprintf(w, "folio: %s was left locked by process %d, which is no longer running; took the lock over (its last save may be incomplete: folio log validate %s)\n", path, pid, path)
	}
	return l, nil
}

// providerErr is a provider that could not be loaded: a usage mistake when
// --provider named one that does not exist, a failure otherwise (a bad
// config file or environment).
func providerErr(cmd *cobra.Command, f providerFlags, err error) error {
	if f.provider != "" && errors.Is(err, provider.ErrUnknownProvider) {
		return usage(cmd, "--provider: %v", err)
	}
	return failure(cmd, err)
}

// workDir is the workspace folder the tools work in: --dir, which must be
// a folder that exists (a usage error naming it otherwise, before the tools
// fail in ways that point elsewhere, such as a shell that "cannot be
// found"), else the current folder.
func workDir(cmd *cobra.Command, dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", failure(cmd, err)
		}
		return wd, nil
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", usage(cmd, "--dir %s: no such folder", dir)
	case err != nil:
		return "", usage(cmd, "--dir %s: %v", dir, err)
	case !fi.IsDir():
		return "", usage(cmd, "--dir %s is not a folder", dir)
	}
	return dir, nil
}

// demoModelNote tells on w that a model name given for the demo provider
// is ignored: the demo answers alike whatever it is called, and a person
// who asked for gpt-9 should not believe they got it.
func demoModelNote(w io.Writer, cfg provider.Config) {
	if note := demoModelIgnored(cfg); note != "" && w != nil {
		fmt.Fprintf(w, "folio: %s\n", note)
	}
}

// demoModelIgnored is the sentence demoModelNote writes, "" when there is
// nothing to say. The chat shows it on its first screen instead.
func demoModelIgnored(cfg provider.Config) string {
	if cfg.Type != provider.TypeDemo || cfg.Model == "" || cfg.Model == provider.DemoModel {
		return ""
	}
	from := "--model"
	if src := cfg.Sources["model"]; src != "" && src != "flag" {
		from = src
	}
	return fmt.Sprintf("the model %q (%s) is ignored: the offline demo model is in use; pick a provider with --provider or FOLIO_PROVIDER (see folio models)", cfg.Model, from)
}

// checkWidth refuses a negative --width (0 means the default).
func checkWidth(cmd *cobra.Command, w int) error {
	if w < 0 {
		return usage(cmd, "--width must be a number of columns (0 for the default), got %d", w)
	}
	return nil
}
