package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/foliodev/folio/history"
)

func TestGenWritesAReadableLog(t *testing.T) {
	out := filepath.Join(t.TempDir(), "g.jsonl")
	stdout, _, err := run(t, "gen", "--messages", "500", "--seed", "4", "--out", out)
	if err != nil || !strings.Contains(stdout, "500 messages") {
		t.Fatalf("gen: %q %v", stdout, err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	conv, err := history.Read(f)
	if err != nil || conv.Document.Len() != 500 || len(conv.Problems) != 0 {
		t.Fatalf("read back: %v", err)
	}
	if _, _, err := run(t, "gen", "--messages", "10"); !isUsage(err) {
		t.Fatalf("gen without --out: %v", err)
	}
}

func TestServeTokenFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no token on all interfaces", []string{"--addr", "0.0.0.0:7878", "--no-token"}, "non-loopback"},
		{"whitespace token", []string{"--token", "                    "}, "whitespace"},
		{"short token", []string{"--token", "s3cret"}, "at least 16"},
		{"both", []string{"--token", "0123456789abcdefgh", "--no-token"}, "contradict"},
		{"bad allowed host", []string{"--allowed-host", "a b"}, "not a host name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, append([]string{"serve", "--data", t.TempDir()}, tc.args...)...)
			if !isUsage(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a usage error saying %q", err, tc.want)
			}
		})
	}
	if _, _, err := run(t, "serve", "extra"); !isUsage(err) {
		t.Fatalf("stray argument: %v", err)
	}
}

// TestServePrintsTheTokenURL: by default a fresh token per launch, printed
// in the fragment of the URL to open; --no-token prints a bare URL.
func TestServePrintsTheTokenURL(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	urls := map[string]bool{}
	for range 2 {
		var out, errOut strings.Builder
		err := Run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, strings.NewReader(""), &out, &errOut)
		m := regexp.MustCompile(`open (http://127\.0\.0\.1:\d+/#token=([A-Za-z0-9_-]{32}))\n`).FindStringSubmatch(out.String())
		if err != nil || m == nil {
			t.Fatalf("serve: %v, %q", err, out.String())
		}
		urls[m[2]] = true
	}
	if len(urls) != 2 {
		t.Fatal("two launches printed the same token")
	}
	var out, errOut strings.Builder
	err := Run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--no-token", "--data", t.TempDir()}, strings.NewReader(""), &out, &errOut)
	if err != nil || !regexp.MustCompile(`open http://127\.0\.0\.1:\d+/\n`).MatchString(out.String()) {
		t.Fatalf("serve --no-token: %v, %q", err, out.String())
	}
}

func TestServeStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut strings.Builder
	err := Run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, strings.NewReader(""), &out, &errOut)
	if err != nil || !strings.Contains(out.String(), "folio serving") {
		t.Fatalf("serve: %v, %q", err, out.String())
	}
}

func isUsage(err error) bool {
	var ex ExitError
	return errors.As(err, &ex) && ex.Code == 2
}

func TestServeRejectsAnUnknownProvider(t *testing.T) {
	_, _, err := run(t, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--provider", "nosuch")
	if err == nil || !strings.Contains(err.Error(), `unknown provider "nosuch"`) {
		t.Fatalf("got %v", err)
	}
}
