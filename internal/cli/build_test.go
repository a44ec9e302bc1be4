package cli

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// make build writes a stripped binary that reports the version it was
// stamped with.
func TestMakeBuildIsStrippedAndVersioned(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	bin := filepath.Join(t.TempDir(), "folio")
	cmd := exec.Command("make", "-C", "../..", "build", "BIN="+bin, "VERSION=9.8.7-test")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || strings.TrimSpace(string(out)) != "folio 9.8.7-test" {
		t.Errorf("folio --version: %q, %v", out, err)
	}
	if runtime.GOOS != "linux" {
		return
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, name := range []string{".symtab", ".debug_info", ".zdebug_info"} {
		if f.Section(name) != nil {
			t.Errorf("the binary has %s: not stripped", name)
		}
	}
	if fi, err := os.Stat(bin); err == nil {
		t.Logf("make build: %d bytes", fi.Size())
	}
}
