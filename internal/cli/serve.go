package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/provider"
	_ "github.com/foliodev/folio/provider/builtin" // every client: openai, anthropic, demo
	"github.com/foliodev/folio/server"
	"github.com/foliodev/folio/server/auth"
	"github.com/foliodev/folio/server/client"
	"github.com/foliodev/folio/store/pgstore"
	"github.com/foliodev/folio/webui"
)

func init() { register("", newServeCmd) }

type serveFlags struct {
	addr, data, token, allow, work string
	store                          string
	noToken                        bool
	hosts                          []string
	prov                           providerFlags
	acct                           accountFlags
}

func newServeCmd(stdio IO) *cobra.Command {
	f := &serveFlags{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the web app and its API over the data folder",
		Long: "Serve the web chat and its HTTP API for the conversations in the data folder. It listens on loopback unless told otherwise. " +
			"Each launch makes a random token that the API requires and prints the address to open with it (http://127.0.0.1:7878/#token=…); " +
			"--no-token turns that off, on loopback only. Requests naming another Host (see --allowed-host) or sent from another site's page are refused.",
		Example: `folio serve
folio serve --addr 127.0.0.1:9000 --data ~/notes/folio
folio serve --addr 0.0.0.0:7878 --token "$(openssl rand -hex 16)"
folio serve --store postgres://folio@db/folio --data /var/lib/folio-replica-1`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(cmd, f, stdio) },
	}
	fs := cmd.Flags()
	fs.StringVar(&f.addr, "addr", "127.0.0.1:7878", "listen address; non-loopback needs --token")
	dataFlag(fs, &f.data)
	fs.StringVar(&f.token, "token", "", "token required on every API request (at least 16 characters; default: a new random one per launch)")
	fs.BoolVar(&f.noToken, "no-token", false, "serve without a token (loopback addresses only)")
	fs.StringArrayVar(&f.hosts, "allowed-host", nil, "another name the Host header may carry, NAME or NAME:PORT (repeatable)")
	f.prov.add(fs)
	fs.StringVar(&f.allow, "allow", "", allowUsage("comma-separated tools that run without approval"))
	fs.StringVar(&f.work, "dir", "", "workspace folder the tools work in (default: the folder folio serve starts in)")
	storeFlag(fs, &f.store)
	f.acct.add(fs)
	return cmd
}

// replicaIdleAfter is how long a replica keeps an idle conversation's
// engine, and so its lease, after a turn.
const replicaIdleAfter = 2 * time.Second

