package cli

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
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
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("make build: %d bytes", fi.Size())
	// The README says how large the binary is; it must stay true (within
	// a tenth) on the platform it names.
	if runtime.GOARCH != "amd64" {
		return
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)make build.{0,300}?about (\d+) MB`).FindSubmatch(readme)
	if m == nil {
		t.Fatal("the README does not say how large make build's binary is")
	}
	said, _ := strconv.ParseFloat(string(m[1]), 64)
	if got := float64(fi.Size()) / 1e6; got < said*0.9 || got > said*1.1 {
		t.Errorf("the README says make build writes about %v MB; it wrote %.1f MB", said, got)
	}
}
