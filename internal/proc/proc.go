// Package proc holds the process lifecycle pieces that folio's long-running
// tool servers share (MCP servers in package mcp, persistent plugins in
// package toolview/plugin): each runs in its own process group so stopping
// it stops its children, gets a small environment so folio's secrets do not
// leak, and is restarted after a crash only after a growing delay.
//
// Concurrency: the functions are safe for concurrent use.
package proc

import (
	"context"
	"errors"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Restart delays: the restart after the first crash waits restartBase, each
// further consecutive crash doubles it up to restartMax.
const (
	restartBase = 100 * time.Millisecond
	restartMax  = 10 * time.Second
)

// restartDelay is the wait before the restart that follows the n-th
// consecutive crash (n ≥ 1); 0 for n ≤ 0.
func restartDelay(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	d := restartBase
	for i := 1; i < n && d < restartMax; i++ {
		d *= 2
	}
	return min(d, restartMax)
}

// Backoff is the restart rule of one long-running process: a start that
// follows crashes waits restartDelay(consecutive crashes), counted from the
// latest crash, and a good call resets the count. The zero value is ready:
// no crash, no wait. It is safe for concurrent use.
type Backoff struct {
	mu      sync.Mutex
	crashes int
	last    time.Time
}

// Crashed records that the process ended without being asked to.
func (b *Backoff) Crashed() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.crashes++
	b.last = time.Now()
}

// Succeeded records a good call: the next crash waits the shortest delay.
func (b *Backoff) Succeeded() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.crashes = 0
}

// Wait blocks until a restart may start: at once without a crash since the
// last good call, else once the delay since the latest crash is over. It
// returns ctx's error if ctx ends first.
func (b *Backoff) Wait(ctx context.Context) error {
	b.mu.Lock()
	wait := time.Duration(0)
	if b.crashes > 0 {
		wait = restartDelay(b.crashes) - time.Since(b.last)
	}
	b.mu.Unlock()
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// NewGroup makes cmd start in a process group of its own, which KillGroup
// can then stop whole. Where the system can (Linux), the process is also
// killed if folio dies without stopping it (SIGKILL, a crash), since a
// process in its own group gets no hangup from the terminal.
func NewGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	parentDeath(cmd.SysProcAttr)
}

// KillGroup kills the process group cmd leads (cmd started after NewGroup).
// It is harmless when the group is gone or cmd never started.
func KillGroup(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		_ = cmd.Process.Kill()
	}
}

// MinimalEnv is the environment a tool process gets from folio's: PATH,
// HOME, LANG, LC_ALL, TMPDIR and USER where set, plus marker (such as
// "FOLIO_PLUGIN=1"). Anything else it needs its configuration names.
func MinimalEnv(getenv func(string) string, marker string) []string {
	env := []string{marker}
	for _, k := range []string{"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER"} {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}
