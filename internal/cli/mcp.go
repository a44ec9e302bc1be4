package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	gojson "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/mcp"
	"github.com/foliodev/folio/search"
	"github.com/foliodev/folio/tools"
)

func init() {
	register("", newMCPCmd)
	register("mcp", newMCPListCmd)
	register("mcp", newMCPServeCmd)
}

// mcpListTimeout bounds how long a session waits for its MCP servers to
// start and list their tools.
const mcpListTimeout = 30 * time.Second

// loadMCP returns the tools of the data folder's configured MCP servers and
// the manager the caller closes at exit (which stops them). A server whose
// tool list is cached in the data folder's mcp/ folder starts on its first
// call; any other is started now to list them. A server that fails is
// reported on errOut and offers no tools; a malformed config is an error.
func loadMCP(ctx context.Context, dataDir, work string, errOut io.Writer) ([]tools.Tool, *mcp.Manager, error) {
	cfgs, err := mcp.LoadConfig(dataDir)
	if err != nil || len(cfgs) == 0 {
		return nil, nil, err
	}
	opts := []mcp.Option{mcp.WithDir(work), mcp.WithVersion(Version)}
	if dataDir != "" {
		opts = append(opts, mcp.WithCache(filepath.Join(dataDir, "mcp")))
	}
	m := mcp.New(cfgs, opts...)
	lctx, cancel := context.WithTimeout(ctx, mcpListTimeout)
	defer cancel()
	ts, err := m.Tools(lctx)
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(errOut, "folio: %s\n", line)
		}
	}
	return ts, m, nil
}

// allowList is what --yes and --allow allow: "*" for --yes, else the
// comma-separated names and patterns.
// allowUsage is the --allow flag's help: the built-in tools that ask for
// approval, named from the one registry (tools.Builtin), then how MCP
// servers' tools are named.
func allowUsage(lead string) string {
	var names []string
	if set, err := tools.Builtin("", nil); err == nil {
		for _, n := range set.Names() {
			if t, ok := set.Get(n); ok && t.NeedsApproval() {
				names = append(names, n)
			}
		}
	}
	return lead + " (" + strings.Join(names, ",") + "; an MCP server's tools as github__* or github__search; * for all)"
}

func allowList(yes bool, allow string) []string {
	if yes {
		return []string{"*"}
	}
	var out []string
	for _, n := range strings.Split(allow, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

func newMCPCmd(IO) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "MCP servers: list the configured ones, or serve folio's history as one",
		Long: "folio uses the tools of the MCP servers configured under mcpServers in config.json (see docs/mcp.md), " +
			"and can itself serve its conversation history to other agents over MCP.",
		Example: `folio mcp ls
folio mcp serve`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
}

type mcpListFlags struct {
	data   string
	asJSON bool
}

func newMCPListCmd(stdio IO) *cobra.Command {
	f := &mcpListFlags{}
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "Start each configured MCP server and list its state and tools (never prints secrets)",
		Long: "Read mcpServers from config.json, start each server, and show its transport, state and tools " +
			"as the model sees them (server__tool). Env and header values are never printed, only the names of the " +
			"environment variables they read.",
		Example: `folio mcp ls
folio mcp ls --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runMCPList(cmd, f, stdio) },
	}
	dataFlag(cmd.Flags(), &f.data)
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print the servers as JSON")
	return cmd
}

// mcpServerInfo is what `folio mcp ls` prints of a server. It has no field
// for an env or header value, so no output path can print one.
type mcpServerInfo struct {
	Name      string   `json:"name"`
	Transport string   `json:"transport"`
	Target    string   `json:"target"`
	State     string   `json:"state"`
	Error     string   `json:"error,omitzero"`
	Tools     []string `json:"tools"`
	Env       []string `json:"env,omitzero"`
}

func runMCPList(cmd *cobra.Command, f *mcpListFlags, stdio IO) error {
	dataDir, err := history.DataDir(f.data)
	if err != nil {
		return failure(cmd, err)
	}
	cfgs, err := mcp.LoadConfig(dataDir)
	if err != nil {
		return failure(cmd, err)
	}
	m := mcp.New(cfgs, mcp.WithVersion(Version))
	defer m.Close()
	ctx, cancel := context.WithTimeout(cmd.Context(), mcpListTimeout)
	defer cancel()
	_, _ = m.Tools(ctx) // each failure is in that server's status
	infos := []mcpServerInfo{}
	for _, s := range m.Status() {
		infos = append(infos, mcpServerInfo{Name: s.Name, Transport: s.Transport, Target: s.Target, State: string(s.State),
			Error: s.Error, Tools: append([]string{}, s.Tools...), Env: s.EnvNames})
	}
	if f.asJSON {
		b, err := gojson.Marshal(infos, jsontext.WithIndent("  "))
		if err != nil {
			return failure(cmd, err)
		}
		_, err = fmt.Fprintf(stdio.Out, "%s\n", b)
		return err
	}
	if len(infos) == 0 {
		_, err := fmt.Fprintf(stdio.Out, "no MCP servers configured (add mcpServers to %s/%s; see docs/mcp.md)\n", dataDir, mcp.ConfigFile)
		return err
	}
	tw := tabwriter.NewWriter(stdio.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tTRANSPORT\tSTATE\tTOOLS\tTARGET\tENV")
	for _, s := range infos {
		env := strings.Join(s.Env, ",")
		if env == "" {
			env = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", s.Name, s.Transport, s.State, len(s.Tools), s.Target, env)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range infos {
		if s.Error != "" {
			fmt.Fprintf(stdio.Out, "%s: %s\n", s.Name, s.Error)
		}
		for _, t := range s.Tools {
			fmt.Fprintf(stdio.Out, "  %s\n", t)
		}
	}
	return nil
}

func newMCPServeCmd(stdio IO) *cobra.Command {
	var data, store string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve folio's conversation history, read-only, as an MCP server over stdio",
		Long: "Speak MCP on standard input and output, offering list_conversations, read_conversation (one page of " +
			"entries), search (full text, through the search index beside the logs) and search_titles over the data folder's logs, or with --store " +
			"over a PostgreSQL store's conversations and the search index in its database. Nothing is written to the logs. Configure it in another agent " +
			"as the command `folio mcp serve`.",
		Example: `folio mcp serve
folio mcp serve --data ~/.local/share/folio
folio mcp serve --store postgres://db.example/folio`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dataDir, err := history.DataDir(data)
			if err != nil {
				return failure(cmd, err)
			}
			t := &sdk.IOTransport{Reader: readCloser{stdio.In}, Writer: writeCloser{stdio.Out}}
			src := mcp.Source{Data: dataDir}
			if url := storeURL(store); url != "" {
				st, err := openStore(cmd, url)
				if err != nil {
					return err
				}
				defer st.Close()
				ix := search.OpenPostgres(st)
				defer ix.Close()
				src.Store, src.Index = st, ix
			}
			// The client closing stdin ends Serve with no error.
			if err := mcp.ServeSource(cmd.Context(), src, Version, t); err != nil && cmd.Context().Err() == nil {
				return failure(cmd, err)
			}
			return nil
		},
	}
	dataFlag(cmd.Flags(), &data)
	storeFlag(cmd.Flags(), &store)
	return cmd
}

type readCloser struct{ io.Reader }

func (readCloser) Close() error { return nil }

type writeCloser struct{ io.Writer }

func (writeCloser) Close() error { return nil }
