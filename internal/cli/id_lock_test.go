package cli

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/foliodev/folio/history"
)

// A log whose header carries another ID (folio gen writes gen-<seed>) is
// listed under its file name, which is what --resume and the server take:
// the ID folio log ls prints opens the conversation.
func TestLogListIDIsTheOneResumeTakes(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	path := filepath.Join(data, "conversations", "planning.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, errOut, err := run(t, "gen", "--messages", "20", "--out", path); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	out, _, err := run(t, "log", "ls", "--data", data)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("ls:\n%s", out)
	}
	id := strings.Fields(lines[1])[0]
	if id != "planning" {
		t.Errorf("folio log ls lists %q, want the file's name planning:\n%s", id, out)
	}
	s := fastSession(t, data)
	defer s.close()
	if err := s.resume(id); err != nil {
		t.Fatalf("--resume %s (the listed ID): %v", id, err)
	}
	list, err := s.list()
	if err != nil || len(list) != 1 || list[0].ID != "planning" {
		t.Fatalf("the /resume picker lists %+v, %v; want ID planning", list, err)
	}
}

// locks lists the lock files under dir.
func locks(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".lock") {
			found = append(found, p)
		}
		return nil
	})
	return found
}

// Every command that writes a log leaves no lock file behind, whether it
// succeeds or fails.
func TestNoLockFileAfterAnyCommand(t *testing.T) {
	work, data := demoEnv(t)
	conv := filepath.Join(data, "conversations")
	good := filepath.Join(conv, "good.jsonl")
	if err := os.MkdirAll(conv, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "gen", "--messages", "30", "--out", good); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(conv, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("not a log\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	runLog := filepath.Join(data, "run.jsonl")
	tests := []struct {
		args []string
		ok   bool
	}{
		{[]string{"log", "upgrade", good}, true},
		{[]string{"log", "compact", good}, true},
		{[]string{"log", "compact", good}, true}, // nothing to do
		{[]string{"log", "upgrade", bad}, false},
		{[]string{"log", "compact", bad}, false},
		{[]string{"log", "upgrade", filepath.Join(conv, "missing.jsonl")}, false},
		{[]string{"log", "validate", good}, true},
		{[]string{"log", "show", good}, true},
		{[]string{"log", "ls", "--data", data}, true},
		{[]string{"run", "--dir", work, "--data", data, "--log", runLog, "hello"}, true},
		{[]string{"run", "--dir", work, "--data", data, "--log", runLog, "/demo fail rate-limit"}, false},
		{[]string{"run", "--dir", work, "--data", data, "--log", bad, "hello"}, false},
	}
	for _, tt := range tests {
		_, errOut, err := run(t, tt.args...)
		if (err == nil) != tt.ok {
			t.Errorf("folio %s: %v (want ok=%v)\n%s", strings.Join(tt.args, " "), err, tt.ok, errOut)
		}
		if l := locks(t, data); len(l) > 0 {
			t.Errorf("after folio %s: lock files left: %v", strings.Join(tt.args, " "), l)
		}
	}
	// A chat that sends nothing, and one that resumes and closes.
	s := fastSession(t, data)
	if err := s.resume("good"); err != nil {
		t.Fatal(err)
	}
	s.close()
	fastSession(t, data).close()
	if l := locks(t, data); len(l) > 0 {
		t.Errorf("after two chat sessions: lock files left: %v", l)
	}
	if _, err := history.ReadFile(good); err != nil {
		t.Fatal(err)
	}
}

// The real binary stopped by SIGINT or SIGTERM in the middle of a turn
// removes its lock file on the way out and says the turn was stopped.
func TestSignalLeavesNoLockFile(t *testing.T) {
	bin := buildFolio(t)
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		data := t.TempDir()
		log := filepath.Join(data, "conversations", "c.jsonl")
		cmd := exec.Command(bin, "run", "--dir", data, "--data", data, "--log", log, "tell me about folio")
		cmd.Env = append(os.Environ(), "FOLIO_HOME=", "FOLIO_PROVIDER=demo", "FOLIO_DEMO_RATE=5")
		var errOut strings.Builder
		cmd.Stderr = &errOut
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The first printed line is the prompt: by then the log is open.
		if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
			t.Fatalf("no output from folio run: %v\n%s", err, errOut.String())
		}
		if _, err := os.Stat(log + ".lock"); err != nil {
			t.Fatalf("no lock file while the turn runs: %v", err)
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		go io.Copy(io.Discard, stdout)
		err = cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(errOut.String(), "stopped") {
			t.Errorf("%v: exit %v, stderr %q; want exit 1 saying the turn was stopped", sig, err, errOut.String())
		}
		if l := locks(t, data); len(l) > 0 {
			t.Errorf("after %v: lock files left: %v", sig, l)
		}
	}
}

// buildFolio builds the folio binary into a temporary folder.
func buildFolio(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "folio")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/foliodev/folio/cmd/folio").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// A lock file left by a folio process that no longer runs is taken over,
// and the command says so on standard error.
func TestStaleLockIsTakenOverWithANotice(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "conversations", "c.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "gen", "--messages", "10", "--out", path); err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skipf("no true to make a dead PID: %v", err)
	}
	pid := dead.Process.Pid
	if err := os.WriteFile(path+".lock", []byte(strconv.Itoa(pid)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := run(t, "log", "compact", path)
	if err != nil {
		t.Fatalf("compact over a stale lock: %v\n%s", err, errOut)
	}
	if !strings.Contains(errOut, "process "+strconv.Itoa(pid)+", which is no longer running") {
		t.Errorf("no takeover notice on stderr: %q", errOut)
	}
	if l := locks(t, dir); len(l) > 0 {
		t.Errorf("lock files left: %v", l)
	}
}
