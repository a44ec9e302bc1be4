package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	gojson "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/spf13/cobra"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/provider"
	_ "github.com/foliodev/folio/provider/builtin" // every client: openai, anthropic, demo
)

func init() { register("", newModelsCmd) }

// modelInfo is one provider as `folio models` shows it. It has no field
// for the key itself, so no output path can print one.
type modelInfo struct {
	Name          string            `json:"name"`
	Type          string            `json:"type,omitzero"`
	Model         string            `json:"model,omitzero"`
	BaseURL       string            `json:"baseURL,omitzero"`
	Key           string            `json:"key"` // "yes", "no" or "not needed"
	KeySource     string            `json:"keySource,omitzero"`
	ContextWindow int               `json:"contextWindow,omitzero"`
	Sources       map[string]string `json:"sources,omitzero"`
	Selected      bool              `json:"selected,omitzero"`
	Error         string            `json:"error,omitzero"`
}

func infoOf(c provider.Config) modelInfo {
	m := modelInfo{Name: c.Name, Type: c.Type, Model: c.Model, BaseURL: c.BaseURL, KeySource: c.KeySource,
		ContextWindow: c.ContextWindow, Sources: c.Sources}
	switch {
	case c.Type == provider.TypeDemo:
		m.Key = "not needed"
	case c.APIKey != "":
		m.Key = "yes"
	default:
		m.Key = "no"
	}
	return m
}

type modelsFlags struct {
	asJSON bool
	prov   providerFlags
	data   string
}

func newModelsCmd(stdio IO) *cobra.Command {
	f := &modelsFlags{}
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the configured model providers (never prints keys)",
		Long:  "List every provider folio could use, which one is selected and why, and whether each has a key. Keys themselves are never printed.",
		Example: `folio models
folio models --provider openai --model gpt-4.1-mini
folio models --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runModels(cmd, f, stdio) },
	}
	fs := cmd.Flags()
	fs.BoolVar(&f.asJSON, "json", false, "print the providers as JSON")
	f.prov.add(fs)
	fs.Lookup("provider").Usage = "provider to show as selected (default $FOLIO_PROVIDER, else the config file, else demo)"
	fs.StringVar(&f.data, "data", "", "data folder holding config.json (default $FOLIO_HOME, else $XDG_DATA_HOME/folio)")
	return cmd
}

func runModels(cmd *cobra.Command, f *modelsFlags, stdio IO) error {
	dataDir, _ := history.DataDir(f.data) // no data folder: no config file
	opts := provider.Options{DataDir: dataDir, Provider: f.prov.provider, Model: f.prov.model, BaseURL: f.prov.baseURL}
	cur, err := provider.Resolve(opts)
	if err != nil {
		return providerErr(cmd, f.prov, err)
	}

	// Every provider folio could use, as it would be if selected: the
	// built-ins and the config file's sections.
	names := []string{provider.TypeDemo, provider.TypeOpenAI, provider.TypeAnthropic}
	for _, s := range cur.Sections {
		if s != provider.TypeDemo && s != provider.TypeOpenAI && s != provider.TypeAnthropic {
			names = append(names, s)
		}
	}
	var all []modelInfo
	for _, n := range names {
		o := provider.Options{DataDir: dataDir, Provider: n}
		if n == cur.Name {
			o = opts
		}
		c, err := provider.Resolve(o)
		m := infoOf(c)
		m.Name, m.Selected = n, n == cur.Name
		if err != nil {
			m.Error = strings.TrimPrefix(err.Error(), provider.ErrConfig.Error()+": ")
		}
		all = append(all, m)
	}

	if f.asJSON {
		out := struct {
			Selected  modelInfo   `json:"selected"`
			Providers []modelInfo `json:"providers"`
			File      string      `json:"configFile,omitzero"`
			FileFound bool        `json:"configFileFound"`
		}{infoOf(cur), all, cur.File, cur.FileFound}
		out.Selected.Selected = true
		b, err := gojson.Marshal(out, jsontext.WithIndent("  "), gojson.Deterministic(true))
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdio.Out, "%s\n", b)
		return err
	}

	var b strings.Builder
	sel := infoOf(cur)
	fmt.Fprintf(&b, "selected: %s", cur.Name)
	if cur.Sources["provider"] == "default" && cur.Type == provider.TypeDemo {
		b.WriteString(" (the offline demo model: nothing else is configured)")
	} else {
		fmt.Fprintf(&b, " (from %s)", cur.Sources["provider"])
	}
	b.WriteString("\n")
	row := func(label, value, source string) {
		if value == "" {
			value = "-"
		}
		if source != "" {
			value += " (" + source + ")"
		}
		fmt.Fprintf(&b, "  %-15s %s\n", label, value)
	}
	row("type", sel.Type, "")
	row("model", sel.Model, cur.Sources["model"])
	if cur.Type != provider.TypeDemo {
		row("base URL", sel.BaseURL, cur.Sources["baseURL"])
	}
	row("API key", sel.Key, sel.KeySource)
	if cur.ContextWindow > 0 {
		row("context window", fmt.Sprintf("%d tokens", cur.ContextWindow), cur.Sources["contextWindow"])
	} else {
		row("context window", "unknown", "set contextWindow in the config file")
	}
	switch {
	case cur.File == "":
		row("config file", "none", "no data folder")
	case cur.FileFound:
		row("config file", cur.File, "")
	default:
		row("config file", cur.File, "not found")
	}

	b.WriteString("\nproviders:\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  \tNAME\tTYPE\tMODEL\tBASE URL\tKEY")
	for _, m := range all {
		mark := " "
		if m.Selected {
			mark = "*"
		}
		key := m.Key
		if m.KeySource != "" {
			key += " (" + m.KeySource + ")"
		}
		if m.Error != "" {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t\t\n", mark, m.Name, m.Type, "(not usable, see below)")
			continue
		}
		base := m.BaseURL
		if base == "" {
			base = "-"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", mark, m.Name, m.Type, m.Model, base, key)
	}
	tw.Flush()
	for _, m := range all {
		if m.Error != "" {
			fmt.Fprintf(&b, "\n%s: %s\n", m.Name, m.Error)
		}
	}
	b.WriteString("\nChoose with --provider or FOLIO_PROVIDER; see docs/providers.md.\n")
	_, err = io.WriteString(stdio.Out, b.String())
	return err
}
