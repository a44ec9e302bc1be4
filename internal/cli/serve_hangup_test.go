package cli

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/server/client"
)

// A hang-up stops folio serve as ctrl+c does (exit 0, its socket for
// other folio processes removed), unless it was started under nohup:
// there it keeps serving, since asking for the signal would undo nohup.
func TestServeStopsOnHangUpUnlessNohup(t *testing.T) {
	nohup, err := exec.LookPath("nohup")
	if err != nil || exec.Command("env", "--default-signal=HUP", "true").Run() != nil {
		t.Skip("needs nohup and an env with --default-signal (GNU coreutils 8.31 or later)")
	}
	bin := buildFolio(t)
	for _, under := range []bool{false, true} {
		t.Run(fmt.Sprintf("nohup=%v", under), func(t *testing.T) {
			home := shortTempDir(t, "fh")
			args := []string{bin, "serve", "--addr", "127.0.0.1:0", "--no-token", "--data", home}
			// Both exec folio, so it is the process started here. env sets
			// the hang-up's default disposition: a test run itself started
			// under nohup would hand the signal down ignored.
			if under {
				args = append([]string{nohup}, args...)
			} else {
				args = append([]string{"env", "--default-signal=HUP"}, args...)
			}
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Env = append(os.Environ(), "FOLIO_PROVIDER=", "FOLIO_MODEL=", "FOLIO_BASE_URL=")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			path := history.EndpointPath(home, cmd.Process.Pid)
			dial := func() (*client.Conn, error) {
				var err error
				for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
					var c *client.Conn
					if c, err = client.DialLocal(t.Context(), path); err == nil {
						return c, nil
					}
				}
				return nil, err
			}
			c, err := dial()
			if err != nil {
				t.Fatalf("folio serve's endpoint %s: %v", path, err)
			}
			c.Close()
			if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
				t.Fatal(err)
			}
			if !under {
				select {
				case err := <-exited:
					if err != nil {
						t.Fatalf("after a hang-up folio serve ended with %v, want a clean exit", err)
					}
				case <-time.After(30 * time.Second):
					t.Fatal("folio serve did not stop on a hang-up")
				}
				if _, err := os.Stat(path); !os.IsNotExist(err) {
					t.Errorf("the endpoint %s is left behind (%v)", path, err)
				}
				return
			}
			// Still serving: a new connection creates a conversation.
			c, err = dial()
			if err != nil {
				t.Fatalf("folio serve under nohup stopped on a hang-up: %v", err)
			}
			defer c.Close()
			if _, err := c.Create(t.Context()); err != nil {
				t.Fatalf("folio serve under nohup after a hang-up: %v", err)
			}
			select {
			case err := <-exited:
				t.Fatalf("folio serve under nohup exited after a hang-up: %v", err)
			default:
			}
			_ = cmd.Process.Signal(syscall.SIGTERM)
			<-exited
		})
	}
}
