package server

import (
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

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
	childServer(t)
	data := t.TempDir()
	cmd, url := startChildServer(t, "TestResendAfterKillAnswersTheFirstReceipt", data)
	child := &testServer{Server: &Server{}, url: url, data: data}
	id := child.create(t)
	c := child.dial(t)
	c.open(id)
	if r := c.send(id, "k1", "write a long essay"); r.State == transcript.CommandRejected {
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
	if r.State != transcript.CommandFailed || r.Reason != engine.ReasonInterrupted {
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
	if r := c2.send(id, "k1", "write a long essay"); r.State != transcript.CommandFailed {
		t.Fatalf("second resend: %+v", r)
	}
}

// childServer, in the child process startChildServer runs, serves a Turns
// server with a slow demo model on the data folder it was given, until it
// is killed. In the test process it returns at once.
func childServer(t *testing.T) {
	if os.Getenv("FOLIO_TEST_RESTART_CHILD") == "" {
		return
	}
	turns := &TurnsOptions{Provider: demo.New(demo.Options{TokensPerSecond: 20}), Model: "demo", Workspace: t.TempDir()}
	s, err := New(Options{DataDir: os.Getenv("FOLIO_TEST_DATA"), TempDir: t.TempDir(), Turns: turns})
	must(t, err)
	hs := httptest.NewServer(s.Handler())
	fmt.Println("ready", hs.URL)
	select {} // until killed
}

// startChildServer runs test (which calls childServer first) in a child
// process serving data, and returns it and its URL.
func startChildServer(t *testing.T, test, data string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
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
	return cmd, url
}

// TestKillMidAnswerKeepsThePartialAnswer: a long demo answer streams, the
// server is killed with SIGKILL once the log holds part of it; the log
// validates and holds the partial answer, and the next server settles it
// under one interrupted notice without restarting anything.
func TestKillMidAnswerKeepsThePartialAnswer(t *testing.T) {
	childServer(t)
	data := t.TempDir()
	cmd, url := startChildServer(t, "TestKillMidAnswerKeepsThePartialAnswer", data)
	child := &testServer{Server: &Server{}, url: url, data: data}
	id := child.create(t)
	c := child.dial(t)
	c.open(id)
	c.send(id, "k1", "write a long essay")
	c.running()
	// The process is another one: polling its log is how to see it. The
	// answer is saved at least every 2 s while it streams.
	partial := func() string {
		conv, err := history.ReadFile(child.logOf(id))
		if err != nil {
			return ""
		}
		for _, e := range conv.Document.All() {
			if a, ok := e.Content.(transcript.Agent); ok {
				return a.Markdown
			}
		}
		return ""
	}
	deadline := time.Now().Add(time.Minute)
	for partial() == "" {
		if time.Now().After(deadline) {
			t.Fatal("no part of the answer reached the log while it streamed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	must(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	conv, err := history.ReadFile(child.logOf(id))
	must(t, err)
	for _, p := range conv.Problems {
		if p.Kind != history.ProblemTorn {
			t.Fatalf("the killed server's log does not validate: %+v", conv.Problems)
		}
	}
	kept := partial()
	if kept == "" {
		t.Fatal("the partial answer is gone")
	}

	ts, _ := newTurnsServer(t, 0, data)
	c2 := ts.dial(t)
	c2.open(id)
	c2.send(id, "k2", "hello")
	c2.finished("k2")
	conv, err = history.ReadFile(ts.logOf(id))
	must(t, err)
	if len(conv.Problems) != 0 {
		t.Fatalf("problems after the restart: %+v", conv.Problems)
	}
	var ks []string
	notices := 0
	for _, e := range conv.Document.All() {
		ks = append(ks, string(e.Content.Kind()))
		if n, ok := e.Content.(transcript.Notice); ok && n.Text == history.InterruptedNotice {
			notices++
		}
	}
	got := strings.Join(ks, " ")
	if notices != 1 || !strings.HasPrefix(got, "user reasoning agent notice user") {
		t.Fatalf("after the restart: %s (%d interrupted notices)", got, notices)
	}
	if a := conv.Document.At(2).Content.(transcript.Agent); !strings.HasPrefix(a.Markdown, kept) {
		t.Fatalf("the settled answer %q does not start with what was saved %q", a.Markdown, kept)
	}
}
