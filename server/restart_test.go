package server

import (
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/provider/demo"
	"github.com/foliodev/folio/transcript"
)

// TestResendAfterKillAnswersTheFirstReceipt: send, kill the server with
// SIGKILL in the middle of the turn, start another on the same data folder
// and send the same command ID again. The answer is the first command's
// receipt (the turn was interrupted), no second turn starts, and the log
// holds one user entry.
func TestResendAfterKillAnswersTheFirstReceipt(t *testing.T) {
	if os.Getenv("FOLIO_TEST_RESTART_CHILD") != "" {
		turns, err := NewTurns(TurnsOptions{Provider: demo.New(demo.Options{TokensPerSecond: 10}), Model: "demo", Workspace: t.TempDir()})
		must(t, err)
		s, err := New(Options{DataDir: os.Getenv("FOLIO_TEST_DATA"), TempDir: t.TempDir(), Engine: turns})
		must(t, err)
		hs := httptest.NewServer(s.Handler())
		fmt.Println("ready", hs.URL)
		select {} // until killed
	}
	data := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestResendAfterKillAnswersTheFirstReceipt$")
	cmd.Env = append(os.Environ(), "FOLIO_TEST_RESTART_CHILD=1", "FOLIO_TEST_DATA="+data)
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line := ""
	buf := make([]byte, 4096)
	for !strings.Contains(line, "\n") {
		n, err := out.Read(buf)
		if err != nil {
			t.Fatalf("child: %v (%q)", err, line)
		}
		line += string(buf[:n])
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "ready ")
	if !ok {
		t.Fatalf("child said %q", line)
	}
	child := &testServer{Server: &Server{}, url: url, data: data}
	id := child.create(t)
	c := child.dial(t)
	c.open(id)
	if r := c.send(id, "k1", "write a long essay"); r.State == StateRejected {
		t.Fatalf("send: %+v", r)
	}
	c.running()
	c.await(func(f frame) bool { return f.Type == "event" && strings.Contains(string(f.raw), `"kind":"agent"`) })
	must(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	ts, _ := newTurnsServer(t, 0, data)
	c2 := ts.dial(t)
	c2.open(id)
	r := c2.send(id, "k1", "write a long essay")
	if r.State != StateDone || r.Code != "failed" || r.Reason != engine.ReasonInterrupted {
		t.Fatalf("resend after the restart: %+v, want the first command's receipt (done, failed: interrupted)", r)
	}
	conv, err := history.ReadFile(ts.logOf(id))
	must(t, err)
	users := 0
	for _, e := range conv.Document.All() {
		if _, ok := e.Content.(transcript.User); ok {
			users++
		}
	}
	if users != 1 {
		t.Fatalf("the log holds %d user entries, want 1", users)
	}
	// And the receipt is there for a poll too.
	if r := c2.send(id, "k1", "write a long essay"); r.Code != "failed" {
		t.Fatalf("second resend: %+v", r)
	}
}
