package proc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestRestartDelay(t *testing.T) {
	for n, want := range map[int]time.Duration{0: 0, 1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond, 50: restartMax} {
		if got := restartDelay(n); got != want {
			t.Errorf("restartDelay(%d) = %v, want %v", n, got, want)
		}
	}
}

func TestKillGroupStopsChildren(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 300 & echo $!; wait")
	NewGroup(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 32)
	n, _ := out.Read(buf)
	child := strings.TrimSpace(string(buf[:n]))
	KillGroup(cmd)
	_ = cmd.Wait()
	// The child was reparented; it is gone or a zombie once the kill lands.
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := exec.Command("ps", "-o", "stat=", "-p", child).Output()
		if err != nil || strings.HasPrefix(strings.TrimSpace(string(b)), "Z") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %s still runs: %s", child, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestMinimalEnv(t *testing.T) {
	env := map[string]string{"PATH": "/bin", "SECRET_TOKEN": "x", "HOME": "/h"}
	got := strings.Join(MinimalEnv(func(k string) string { return env[k] }, "FOLIO_MCP=1"), " ")
	if got != "FOLIO_MCP=1 PATH=/bin HOME=/h" {
		t.Fatalf("%s", got)
	}
}

// When folio dies without stopping a tool process (SIGKILL), the process
// dies too. The test runs itself as the "folio" that starts a sleep and is
// killed.
func TestProcessDiesWithFolio(t *testing.T) {
	if os.Getenv("PROC_TEST_PARENT") == "1" {
		cmd := exec.Command("sleep", "300")
		NewGroup(cmd)
		if err := cmd.Start(); err != nil {
			os.Exit(2)
		}
		fmt.Println(cmd.Process.Pid)
		select {} // until killed
	}
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's")
	}
	parent := exec.Command(os.Args[0], "-test.run=^TestProcessDiesWithFolio$")
	parent.Env = append(os.Environ(), "PROC_TEST_PARENT=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	child := strings.TrimSpace(line)
	_ = parent.Process.Kill()
	_ = parent.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := exec.Command("ps", "-o", "stat=", "-p", child).Output()
		if err != nil || strings.HasPrefix(strings.TrimSpace(string(b)), "Z") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tool process %s outlived its killed parent", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
