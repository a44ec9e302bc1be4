package plugin

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/internal/proc"
	"github.com/foliodev/folio/toolview"
)

// methodCancel is the notification a persistent plugin gets when folio
// gives up on a call (the turn was stopped): {"call": id}. The plugin may
// stop the work; whatever it still prints for the call is ignored.
const methodCancel = "tools/cancel"

// process is a persistent plugin's running executable and the calls in
// flight on it, by request ID.
type process struct {
	cmd     *exec.Cmd
	maxLine int

	wmu   sync.Mutex // one request line at a time
	stdin io.WriteCloser

	mu     sync.Mutex
	calls  map[int]*pending
	exited chan struct{} // closed when the output ends
	reaped chan struct{} // closed once the process is waited for
}

type pending struct {
	s    *session
	done chan callDone // buffered: the reader never waits
}

type callDone struct {
	res toolview.Result
	err error
}

// callPersistent sends one call to the plugin's process, starting it (or
// restarting it after a crash, once the backoff has passed) if needed,
// and waits for its result. Calls run concurrently; the plugin answers
// each by ID.
func (p *Plugin) callPersistent(ctx context.Context, inv *toolview.Invocation, args []byte) (toolview.Result, error) {
	id := int(p.nextID.Add(1))
	req, err := p.request(inv, args, id)
	if err != nil {
		return toolview.Result{}, err
	}
	pr, err := p.running(ctx, int(inv.PayloadLimit())+lineOverhead)
	if err != nil {
		if ctx.Err() != nil {
			return toolview.Result{Text: "the tool call was canceled", IsError: true}, ctx.Err()
		}
		return toolview.Result{Text: "the plugin could not be started", IsError: true},
			&toolview.Failure{Reason: "plugin_unavailable", Err: err}
	}
	pd := &pending{s: newSession(inv, id), done: make(chan callDone, 1)}
	if !pr.add(id, pd) {
		return exitedResult()
	}
	if err := pr.write(append(req, '\n')); err != nil {
		pr.remove(id)
		return exitedResult()
	}
	select {
	case d := <-pd.done:
		if d.err == nil {
			p.backoff.Succeeded()
		}
		return d.res, d.err
	case <-ctx.Done():
		if pr.remove(id) {
			line, _ := json.Marshal(cancelNote{JSONRPC: "2.0", Method: methodCancel, Params: cancelParams{Call: id}})
			_ = pr.write(append(line, '\n'))
		}
		return toolview.Result{Text: "the tool call was canceled", IsError: true}, ctx.Err()
	}
}

type cancelNote struct {
	JSONRPC string       `json:"jsonrpc"`
	Method  string       `json:"method"`
	Params  cancelParams `json:"params"`
}

type cancelParams struct {
	Call int `json:"call"`
}

func exitedResult() (toolview.Result, error) {
	return toolview.Result{Text: "the plugin exited without a result", IsError: true},
		&toolview.Failure{Reason: "plugin_exited", Err: ErrNoResult}
}

// running returns the live process, starting one if there is none.
func (p *Plugin) running(ctx context.Context, maxLine int) (*process, error) {
	p.startMu.Lock()
	defer p.startMu.Unlock()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	if p.proc != nil {
		pr := p.proc
		p.mu.Unlock()
		return pr, nil
	}
	p.mu.Unlock()
	if err := p.backoff.Wait(ctx); err != nil {
		return nil, err
	}
	cmd := exec.Command(p.exe, p.args...)
	cmd.Dir = p.dir
	cmd.Env = proc.MinimalEnv(os.Getenv, "FOLIO_PLUGIN=1")
	cmd.Stderr = countWriter{&p.stderrBytes}
	proc.NewGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("plugin %q: start: %w", p.Manifest.Name, err)
	}
	p.starts.Add(1)
	pr := &process{cmd: cmd, maxLine: maxLine, stdin: stdin, calls: map[int]*pending{},
		exited: make(chan struct{}), reaped: make(chan struct{})}
	p.mu.Lock()
	p.proc = pr
	p.mu.Unlock()
	go p.read(pr, bufio.NewReaderSize(stdout, 64<<10))
	return pr, nil
}

