package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/foliodev/folio/server/auth"
)

// secretEnv holds the OpenID Connect client secret; a flag would put it in
// the process list and shell history.
const secretEnv = "FOLIO_OIDC_CLIENT_SECRET"

// accountFlags are folio serve's sign-in settings.
type accountFlags struct {
	issuer, clientID, secretFile, publicURL string
	admins                                  []string
	public                                  bool
	// secretFlag catches a secret given on the command line, to refuse it.
	secretFlag string
}

func (a *accountFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&a.issuer, "oidc-issuer", "", "sign people in through this OpenID Connect issuer URL (replaces the token; see docs/deploy.md)")
	fs.StringVar(&a.clientID, "oidc-client-id", "", "folio's client ID at the issuer")
	fs.StringVar(&a.secretFile, "oidc-client-secret-file", "", "file holding the client secret (else $"+secretEnv+")")
	fs.StringVar(&a.publicURL, "public-url", "", "the address people open folio at, scheme://host[:port] (default: http://ADDR); the provider redirects to PUBLIC-URL/auth/callback")
	fs.StringArrayVar(&a.admins, "admin", nil, "a subject or e-mail address with the admin role: sees and reassigns conversations nobody owns (repeatable)")
	fs.BoolVar(&a.public, "oidc-public-client", false, "folio is a public client at the issuer: no client secret, PKCE alone")
	fs.StringVar(&a.secretFlag, "oidc-client-secret", "", "never: the secret goes in $"+secretEnv+" or --oidc-client-secret-file")
	fs.MarkHidden("oidc-client-secret")
}

func (a *accountFlags) on() bool { return a.issuer != "" || a.clientID != "" }

// stray refuses a secret on the command line, and sign-in settings given
// without --oidc-issuer (which would otherwise be ignored).
func (a *accountFlags) stray(fs *pflag.FlagSet) error {
	if fs.Changed("oidc-client-secret") {
		return usageErr("serve: --oidc-client-secret: a secret is never a flag (the process list and shell history would show it); set $"+secretEnv+" or --oidc-client-secret-file FILE",
			secretEnv+"=… folio serve --oidc-issuer URL --oidc-client-id ID")
	}
	if a.on() {
		return nil
	}
	for _, name := range []string{"admin", "public-url", "oidc-client-secret-file", "oidc-public-client"} {
		if fs.Changed(name) {
			return usageErr("serve: --"+name+" needs --oidc-issuer and --oidc-client-id: it is a sign-in setting, and accounts are off without them",
				"folio serve --oidc-issuer https://id.example.com --oidc-client-id folio --"+name+" …")
		}
	}
	return nil
}

// config checks the flags and reads the secret; cfg lacks Sessions and
// Logger, which the caller fills in.
func (a *accountFlags) config(addr string, f *serveFlags) (auth.Config, error) {
	switch {
	case a.issuer == "":
		return auth.Config{}, usageErr("serve: --oidc-client-id needs --oidc-issuer", "folio serve --oidc-issuer https://id.example.com --oidc-client-id folio")
	case a.clientID == "":
		return auth.Config{}, usageErr("serve: --oidc-issuer needs --oidc-client-id", "folio serve --oidc-issuer "+a.issuer+" --oidc-client-id folio")
	case f.token != "" || f.noToken:
		return auth.Config{}, usageErr("serve: --token and --no-token do not go with --oidc-issuer: signing in replaces the token", "folio serve --oidc-issuer "+a.issuer+" --oidc-client-id "+a.clientID)
	}
	secret := os.Getenv(secretEnv)
	if a.secretFile != "" {
		b, err := os.ReadFile(a.secretFile)
		if err != nil {
			return auth.Config{}, usageErr("serve: --oidc-client-secret-file: "+errText(err), "")
		}
		secret = strings.TrimSpace(string(b))
		if secret == "" {
			return auth.Config{}, usageErr("serve: --oidc-client-secret-file: "+filepath.Base(a.secretFile)+" is empty", "")
		}
	}
	switch {
	case a.public && secret != "":
		return auth.Config{}, usageErr("serve: --oidc-public-client has no client secret, but $"+secretEnv+" or --oidc-client-secret-file gives one", "unset "+secretEnv+", or drop --oidc-public-client")
	case !a.public && secret == "":
		return auth.Config{}, usageErr("serve: --oidc-issuer needs the client secret in $"+secretEnv+" or a file named by --oidc-client-secret-file (or --oidc-public-client for a client without one)",
			secretEnv+"=… folio serve --oidc-issuer "+a.issuer+" --oidc-client-id "+a.clientID)
	}
	pub := a.publicURL
	if pub == "" {
		host, _, err := net.SplitHostPort(addr)
		if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
			return auth.Config{}, usageErr("serve: --oidc-issuer on "+addr+" needs --public-url, the address people open folio at", "folio serve --oidc-issuer "+a.issuer+" --public-url https://folio.example.com")
		}
		pub = "http://" + addr
	}
	u, err := url.Parse(pub)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return auth.Config{}, usageErr(fmt.Sprintf("serve: --public-url %q must be scheme://host[:port] with no path", pub), "folio serve --public-url https://folio.example.com")
	}
	// The proxy forwards the public name as Host; the server must answer it.
	f.hosts = append(f.hosts, u.Host)
	if u.Port() == "" {
		f.hosts = append(f.hosts, u.Host+":"+map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	return auth.Config{Issuer: a.issuer, ClientID: a.clientID, ClientSecret: secret, PublicURL: pub, Admins: a.admins}, nil
}

func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return filepath.Base(pe.Path) + ": " + pe.Err.Error()
	}
	return err.Error()
}

// startAuth reaches the issuer; a failure names the setting.
func startAuth(cmd *cobra.Command, cfg auth.Config, sessions auth.Store, logger *slog.Logger) (*auth.Auth, error) {
	cfg.Sessions, cfg.Logger = sessions, logger
	a, err := auth.New(cmd.Context(), cfg)
	if err != nil {
		return nil, failure(cmd, fmt.Errorf("--oidc-issuer: %w", err))
	}
	return a, nil
}
