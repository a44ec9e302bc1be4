package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/foliodev/folio/history"
)

// A log a crash tore fails validate, whose hint names folio log repair;
// repair (by the ID ls prints) moves the bad lines to the side file, and
// the log validates from then on; a second repair does nothing.
func TestLogRepair(t *testing.T) {
	data := t.TempDir()
	path := writeTestLog(t, data)
	appendLine(t, path, "not a record")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"ui-append","at":"2026-`)
	f.Close()

	_, _, err = run(t, "log", "validate", path)
	if exitCode(err) != 1 || !strings.Contains(err.Error(), "folio log repair "+path) {
		t.Fatalf("validate of a torn log: exit %d %v", exitCode(err), err)
	}
	out, errOut, err := run(t, "log", "repair", "--data", data, "c1")
	if err != nil {
		t.Fatalf("repair: %v\n%s", err, errOut)
	}
	if !strings.Contains(out, "moved 2 line(s)") || !strings.Contains(out, history.RemovedPath(path)) {
		t.Errorf("repair said:\n%s", out)
	}
	side, err := os.ReadFile(history.RemovedPath(path))
	if err != nil || string(side) != "not a record\n"+`{"type":"ui-append","at":"2026-`+"\n" {
		t.Errorf("side file %q, %v", side, err)
	}
	if out, _, err := run(t, "log", "validate", path); err != nil {
		t.Errorf("validate after repair: %v\n%s", err, out)
	}
	out, _, err = run(t, "log", "repair", path)
	if err != nil || !strings.Contains(out, "nothing to repair") {
		t.Errorf("second repair: %v\n%s", err, out)
	}
}
