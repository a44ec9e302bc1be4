package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/provider"
	_ "github.com/foliodev/folio/provider/builtin" // every client: openai, anthropic, demo
	"github.com/foliodev/folio/server"
	"github.com/foliodev/folio/webui"
)

func init() {
	register("serve", "serve the web app and its API over the data folder", runServe)
}

func runServe(ctx context.Context, args []string, stdio IO) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := fs.String("addr", "127.0.0.1:7878", "listen address; non-loopback needs --token")
	data := fs.String("data", "", "data folder (default $FOLIO_HOME, else $XDG_DATA_HOME/folio)")
	token := fs.String("token", "", "token required on every API request (at least 16 characters; default: a new random one per launch)")
	noToken := fs.Bool("no-token", false, "serve without a token (loopback addresses only)")
	var hosts hostList
	fs.Var(&hosts, "allowed-host", "another name the Host header may carry, NAME or NAME:PORT (repeatable)")
	provName := fs.String("provider", "", "provider name (default $FOLIO_PROVIDER, else the config file, else demo)")
	model := fs.String("model", "", "model name (default $FOLIO_MODEL)")
	baseURL := fs.String("base-url", "", "OpenAI-compatible server URL (default $FOLIO_BASE_URL)")
	allow := fs.String("allow", "", "comma-separated tools that run without approval (shell,write_file,edit_file; * for all)")
	work := fs.String("dir", "", "workspace folder the tools work in (default: the folder folio serve starts in)")
	const try = "folio serve --addr 127.0.0.1:7878 --data ~/.local/share/folio"
	if err := fs.Parse(args); err != nil {
		return usageErr("serve: "+err.Error(), try)
	}
	if fs.NArg() > 0 {
		return usageErr(fmt.Sprintf("serve: unexpected argument %q", fs.Arg(0)), try)
	}
	switch {
	case *noToken && *token != "":
		return usageErr("serve: --token and --no-token contradict each other", try)
	case *token != "":
		if err := server.CheckToken(*token); err != nil {
			return usageErr("serve: --token: "+err.Error(), "folio serve --token \"$(openssl rand -base64 24)\"")
		}
	case !*noToken:
		*token = server.NewToken()
	}
	if err := server.CheckAddr(*addr, *token); err != nil {
		return usageErr("serve: --no-token: "+err.Error(), "folio serve --addr "+*addr+" (a token is made for you)")
	}
	dir, err := history.DataDir(*data)
	if err != nil {
		return ExitError{Code: 1, Msg: "serve: " + err.Error()}
	}
	popts := provider.Options{DataDir: dir, Provider: *provName, Model: *model, BaseURL: *baseURL}
	cfg, prov, err := provider.Load(popts)
	if err != nil {
		return ExitError{Code: 1, Msg: "serve: " + err.Error()}
	}
	// The models a browser may switch to; the first is cfg itself.
	models, err := server.ConfiguredModels(popts)
	if err != nil {
		return ExitError{Code: 1, Msg: "serve: " + err.Error()}
	}
	if *work == "" {
		if *work, err = os.Getwd(); err != nil {
			return ExitError{Code: 1, Msg: "serve: " + err.Error()}
		}
	}
	var allowed []string
	if *allow != "" {
		allowed = strings.Split(*allow, ",")
	}
	turns, err := server.NewTurns(server.TurnsOptions{Provider: prov, Model: cfg.Model, ContextWindow: cfg.ContextWindow,
		Workspace: *work, Allow: allowed, Models: models})
	if err != nil {
		return ExitError{Code: 1, Msg: "serve: " + err.Error()}
	}
	srv, err := server.New(server.Options{
		DataDir:      dir,
		Token:        *token,
		AllowedHosts: hosts,
		Engine:       turns,
		App:          webui.Handler(),
		Logger:       slog.New(slog.NewTextHandler(stdio.Err, nil)),
	})
	if err != nil {
		return ExitError{Code: 1, Msg: "serve: " + err.Error()}
	}
	err = srv.ListenAndServe(ctx, *addr, func(a net.Addr) {
		// The token goes in the fragment, which browsers never send to a
		// server; the app moves it to the tab's session storage.
		open := "http://" + a.String() + "/"
		if *token != "" {
			open += "#token=" + url.QueryEscape(*token)
		}
		fmt.Fprintf(stdio.Out, "folio serving %s (model: %s %s; tools work in %s)\nopen %s\n", dir, cfg.Name, cfg.Model, *work, open)
	})
	if err != nil {
		return ExitError{Code: 1, Msg: "serve: " + err.Error()}
	}
	return nil
}

// hostList collects --allowed-host values.
type hostList []string

func (h *hostList) String() string { return strings.Join(*h, ",") }

func (h *hostList) Set(v string) error {
	if v == "" || strings.ContainsAny(v, " /") {
		return fmt.Errorf("allowed host %q is not a host name (NAME or NAME:PORT)", v)
	}
	*h = append(*h, v)
	return nil
}
