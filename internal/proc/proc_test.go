package proc

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestRestartDelay(t *testing.T) {
	for n, want := range map[int]time.Duration{0: 0, 1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond, 50: RestartMax} {
		if got := RestartDelay(n); got != want {
			t.Errorf("RestartDelay(%d) = %v, want %v", n, got, want)
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
