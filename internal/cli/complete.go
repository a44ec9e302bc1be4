package cli

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/server"
)

// Shell completion of values (bash, zsh and fish all ask cobra's hidden
// __complete command, so one set of functions serves every shell):
// conversation IDs for --resume and the log commands' FILE|ID, the formats
// of --format, the providers of --provider and the configured models of
// --model. Each reads the data folder the command line names with --data.

// idCommands are the log commands whose argument is FILE|ID.
var idCommands = []string{"show", "validate", "repair", "upgrade", "compact", "export"}

// addCompletions registers the value completions of c's flags and
// arguments (newRoot walks every command through it).
func addCompletions(c *cobra.Command) {
	fs := c.Flags()
	if fs.Lookup("resume") != nil {
		c.RegisterFlagCompletionFunc("resume", func(cmd *cobra.Command, _ []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return completeIDs(cmd, typed), cobra.ShellCompDirectiveNoFileComp
		})
		if c.ValidArgsFunction == nil {
			// pflag leaves the ID of "--resume ID" as a positional.
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
				if f := cmd.Flags().Lookup("resume"); f != nil && f.Changed && len(args) == 0 {
					return completeIDs(cmd, typed), cobra.ShellCompDirectiveNoFileComp
				}
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
		}
	}
	if c.HasParent() && c.Parent().Name() == "log" && slices.Contains(idCommands, c.Name()) {
		c.ValidArgsFunction = func(cmd *cobra.Command, args []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			// IDs, and the shell's own file names beside them.
			return completeIDs(cmd, typed), cobra.ShellCompDirectiveDefault
		}
	}
	if fs.Lookup("format") != nil && c.Name() == "export" {
		c.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]cobra.Completion{
			cobra.CompletionWithDesc("jazz", "a version 3 log Jazz opens"),
			cobra.CompletionWithDesc("markdown", "a Markdown transcript with its receipts"),
			cobra.CompletionWithDesc("log", "the log exactly as stored"),
		}, cobra.ShellCompDirectiveNoFileComp))
	}
	if fs.Lookup("provider") != nil {
		c.RegisterFlagCompletionFunc("provider", func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return completeProviders(cmd), cobra.ShellCompDirectiveNoFileComp
		})
	}
	if fs.Lookup("model") != nil {
		c.RegisterFlagCompletionFunc("model", func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return completeModels(cmd), cobra.ShellCompDirectiveNoFileComp
		})
	}
}

// completionData is the data folder a command line being completed names.
func completionData(cmd *cobra.Command) string {
	data, _ := cmd.Flags().GetString("data")
	dir, err := history.DataDir(data)
	if err != nil {
		return ""
	}
	return dir
}

// completeIDs is the IDs of the data folder's conversations that start
// with typed, newest first, each described by its title.
func completeIDs(cmd *cobra.Command, typed string) []cobra.Completion {
	dir := completionData(cmd)
	if dir == "" {
		return nil
	}
	list, err := history.List(dir)
	if err != nil {
		return nil
	}
	var out []cobra.Completion
	for _, s := range list {
		id := conversationID(s)
		if !strings.HasPrefix(id, typed) {
			continue
		}
		if s.Title != "" {
			out = append(out, cobra.CompletionWithDesc(id, s.Title))
		} else {
			out = append(out, id)
		}
	}
	return out
}

// providerOptions is what --provider and --model are completed from: the
// data folder's config file, and the other flags already typed.
func providerOptions(cmd *cobra.Command) provider.Options {
	o := provider.Options{DataDir: completionData(cmd)}
	o.Provider, _ = cmd.Flags().GetString("provider")
	o.BaseURL, _ = cmd.Flags().GetString("base-url")
	return o
}

// completeProviders is the built-in providers and the config file's
// sections.
func completeProviders(cmd *cobra.Command) []cobra.Completion {
	out := []cobra.Completion{
		cobra.CompletionWithDesc(provider.TypeDemo, "the offline demo model"),
		cobra.CompletionWithDesc(provider.TypeOpenAI, "OpenAI or any OpenAI-compatible server"),
		cobra.CompletionWithDesc(provider.TypeAnthropic, "Anthropic"),
	}
	o := providerOptions(cmd)
	o.Provider = ""
	if c, err := provider.Resolve(o); err == nil {
		for _, s := range c.Sections {
			if !slices.Contains([]string{provider.TypeDemo, provider.TypeOpenAI, provider.TypeAnthropic}, s) {
				out = append(out, cobra.CompletionWithDesc(s, "from "+c.File))
			}
		}
	}
	return out
}

// completeModels is the models configured for the provider the command
// line selects, and those of the other providers that can answer, as
// folio models lists them.
func completeModels(cmd *cobra.Command) []cobra.Completion {
	models, err := server.ConfiguredModels(providerOptions(cmd))
	if err != nil {
		return nil
	}
	var out []cobra.Completion
	seen := map[string]bool{}
	for _, m := range models {
		if m.Model == "" || seen[m.Model] {
			continue
		}
		seen[m.Model] = true
		out = append(out, cobra.CompletionWithDesc(m.Model, m.Provider))
	}
	return out
}
