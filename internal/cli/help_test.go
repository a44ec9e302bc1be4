package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Every command and subcommand answers --help with exit 0, its usage line,
// an example, and every flag it takes (its own and inherited ones).
func TestEveryCommandHelpListsItsFlags(t *testing.T) {
	t.Parallel()
	root := newRoot(IO{})
	var cmds []*cobra.Command
	walk(root, func(c *cobra.Command) {
		if !c.Hidden {
			cmds = append(cmds, c)
		}
	})
	if len(cmds) < 15 {
		t.Fatalf("walked only %d commands; the tree is not assembled", len(cmds))
	}
	for _, c := range cmds {
		path := strings.Fields(c.CommandPath())[1:]
		// Cobra builds a command's flag sets lazily, writing its parents'
		// too: collect them here, not in the parallel subtests.
		var flags []*pflag.Flag
		collect := func(f *pflag.Flag) { flags = append(flags, f) }
		c.LocalFlags().VisitAll(collect)
		c.InheritedFlags().VisitAll(collect)
		t.Run(strings.Join(append([]string{"folio"}, path...), "_"), func(t *testing.T) {
			t.Parallel()
			out, errOut, err := run(t, append(path, "--help")...)
			if err != nil {
				t.Fatalf("exit %d: %v\n%s", exitCode(err), err, errOut)
			}
			for _, want := range []string{"Usage:", "Examples:", "-h, --help"} {
				if !strings.Contains(out, want) {
					t.Errorf("help lacks %q:\n%s", want, out)
				}
			}
			for _, f := range flags {
				if !f.Hidden && !strings.Contains(out, "--"+f.Name+" ") {
					t.Errorf("help does not list --%s:\n%s", f.Name, out)
				}
			}
		})
	}
}

// Usage mistakes exit 2, name what was wrong, and end with one try line.
func TestUsageErrorsNameTheFlagAndTry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"log", "show", "--width", "x", "f"}, `"--width"`},
		{[]string{"log", "show", "--bogus", "f"}, "--bogus"},
		{[]string{"log", "nope"}, `unknown command "nope"`},
		{[]string{"log", "show"}, "want one FILE"},
		{[]string{"gen", "--messages", "3"}, "--out"},
		{[]string{"serve", "extra"}, `unexpected argument "extra"`},
		{[]string{"--nope"}, "--nope"},
	}
	for _, tt := range tests {
		_, _, err := run(t, tt.args...)
		var msg string
		if ex, ok := err.(ExitError); ok {
			msg = ex.Msg
		}
		if exitCode(err) != 2 || !strings.Contains(msg, tt.want) || strings.Count(msg, "\ntry: ") != 1 {
			t.Errorf("folio %s: exit %d %q; want exit 2 naming %s with one try line", strings.Join(tt.args, " "), exitCode(err), msg, tt.want)
		}
	}
}

func TestVersionFlag(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--version"}, {"-v"}, {"version"}} {
		out, _, err := run(t, args...)
		if err != nil || out != "folio "+Version+"\n" {
			t.Errorf("folio %s: %q, %v", args[0], out, err)
		}
	}
}

// The bash completion script loads in bash and, through the real binary,
// completes a command name and a subcommand name.
func TestCompletionBashLoadsAndCompletes(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	bin := buildFolio(t)
	dir := filepath.Dir(bin)
	script, errOut, err := run(t, "completion", "bash")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	file := filepath.Join(dir, "folio.bash")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	complete := func(words ...string) string {
		t.Helper()
		line := strings.Join(words, " ")
		// The script leans on the bash-completion package's word
		// splitter; where that package is missing, a stand-in does
		// what it does for these simple lines.
		sh := `if [[ -r /usr/share/bash-completion/bash_completion ]]; then
  source /usr/share/bash-completion/bash_completion
else
  _get_comp_words_by_ref() { cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}; words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
fi
source "$1" || exit 3
complete -p folio >/dev/null || exit 4
COMP_LINE="$2"; COMP_POINT=${#COMP_LINE}; read -ra COMP_WORDS <<<"$2"
[[ "$2" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]}-1))
__start_folio folio
printf '%s\n' "${COMPREPLY[@]}"`
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", sh, "bash", file, line)
		cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
		// compopt complains on stderr outside a real completion; the
		// candidates are on stdout.
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("completing %q: %v\n%s%s", line, err, out, stderr.String())
		}
		return string(out)
	}
	if got := complete("folio", "lo"); strings.TrimSpace(got) != "log" {
		t.Errorf("folio lo<TAB> = %q, want log", got)
	}
	if got := complete("folio", "log", "va"); strings.TrimSpace(got) != "validate" {
		t.Errorf("folio log va<TAB> = %q, want validate", got)
	}
	if got := complete("folio", "serve", "--ad"); !strings.Contains(got, "--addr") {
		t.Errorf("folio serve --ad<TAB> = %q, want --addr", got)
	}
	// Values too: the conversation IDs of the data folder the line names.
	home := t.TempDir()
	saveConversation(t, home, "20261203-074856-935ef7", "notes", "q", "a")
	if got := complete("folio", "--data", home, "--resume", "2026"); strings.TrimSpace(got) != "20261203-074856-935ef7" {
		t.Errorf("folio --resume 2026<TAB> = %q, want the conversation's ID", got)
	}
	if got := complete("folio", "log", "show", "--data", home, "2026"); !strings.Contains(got, "20261203-074856-935ef7") {
		t.Errorf("folio log show 2026<TAB> = %q, want the conversation's ID", got)
	}
}

// BenchmarkNewRoot is the cost of assembling the command tree, which Run
// does on every call.
func BenchmarkNewRoot(b *testing.B) {
	for b.Loop() {
		_ = newRoot(IO{})
	}
}
