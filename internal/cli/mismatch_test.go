package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each case is a mismatch between what a command said and what it did.
func TestCommandsDoWhatTheySay(t *testing.T) {
	t.Setenv("FOLIO_PROVIDER", "")
	t.Setenv("FOLIO_HOME", t.TempDir())
	dir := t.TempDir()
	log := writeTestLog(t, dir)

	t.Run("gen counts what --messages asked for as messages", func(t *testing.T) {
		out, _, err := run(t, "gen", "--messages", "300", "--out", filepath.Join(dir, "g.jsonl"))
		if err != nil || !strings.Contains(out, ": 300 messages as the chat shows them, ") {
			t.Fatalf("%v: %q", err, out)
		}
	})
	t.Run("gen refuses to overwrite without --force", func(t *testing.T) {
		path := filepath.Join(dir, "keep.jsonl")
		if err := os.WriteFile(path, []byte("precious\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, err := run(t, "gen", "--messages", "5", "--out", path)
		if exitCode(err) != 1 || !strings.Contains(err.Error(), "--force") {
			t.Fatalf("got %v, want exit 1 naming --force", err)
		}
		if b, _ := os.ReadFile(path); string(b) != "precious\n" {
			t.Fatalf("the file was overwritten: %q", b)
		}
		if _, _, err := run(t, "gen", "--messages", "5", "--out", path, "--force"); err != nil {
			t.Fatalf("--force: %v", err)
		}
	})
	t.Run("models --provider nope is a usage error", func(t *testing.T) {
		_, _, err := run(t, "models", "--provider", "nope")
		if exitCode(err) != 2 || !strings.Contains(err.Error(), `"nope"`) || !strings.Contains(err.Error(), "try: ") {
			t.Fatalf("got exit %d %v, want 2 naming the provider", exitCode(err), err)
		}
	})
	t.Run("log show --width -5 is a usage error", func(t *testing.T) {
		_, _, err := run(t, "log", "show", "--width", "-5", log)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), "--width") {
			t.Fatalf("got exit %d %v", exitCode(err), err)
		}
		if _, _, err := run(t, "run", "--width", "-5", "hi"); exitCode(err) != 2 {
			t.Fatalf("run --width -5: exit %d %v", exitCode(err), err)
		}
	})
	t.Run("serve --addr nonsense suggests an address, not a token", func(t *testing.T) {
		_, _, err := run(t, "serve", "--addr", "nonsense", "--data", dir)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if exitCode(err) != 2 || strings.Contains(msg, "--token") || !strings.Contains(msg, "try: folio serve --addr 127.0.0.1:") {
			t.Fatalf("got exit %d %q", exitCode(err), msg)
		}
	})
}
