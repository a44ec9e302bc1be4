//go:build linux

package cli

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/server/client"
	"github.com/foliodev/folio/transcript"
)

// otherUID is the user the owner runs as: nobody.
const otherUID = 65534

// TestAttachRefusedForAnotherUserInTmux: the owner is folio serve running
// as another user (nobody), with a turn running in a conversation of a
// data folder both users can reach. The kernel's credentials of a process
// of this user refuse it at the owner's endpoint (peer-not-allowed, both
// users named), and this user's folio --resume does not attach to the
// owner: it is refused the conversation as locked by the owner's process,
// as before attaching existed, and the owner's log holds nothing of it.
// It needs root, to start a process as another user.
func TestAttachRefusedForAnotherUserInTmux(t *testing.T) {
	needTmux(t)
	if os.Getuid() != 0 {
		t.Skip("starting the owner as another user needs root")
	}
	// The binary and the data folder, where the other user can reach them.
	root := shortTempDir(t, "fu")
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "folio")
	b, err := os.ReadFile(buildFolio(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, "data")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, otherUID, otherUID); err != nil {
		t.Fatal(err)
	}

	serve := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--no-token", "--data", home)
	serve.Dir = root
	serve.Env = append(os.Environ(), "HOME="+root, "FOLIO_DEMO_RATE=15", "FOLIO_PROVIDER=", "FOLIO_MODEL=", "FOLIO_BASE_URL=")
	serve.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: otherUID, Gid: otherUID}}
	out, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	serve.Stderr = serve.Stdout
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = serve.Process.Kill()
		_ = serve.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`open (http://127\.0\.0\.1:\d+)/`)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	var base string
	select {
	case base = <-addr:
	case <-time.After(paneWait):
		t.Fatal("folio serve as another user printed no address")
	}

	// A turn the owner runs, started over TCP (which admits by token, and
	// this server needs none), so the owner holds the conversation's lock.
	c, err := client.Dial(t.Context(), base, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	id, err := c.Create(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	st := transcript.NewStore()
	cv, err := c.Open(t.Context(), id, st)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cv.Send(t.Context(), "k1", "write a long essay about streaming", false); err != nil {
		t.Fatal(err)
	}
	wait(t, "the owner's reply to stream", func() bool {
		s := st.Snapshot()
		return s.Document.Len() > s.Document.Settled()
	})
	path, err := history.Locate(home, id)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Sys().(*syscall.Stat_t).Uid != otherUID {
		t.Fatalf("the conversation's log is not the other user's: %v", err)
	}

	// The endpoint refuses this user's process by its credentials.
	ep := history.EndpointPath(home, serve.Process.Pid)
	_, err = client.DialLocal(t.Context(), ep)
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Code != "peer-not-allowed" ||
		!strings.Contains(ce.Message, fmt.Sprintf("serves only user %d", otherUID)) ||
		!strings.Contains(ce.Message, fmt.Sprintf("runs as user %d", os.Getuid())) {
		t.Fatalf("dialing another user's endpoint: %v, want peer-not-allowed naming both users", err)
	}

	// This user's terminal is refused the conversation, not attached.
	x := chatInTmux(t, bin, home, "--resume", id)
	x.waitPane("the terminal to be refused", paneWait, func(p string) bool {
		return strings.Contains(x.stderr(), fmt.Sprintf("being written by folio process %d", serve.Process.Pid)) ||
			strings.Contains(p, fmt.Sprintf("being written by folio process %d", serve.Process.Pid))
	})
	if p := x.pane(); strings.Contains(p, "attached to") {
		t.Fatalf("the terminal attached to another user's process:\n%s", p)
	}
	if _, ok := st.Snapshot().Live.Turn(); !ok {
		t.Fatal("the owner's turn ended before the terminal tried; the test needs a slower demo rate")
	}
	for _, e := range logEntries(t, home, id) {
		if u, ok := e.Content.(transcript.User); ok && !strings.Contains(u.Text, "long essay") {
			t.Errorf("the owner's log holds a user entry it was not sent: %q", u.Text)
		}
	}
}

// stderr is what the pane's program wrote to its standard error
// (chatInTmux sends it to a file beside the tmux socket).
func (x tmux) stderr() string {
	b, _ := os.ReadFile(filepath.Join(filepath.Dir(x.socket), "stderr.txt"))
	return string(b)
}
