package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every log command that takes FILE|ID takes the IDs folio log ls prints,
// from the data folder --data names, in folio's layout and Jazz's alike.
func TestLogCommandsTakeListedIDs(t *testing.T) {
	data := t.TempDir()
	writeTestLog(t, data)
	jazz := filepath.Join(data, "conversations", "agent-1")
	if err := os.MkdirAll(jazz, 0o700); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("../../history/export/testdata/jazz/message-tool-use.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(jazz, "conv-1.jsonl"), src, 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "log", "ls", "--data", data)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		listed = append(listed, strings.Fields(l)[0])
	}
	if len(listed) != 2 {
		t.Fatalf("ls:\n%s", out)
	}
	for _, id := range listed {
		for _, args := range [][]string{
			{"log", "show", id},
			{"log", "validate", id},
			{"log", "export", "--format", "markdown", id},
			{"log", "export", "--format", "log", id},
			{"log", "upgrade", id},
			{"log", "compact", id},
		} {
			args = append(args, "--data", data)
			out, errOut, err := run(t, args...)
			if err != nil {
				t.Errorf("folio %s: %v\n%s", strings.Join(args, " "), err, errOut)
				continue
			}
			if strings.TrimSpace(out) == "" {
				t.Errorf("folio %s printed nothing", strings.Join(args, " "))
			}
		}
	}
	// The data folder comes from the environment as for ls.
	t.Setenv("FOLIO_HOME", data)
	if _, _, err := run(t, "log", "validate", "c1"); err != nil {
		t.Errorf("validate with FOLIO_HOME: %v", err)
	}
	// An ID the data folder does not hold is a usage error naming where it
	// was looked for, and how to see the IDs there are.
	for _, cmd := range []string{"show", "validate", "upgrade", "compact"} {
		_, _, err := run(t, "log", cmd, "--data", data, "20991231-000000-ffffff")
		if exitCode(err) != 2 || !strings.Contains(err.Error(), filepath.Join(data, "conversations")) ||
			!strings.Contains(err.Error(), "try: folio log ls --data "+data) {
			t.Errorf("%s of an unknown ID: exit %d %v", cmd, exitCode(err), err)
		}
	}
}
