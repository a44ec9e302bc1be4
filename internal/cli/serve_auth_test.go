package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodev/folio/server/auth"
	"github.com/foliodev/folio/server/auth/authtest"
)

// TestServeSignInFlags: every refusal of folio serve's sign-in settings,
// through the real entry point: its exit code and a message that names the
// setting at fault.
func TestServeSignInFlags(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secretFile, []byte("s3cret\n"), 0o600)
	emptyFile := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(emptyFile, nil, 0o600)
	// Issuers that stop serve at start: nothing listening, and a server
	// whose discovery document names another issuer.
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	wrong := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"issuer":"https://elsewhere.example","authorization_endpoint":"https://elsewhere.example/a","token_endpoint":"https://elsewhere.example/t","jwks_uri":"https://elsewhere.example/k"}`))
	}))
	defer wrong.Close()
	notJSON := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<html>a login page</html>"))
	}))
	defer notJSON.Close()
	idp := authtest.Start(t, authtest.Client{ID: "folio", Secret: "s3cret", Redirects: []string{"http://127.0.0.1:1" + auth.CallbackPath}})

	for _, tc := range []struct {
		name   string
		env    string // FOLIO_OIDC_CLIENT_SECRET
		args   []string
		code   int
		wants  []string
		absent string // never in the message (the secret)
	}{
		{"client id without issuer", "s3cret", []string{"--oidc-client-id", "folio"}, 2, []string{"--oidc-client-id needs --oidc-issuer"}, ""},
		{"issuer without client id", "s3cret", []string{"--oidc-issuer", idp.Issuer}, 2, []string{"--oidc-issuer needs --oidc-client-id"}, ""},
		{"secret as a flag", "", []string{"--oidc-issuer", idp.Issuer, "--oidc-client-id", "folio", "--oidc-client-secret", "hunter2hunter2"}, 2,
			[]string{"--oidc-client-secret", "never a flag", "FOLIO_OIDC_CLIENT_SECRET", "--oidc-client-secret-file"}, "hunter2hunter2"},
		{"secret as a flag, with =", "", []string{"--oidc-client-secret=hunter2hunter2"}, 2, []string{"never a flag"}, "hunter2hunter2"},
		{"no secret", "", []string{"--oidc-issuer", idp.Issuer, "--oidc-client-id", "folio"}, 2,
			[]string{"FOLIO_OIDC_CLIENT_SECRET", "--oidc-client-secret-file", "--oidc-public-client"}, ""},
		{"public client with a secret", "s3cret", []string{"--oidc-issuer", idp.Issuer, "--oidc-client-id", "folio", "--oidc-public-client"}, 2,
			[]string{"--oidc-public-client", "FOLIO_OIDC_CLIENT_SECRET"}, "s3cret"},
		{"missing secret file", "", []string{"--oidc-issuer", idp.Issuer, "--oidc-client-id", "folio", "--oidc-client-secret-file", secretFile + ".nope"}, 2,
			[]string{"--oidc-client-secret-file", "secret.nope"}, ""},
		{"empty secret file", "", []string{"--oidc-issuer", idp.Issuer, "--oidc-client-id", "folio", "--oidc-client-secret-file", emptyFile}, 2,
			[]string{"--oidc-client-secret-file", "empty"}, ""},
		{"token with sign-in", "s3cret", []string{"--oidc-issuer", idp.Issuer, "--oidc-client-id", "folio", "--token", "0123456789abcdefgh"}, 2,
			[]string{"--token", "--oidc-issuer"}, "0123456789abcdefgh"},
		{"issuer not a URL", "s3cret", []string{"--oidc-issuer", "id.example.com", "--oidc-client-id", "folio"}, 1,
			[]string{"--oidc-issuer", "id.example.com", "not an http(s) URL"}, "s3cret"},
		{"issuer unreachable", "s3cret", []string{"--oidc-issuer", closed.URL, "--oidc-client-id", "folio"}, 1,
			[]string{"--oidc-issuer", closed.URL, "cannot be used"}, "s3cret"},
		{"discovery names another issuer", "s3cret", []string{"--oidc-issuer", wrong.URL, "--oidc-client-id", "folio"}, 1,
			[]string{"--oidc-issuer", wrong.URL, "elsewhere.example"}, "s3cret"},
		{"discovery not JSON", "s3cret", []string{"--oidc-issuer", notJSON.URL, "--oidc-client-id", "folio"}, 1,
			[]string{"--oidc-issuer", notJSON.URL}, "s3cret"},
		{"public url with a path", "s3cret", []string{"--oidc-issuer", idp.Issuer, "--oidc-client-id", "folio", "--public-url", "https://folio.example.com/app"}, 2,
			[]string{"--public-url", "https://folio.example.com/app", "no path"}, ""},
		{"public url not a URL", "s3cret", []string{"--oidc-issuer", idp.Issuer, "--oidc-client-id", "folio", "--public-url", "folio.example.com"}, 2,
			[]string{"--public-url", "folio.example.com"}, ""},
		{"non-loopback without public url", "s3cret", []string{"--addr", "0.0.0.0:0", "--oidc-issuer", idp.Issuer, "--oidc-client-id", "folio"}, 2,
			[]string{"needs --public-url"}, ""},
		{"admin without sign-in", "", []string{"--admin", "alice@example.com"}, 2, []string{"--admin needs --oidc-issuer"}, ""},
		{"public url without sign-in", "", []string{"--public-url", "https://folio.example.com"}, 2, []string{"--public-url needs --oidc-issuer"}, ""},
		{"secret file without sign-in", "", []string{"--oidc-client-secret-file", secretFile}, 2, []string{"--oidc-client-secret-file needs --oidc-issuer"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(secretEnv, tc.env)
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, tc.args...)
			out, errOut, err := run(t, args...)
			if got := exitCode(err); got != tc.code {
				t.Fatalf("exit %d (%v), want %d", got, err, tc.code)
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q does not say %q", err.Error(), w)
				}
			}
			if tc.absent != "" && strings.Contains(err.Error()+out+errOut, tc.absent) {
				t.Errorf("the secret %q is printed: %q %q %q", tc.absent, err.Error(), out, errOut)
			}
			if strings.Contains(out, "folio serving") {
				t.Errorf("serve started: %q", out)
			}
		})
	}
}

// TestServeSignInStarts: with a reachable issuer, the secret from the
// environment or a file, serve starts and says where people sign in; the
// secret is printed nowhere.
func TestServeSignInStarts(t *testing.T) {
	idp := authtest.Start(t, authtest.Client{ID: "folio", Secret: "s3cret-value", Redirects: []string{"https://folio.example.com" + auth.CallbackPath}})
	secretFile := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secretFile, []byte("s3cret-value\n"), 0o600)
	for _, tc := range []struct {
		env  string
		args []string
	}{
		{"s3cret-value", nil},
		{"", []string{"--oidc-client-secret-file", secretFile}},
	} {
		t.Setenv(secretEnv, tc.env)
		ctx, cancel := context.WithCancel(context.Background())
		out := &stopWhenServing{cancel: cancel} // serve stops once it has started
		var errOut strings.Builder
		args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--oidc-issuer", idp.Issuer,
			"--oidc-client-id", "folio", "--public-url", "https://folio.example.com", "--admin", "alice@example.com"}, tc.args...)
		err := Run(ctx, args, strings.NewReader(""), out, &errOut)
		cancel()
		if err != nil || !strings.Contains(out.String(), "open https://folio.example.com/ (people sign in through "+idp.Issuer+")") {
			t.Fatalf("serve: %v %q %q", err, out.String(), errOut.String())
		}
		if strings.Contains(out.String()+errOut.String(), "s3cret-value") {
			t.Fatal("the client secret is printed")
		}
	}
}

// stopWhenServing cancels serve's context once it printed that it serves.
type stopWhenServing struct {
	strings.Builder
	cancel func()
}

func (w *stopWhenServing) Write(p []byte) (int, error) {
	n, err := w.Builder.Write(p)
	if strings.Contains(w.String(), "folio serving") {
		w.cancel()
	}
	return n, err
}
