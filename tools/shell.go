package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/foliodev/folio/tools/toolschema"
	"github.com/foliodev/folio/toolview"
)

// Shell limits.
const (
	DefaultShellTimeout = 2 * time.Minute
	maxShellTimeout     = 10 * time.Minute
	shellTailBytes      = 4 << 10  // shown in the live payload
	shellResultBytes    = 16 << 10 // head and tail each, in the model's result
)

// Shell runs a command with sh -c in Dir. Its primary presentation is the
// terminal output as an artifact (when the host has an artifact folder)
// checkpointed as it grows, with a bounded tail inline; the final
// checkpoint carries the exit status.
type Shell struct {
	Dir     string
	Timeout time.Duration // default DefaultShellTimeout
}

type shellArgs struct {
	Command   string `json:"command"`
	TimeoutMs int64  `json:"timeout_ms,omitzero"`
}

// Decl declares shell.
func (Shell) Decl() toolview.ToolDecl {
	return toolview.ToolDecl{
		Name:        "shell",
		Description: "Run a shell command (sh -c) in the workspace and return its combined output and exit status.",
		InputSchema: schema(`{"type":"object","properties":{"command":{"type":"string","minLength":1,"description":"the command line"},"timeout_ms":{"type":"integer","minimum":1,"maximum":600000}},"required":["command"],"additionalProperties":false}`),
	}
}

// NeedsApproval is true: a command can do anything the person can.
func (Shell) NeedsApproval() bool { return true }

// Preview is the command line as the running call shows it, without
// output yet.
func (Shell) Preview(raw []byte) (toolview.Payload, bool) {
	var a shellArgs
	if decode(raw, &a) != nil || a.Command == "" {
		return toolview.Payload{}, false
	}
	c, _ := clip(a.Command, maxPreviewBytes)
	return payload(toolschema.Shell, toolschema.ShellView{Command: c}), true
}

// Run runs the command.
func (s Shell) Run(ctx context.Context, inv *toolview.Invocation, raw []byte) (toolview.Result, error) {
	var a shellArgs
	if err := decode(raw, &a); err != nil {
		return toolview.Result{}, err
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultShellTimeout
	}
	if a.TimeoutMs > 0 {
		timeout = min(time.Duration(a.TimeoutMs)*time.Millisecond, maxShellTimeout)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cmd := exec.CommandContext(ctx, "sh", "-c", a.Command)
	cmd.Dir = s.Dir
	// Own process group, so cancelling kills the whole pipeline, not just sh.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw

	out := newShellOutput(inv, a.Command)
	if err := cmd.Start(); err != nil {
		pw.Close()
		return toolview.Result{Text: "could not start the command: " + err.Error(), IsError: true,
			Summary: "$ " + oneLine(a.Command)}, nil
	}
	out.publish(false, nil, false)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 32<<10)
		for {
			n, err := pr.Read(buf)
			if n > 0 {
				out.write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	werr := cmd.Wait()
	pw.Close()
	<-done

	exit := 0
	if cmd.ProcessState != nil {
		exit = cmd.ProcessState.ExitCode()
	}
	timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded)
	out.publish(true, &exit, timedOut)

	res := toolview.Result{Summary: "$ " + oneLine(a.Command), Text: out.result(exit, timedOut)}
	switch {
	case timedOut:
		res.IsError = true
	case ctx.Err() != nil:
		return res, context.Canceled
	case werr != nil && exit == 0:
		res.IsError = true // e.g. the pipe broke; exit unknown
	case exit != 0:
		res.IsError = true
	}
	return res, nil
}

// shellOutput collects output: the artifact (if any), a bounded head and
// tail for the model, and publishes checkpoints. The host coalesces them to
// its cadence, so publishing per read is cheap.
type shellOutput struct {
	inv     *toolview.Invocation
	command string
	art     *toolview.ArtifactWriter
	head    []byte
	tailBuf []byte
	total   int64
}

func newShellOutput(inv *toolview.Invocation, command string) *shellOutput {
	o := &shellOutput{inv: inv, command: command}
	if w, err := inv.Presentation().NewArtifact("text/plain; charset=utf-8"); err == nil {
		o.art = w
	}
	return o
}

func (o *shellOutput) write(b []byte) {
	o.total += int64(len(b))
	if o.art != nil {
		if _, err := o.art.Write(b); err != nil {
			o.art = nil // over the bound: keep going with the inline tail
		}
	}
	if room := shellResultBytes - len(o.head); room > 0 {
		o.head = append(o.head, b[:min(room, len(b))]...)
	}
	o.tailBuf = append(o.tailBuf, b...)
	if len(o.tailBuf) > 2*shellResultBytes {
		o.tailBuf = append(o.tailBuf[:0], o.tailBuf[len(o.tailBuf)-shellResultBytes:]...)
	}
	o.publish(false, nil, false)
}

func (o *shellOutput) publish(final bool, exit *int, timedOut bool) {
	out := tail(string(o.tailBuf), shellTailBytes)
	if timedOut {
		out += "\n[timed out; killed]"
	}
	v := toolschema.ShellView{Command: o.command, Output: out, ExitCode: exit}
	p := payload(toolschema.Shell, v)
	if o.art != nil {
		cp := o.art.Checkpoint(toolschema.Shell, 1, final)
		cp.Data = p.Data
		if _, err := o.inv.Presentation().ReplaceArtifact(cp); err == nil {
			return
		}
	}
	_, _ = o.inv.Presentation().Replace(p)
}

// result is what the model reads: exit status and the output, cut in the
// middle when long.
func (o *shellOutput) result(exit int, timedOut bool) string {
	var b strings.Builder
	switch {
	case timedOut:
		b.WriteString("timed out; killed\n")
	default:
		b.WriteString("exit status " + strconv.Itoa(exit) + "\n")
	}
	if o.total <= int64(len(o.head)) {
		b.Write(o.head)
		return b.String()
	}
	b.Write(o.head)
	t := tail(string(o.tailBuf), shellResultBytes)
	omitted := o.total - int64(len(o.head)) - int64(len(t))
	if omitted > 0 {
		fmt.Fprintf(&b, "\n… %d bytes omitted …\n", omitted)
		b.WriteString(t)
	} else {
		b.WriteString(string(o.tailBuf[len(o.tailBuf)-int(o.total-int64(len(o.head))):]))
	}
	return b.String()
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	c, cut := clip(s, 120)
	if cut {
		c += "…"
	}
	return c
}
