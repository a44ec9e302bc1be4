package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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

func TestServeRefusesNonLoopbackWithoutToken(t *testing.T) {
	_, _, err := run(t, "serve", "--addr", "0.0.0.0:7878", "--data", t.TempDir())
	if !isUsage(err) || !strings.Contains(err.Error(), "--token") {
		t.Fatalf("got %v", err)
	}
	if _, _, err := run(t, "serve", "extra"); !isUsage(err) {
		t.Fatalf("stray argument: %v", err)
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
