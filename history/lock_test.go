package history

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain lets the test binary act as a second folio process holding a
// log's lock: with FOLIO_HISTORY_HOLD set it opens that log, says "locked",
// and holds the lock until its standard input closes.
func TestMain(m *testing.M) {
	if path := os.Getenv("FOLIO_HISTORY_HOLD"); path != "" {
		l, err := Open(path)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		bufio.NewReader(os.Stdin).ReadString('\n') // until the parent closes stdin
		l.Close()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestSecondWriterInProcessIsRefused(t *testing.T) {
	t.Parallel()
	path := logPath(t)
	l := open(t, path)
	if err := l.Save(doc(t, user("u", "x")), nil); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, path)
	_, err := Open(path)
	var le *LockedError
	if !errors.Is(err, ErrLocked) || !errors.As(err, &le) || le.PID != os.Getpid() {
		t.Fatalf("got %v, want a LockedError naming pid %d", err, os.Getpid())
	}
	if !strings.Contains(err.Error(), fmt.Sprint(os.Getpid())) || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %q does not name the holder and the log", err)
	}
	if string(readFile(t, path)) != string(before) {
		t.Fatal("refused writer touched the log")
	}
	l.Close()
	l2, err := Open(path)
	if err != nil {
		t.Fatalf("after Close: %v", err)
	}
	l2.Close()
}

func TestSecondWriterInAnotherProcessIsRefused(t *testing.T) {
	t.Parallel()
	path := logPath(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FOLIO_HISTORY_HOLD="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("helper said %q, %v", line, err)
	}
	_, err = Open(path)
	var le *LockedError
	if !errors.As(err, &le) || le.PID != cmd.Process.Pid {
		t.Fatalf("got %v, want a LockedError naming pid %d", err, cmd.Process.Pid)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	l, err := Open(path)
	if err != nil {
		t.Fatalf("after the holder exited: %v", err)
	}
	l.Close()
}

// Close removes the lock file, also when nothing was ever saved, so a data
// folder holds no *.lock once its writers are gone.
func TestCloseLeavesNoLockFile(t *testing.T) {
	t.Parallel()
	for _, save := range []bool{false, true} {
		path := logPath(t)
		l := open(t, path)
		if _, err := os.Stat(path + ".lock"); err != nil {
			t.Fatalf("no lock file while open: %v", err)
		}
		if save {
			if err := l.Save(doc(t, user("u", "x")), nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path + ".lock"); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("save=%v: lock file still there after Close: %v", save, err)
		}
	}
}

// A writer killed while holding the log leaves its lock file; the next
// Open takes it over and says whose it was.
func TestLockOfAKilledWriterIsTakenOver(t *testing.T) {
	t.Parallel()
	path := logPath(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FOLIO_HISTORY_HOLD="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("helper said %q, %v", line, err)
	}
	pid := cmd.Process.Pid
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if _, err := os.Stat(path + ".lock"); err != nil {
		t.Fatalf("the killed writer's lock file is gone (%v); the test needs it", err)
	}
	l, err := Open(path)
	if err != nil {
		t.Fatalf("Open after the holder was killed: %v", err)
	}
	if got := l.TookOverFrom(); got != pid {
		t.Errorf("TookOverFrom = %d, want the killed writer's %d", got, pid)
	}
	l.Close()
	if _, err := os.Stat(path + ".lock"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lock file still there after Close: %v", err)
	}
	l2 := open(t, path)
	if l2.TookOverFrom() != 0 {
		t.Errorf("a clean reopen reports a takeover from %d", l2.TookOverFrom())
	}
	l2.Close()
}