// read routes the process's output to the calls in flight until it ends.
// Then every call still waiting fails as plugin_exited and the next call
// starts a new process.
func (p *Plugin) read(pr *process, r *bufio.Reader) {
	for {
		line, size, err := readLine(r, pr.maxLine)
		if line == nil && size > 0 {
			p.stray.Add(1) // too long to tell which call it was for
		} else if len(bytes.TrimSpace(line)) > 0 {
			p.route(pr, line)
		}
		if err != nil {
			break
		}
	}
	// Forget the process before failing its calls, so a call made right
	// after one of them returns starts a new one.
	p.mu.Lock()
	if p.proc == pr {
		p.proc = nil
		if !p.closed {
			p.backoff.Crashed()
		}
	}
	p.mu.Unlock()
	pr.mu.Lock()
	calls := pr.calls
	pr.calls = nil
	close(pr.exited)
	pr.mu.Unlock()
	for _, pd := range calls {
		res, err := exitedResult()
		pd.done <- callDone{res, err}
	}
	proc.KillGroup(pr.cmd)
	_ = pr.cmd.Wait()
	close(pr.reaped)
}

// route hands one line to the call it names: a response by its id, a
// notification by its params' "call". A line for no call in flight (one
// that finished or was canceled) is counted and dropped.
func (p *Plugin) route(pr *process, line []byte) {
	var m struct {
		ID     jsontext.Value `json:"id"`
		Method string         `json:"method"`
		Params struct {
			Call int `json:"call"`
		} `json:"params"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		p.stray.Add(1)
		return
	}
	id := m.Params.Call
	if m.Method == "" {
		n, err := strconv.Atoi(string(m.ID))
		if err != nil {
			p.stray.Add(1)
			return
		}
		id = n
	}
	pr.mu.Lock()
	pd := pr.calls[id]
	pr.mu.Unlock()
	if pd == nil {
		p.stray.Add(1)
		return
	}
	res, err, done := pd.s.handle(line)
	if done && pr.remove(id) {
		pd.done <- callDone{res, err}
	}
}

func (pr *process) add(id int, pd *pending) bool {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.calls == nil {
		return false
	}
	pr.calls[id] = pd
	return true
}

// remove takes id out of the calls in flight and reports whether it was
// there (so exactly one of result, crash and cancel answers a call).
func (pr *process) remove(id int) bool {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	_, ok := pr.calls[id]
	delete(pr.calls, id)
	return ok
}

func (pr *process) write(b []byte) error {
	pr.wmu.Lock()
	defer pr.wmu.Unlock()
	_, err := pr.stdin.Write(b)
	return err
}

// Starts counts the processes a persistent plugin has started.
func (p *Plugin) Starts() int64 { return p.starts.Load() }

// Stray counts lines a persistent plugin printed for no call in flight
// (late, for a canceled call, or unroutable).
func (p *Plugin) Stray() int64 { return p.stray.Load() }

// PID is the persistent process's ID, or 0 when none runs.
func (p *Plugin) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.proc == nil || p.proc.cmd.Process == nil {
		return 0
	}
	return p.proc.cmd.Process.Pid
}

// Close stops a persistent plugin: its stdin is closed, and after the
// grace period (or at once if it does not exit) its process group is
// killed. Calls in flight fail; later calls fail with reason
// plugin_unavailable. Close is a no-op for a per-call plugin and safe to
// call twice.
func (p *Plugin) Close() error {
	p.startMu.Lock()
	defer p.startMu.Unlock()
	p.mu.Lock()
	p.closed = true
	pr := p.proc
	p.mu.Unlock()
	if pr == nil {
		return nil
	}
	pr.wmu.Lock()
	_ = pr.stdin.Close()
	pr.wmu.Unlock()
	t := time.NewTimer(p.grace)
	defer t.Stop()
	select {
	case <-pr.exited:
	case <-t.C:
	}
	proc.KillGroup(pr.cmd)
	<-pr.reaped
	return nil
}
