package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Inside tmux, finding out whether the terminal takes 24-bit color runs
// `tmux info`, a process that costs tens of milliseconds before the first
// screen. Lip Gloss asks once as folio starts; the fullscreen view reuses
// that answer instead of having Bubble Tea ask again. A tmux on PATH that
// logs its arguments counts the asks.
func TestFullscreenAsksTmuxForColorsOnce(t *testing.T) {
	real := needTmux(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "folio")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/foliodev/folio/cmd/folio").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	calls := filepath.Join(dir, "calls.txt")
	shim := filepath.Join(dir, "bin")
	script := "#!/bin/sh\necho \"$*\" >> " + calls + "\nexec " + real + " \"$@\"\n"
	if err := os.MkdirAll(shim, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shim, "tmux"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	x := tmux{t: t, socket: filepath.Join(dir, "tmux.sock")}
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", x.socket, "kill-server").Run() })
	// tmux sets the pane's PATH and TERM itself, so the shim goes on PATH
	// in the pane's command. Neither COLORTERM nor NO_COLOR is set: either
	// settles the question without asking tmux.
	cmd := "PATH=" + shim + ":$PATH COLORTERM= NO_COLOR= exec " + bin
	x.run("-f", "/dev/null", "new-session", "-d", "-s", "chat", "-x", "100", "-y", "30",
		"-e", "FOLIO_HOME="+filepath.Join(dir, "home"), "-e", "FOLIO_PROVIDER=", "-e", "FOLIO_MODEL=",
		"-c", dir, "sh", "-c", cmd)
	x.waitFor("ready")
	b, err := os.ReadFile(calls)
	if err != nil {
		t.Fatalf("folio never ran tmux (the shim is not on its PATH?): %v", err)
	}
	if n := strings.Count(string(b), "info"); n != 1 {
		t.Errorf("folio ran `tmux info` %d times before its first screen, want once:\n%s", n, b)
	}
}
