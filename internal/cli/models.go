package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	gojson "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/provider"
	_ "github.com/foliodev/folio/provider/builtin" // every client: openai, anthropic, demo
)

func init() {
	register("models", "list the configured model providers (never prints keys)", runModels)
}

const modelsTry = "folio models [--provider NAME] [--model NAME] [--base-url URL] [--data DIR] [--json]"

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

func runModels(ctx context.Context, args []string, stdio IO) error {
	fs := flag.NewFlagSet("models", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "print the providers as JSON")
	provName := fs.String("provider", "", "provider to show as selected (default $FOLIO_PROVIDER, else the config file, else demo)")
	model := fs.String("model", "", "model name (default $FOLIO_MODEL)")
	baseURL := fs.String("base-url", "", "OpenAI-compatible server URL (default $FOLIO_BASE_URL)")
	data := fs.String("data", "", "data folder holding config.json (default $FOLIO_HOME, else $XDG_DATA_HOME/folio)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return usageErr("models: "+err.Error(), modelsTry)
	}
	if len(pos) > 0 {
		return usageErr(fmt.Sprintf("models: unexpected argument %q", pos[0]), modelsTry)
	}
	dataDir, _ := history.DataDir(*data) // no data folder: no config file
	opts := provider.Options{DataDir: dataDir, Provider: *provName, Model: *model, BaseURL: *baseURL}
	cur, err := provider.Resolve(opts)
	if err != nil {
		return ExitError{Code: 1, Msg: "models: " + err.Error()}
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

	if *asJSON {
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
