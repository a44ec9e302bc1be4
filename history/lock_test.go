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