func runServe(cmd *cobra.Command, f *serveFlags, stdio IO) error {
	ctx := cmd.Context()
	var (
		dir string
		err error
	)
	var acfg auth.Config
	if err := f.acct.stray(cmd.Flags()); err != nil {
		return err
	}
	if f.acct.on() {
		if acfg, err = f.acct.config(f.addr, f); err != nil {
			return err
		}
	}
	switch {
	case f.acct.on():
	case f.noToken && f.token != "":
		return usageErr("serve: --token and --no-token contradict each other", "folio serve --token SECRET, or folio serve --no-token")
	case f.token != "":
		if err := server.CheckToken(f.token); err != nil {
			return usageErr("serve: --token: "+err.Error(), "folio serve --token \"$(openssl rand -base64 24)\"")
		}
	case !f.noToken:
		f.token = server.NewToken()
	}
	for _, h := range f.hosts {
		if h == "" || strings.ContainsAny(h, " /") {
			return usageErr(fmt.Sprintf("serve: --allowed-host %q is not a host name (NAME or NAME:PORT)", h), "folio serve --allowed-host folio.lan")
		}
	}
	if err := server.CheckAddr(f.addr, f.token); err != nil && !f.acct.on() {
		if errors.Is(err, server.ErrNonLoopback) {
			return usageErr("serve: --no-token: "+err.Error(), "folio serve --addr "+f.addr+" (a token is made for you)")
		}
		return usageErr("serve: --addr: "+err.Error(), "folio serve --addr 127.0.0.1:7878")
	}
	if f.work, err = workDir(cmd, f.work); err != nil {
		return err
	}
	dir, err = history.DataDir(f.data)
	if err != nil {
		return failure(cmd, err)
	}
	popts := provider.Options{DataDir: dir, Provider: f.prov.provider, Model: f.prov.model, BaseURL: f.prov.baseURL}
	cfg, prov, err := provider.Load(popts)
	if err != nil {
		return providerErr(cmd, f.prov, err)
	}
	demoModelNote(stdio.Err, cfg)
	// The models a browser may switch to; the first is cfg itself.
	models, err := server.ConfiguredModels(popts)
	if err != nil {
		return failure(cmd, err)
	}
	var allowed []string
	if f.allow != "" {
		allowed = strings.Split(f.allow, ",")
	}
	extra, mgr, err := loadMCP(ctx, dir, f.work, stdio.Err)
	if err != nil {
		return failure(cmd, err)
	}
	if mgr != nil {
		defer mgr.Close()
	}
	logger := slog.New(slog.NewTextHandler(stdio.Err, nil))
	topts := server.TurnsOptions{Provider: prov, Model: cfg.Model, ContextWindow: cfg.ContextWindow,
		Workspace: f.work, Allow: allowed, Models: models, Tools: extra}
	var (
		replica  server.Replica
		sessions auth.Store
	)
	if url := storeURL(f.store); url != "" {
		st, err := openStore(cmd, url)
		if err != nil {
			return err
		}
		defer st.Close()
		mirror := pgstore.NewMirror(st, dir, logger)
		mctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { mirror.Run(mctx); close(done) }()
		defer func() { stop(); <-done }()
		replica = mirror // every job of a replica (server.ReplicaSync, ReplicaStore, …)
		// A conversation's engine holds its lease: on a replica it lets go
		// soon after a turn, so a send that reaches another replica runs.
		topts.IdleAfter = replicaIdleAfter
		sessions = pgstore.NewSessions(st)
	}
	var signIn *auth.Auth
	if f.acct.on() {
		if sessions == nil {
			fs, err := auth.NewFileStore(filepath.Join(dir, "sessions"))
			if err != nil {
				return failure(cmd, err)
			}
			sessions = fs
		}
		if signIn, err = startAuth(cmd, acfg, sessions, logger); err != nil {
			return err
		}
	}
	srv, err := server.New(server.Options{
		DataDir:      dir,
		Token:        f.token,
		AllowedHosts: f.hosts,
		Turns:        &topts,
		App:          webui.Handler(),
		Logger:       logger,
		Replica:      replica,
		Auth:         signIn,
		// A conversation a terminal chat owns is sent to through it.
		DialOwner: client.DialOwner,
	})
	if err != nil {
		return failure(cmd, err)
	}
	// The local endpoint: terminals of this user that find a conversation
	// this server owns attach to it here instead of being refused its lock.
	// Without it (a data folder too deep for a socket's path) they are
	// refused as before, so it is a warning, not a failure.
	if ep, err := srv.ServeLocal(ctx, dir); err != nil {
		logger.Warn("no local endpoint; terminals cannot attach to this server's conversations", "err", err)
	} else {
		defer ep.Close()
	}
	err = srv.ListenAndServe(ctx, f.addr, func(a net.Addr) {
		// The token goes in the fragment, which browsers never send to a
		// server; the app moves it to the tab's session storage.
		open := "http://" + a.String() + "/"
		if f.token != "" {
			open += "#token=" + url.QueryEscape(f.token)
		}
		if signIn != nil {
			open = strings.TrimSuffix(acfg.PublicURL, "/") + "/ (people sign in through " + acfg.Issuer + ")"
		}
		fmt.Fprintf(stdio.Out, "folio serving %s (model: %s %s; tools work in %s)\nopen %s\n", dir, cfg.Name, cfg.Model, f.work, open)
	})
	if err != nil {
		return failure(cmd, err)
	}
	return nil
}
