package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/server"
	"github.com/foliodev/folio/server/client"
	"github.com/foliodev/folio/transcript"
	"github.com/foliodev/folio/tui"
)

// A terminal attached to a conversation another folio process owns. When
// resume finds the log's writer lock held by a live process that serves a
// local endpoint (server.ServeLocal), the chat does not give up: it mirrors
// the owner's conversation into its own store through the protocol client
// (server/client) and sends what the person does to the owner as commands.
// The local engine stays idle meanwhile. When the owner goes away (it
// exits, or is killed), the connection ends and the chat takes the lock
// itself (handover): the engine opens the log as after a crash and the chat
// is the owner from then on.

// attachTimeout bounds connecting and opening the conversation on the owner.
const attachTimeout = 10 * time.Second

// handoverPoll is how often a chat whose owner went away tries the lock.
const handoverPoll = 100 * time.Millisecond

// attachment is one conversation a chat is attached to.
type attachment struct {
	conn *client.Conn
	cv   *client.Conversation
	pid  int
	who  string // "folio serve (pid 42)"
	// model is the owner's model for this conversation, as
	// provider/model, read when attaching ("" when it did not say).
	model string
}

// attach attaches the chat to conversation id, whose log at path is held
// by process pid. It fails (and the caller reports the lock as before)
// when pid serves no endpoint. Called with s.mu held.
func (s *chatSession) attachLocked(id, path string, pid int) error {
	ctx, cancel := context.WithTimeout(context.Background(), attachTimeout)
	defer cancel()
	conn, err := client.DialLocal(ctx, history.EndpointPath(s.dataDir, pid))
	if err != nil {
		return err
	}
	// The local engine must save nothing of a mirrored document, and
	// the conversation it owned is served by nobody from here on.
	s.unhostLocked()
	s.eng.SetSaver(nil)
	// One mirror writes the store at a time: the one before stops first.
	s.detachLocked()
	cv, model, err := conn.OpenWithModel(ctx, id, s.eng.Store())
	if err != nil {
		conn.Close()
		if s.log != nil {
			s.eng.SetSaver(s.saver)
			s.hostLocked()
		}
		return err
	}
	if s.log != nil {
		s.log.Close()
		s.log = nil
	}
	a := &attachment{conn: conn, cv: cv, pid: pid, who: ownerName(pid), model: model}
	s.att, s.id, s.path = a, id, path
	go s.handover(a)
	return nil
}

// detachLocked ends the attachment, if any (the chat switches to another
// conversation, or closes).
func (s *chatSession) detachLocked() {
	if s.att != nil {
		a := s.att
		s.att = nil
		a.conn.Close()
	}
}

// handover waits for a's connection to end and, unless the chat left it
// meanwhile, takes the conversation's lock: the owner is gone. Another
// process may win the lock first; then the chat attaches to that one.
func (s *chatSession) handover(a *attachment) {
	<-a.conn.Done()
	for {
		s.mu.Lock()
		if s.att != a || s.closed {
			s.mu.Unlock()
			return
		}
		err := s.takeOverLocked(a)
		s.mu.Unlock()
		if err == nil {
			return
		}
		time.Sleep(handoverPoll)
	}
}

// takeOverLocked makes the chat the owner of a's conversation, or attaches
// it to whoever owns it now.
func (s *chatSession) takeOverLocked(a *attachment) error {
	log, err := openLog(s.path, nil)
	var le *history.LockedError
	if errors.As(err, &le) {
		if le.PID > 0 && le.PID != a.pid {
			s.att = nil
			if aerr := s.attachLocked(a.cv.ID(), s.path, le.PID); aerr == nil {
				return nil
			}
			s.att = a
		}
		return err
	}
	if err != nil {
		return err
	}
	conv, err := s.open(log)
	if err != nil {
		log.Close()
		return err
	}
	s.setSaverLocked(log, conv.Title != "")
	s.att, s.log = nil, log
	s.hostLocked()
	return nil
}

// ownerName names process pid for the footer: folio serve or a terminal
// chat, by its command line where the system shows it.
func ownerName(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err == nil {
		for _, arg := range strings.Split(string(b), "\x00")[1:] {
			if arg == "serve" {
				return fmt.Sprintf("folio serve (pid %d)", pid)
			}
		}
		return fmt.Sprintf("folio chat (pid %d)", pid)
	}
	return fmt.Sprintf("folio process %d", pid)
}

// attached says which process the chat is attached to, "" when it owns
// its conversation (tui.Options.Attached).
func (s *chatSession) attached() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.att == nil {
		return ""
	}
	return s.att.who
}

func (s *chatSession) current() *attachment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.att
}

// chatEngine is what the chat program drives (tui.Engine): the local
// engine while the chat owns its conversation, the owner's engine through
// the protocol client while it is attached. The store is the local one
// either way, so the program never sees the switch.
type chatEngine struct{ s *chatSession }

var _ tui.Engine = chatEngine{}

func (c chatEngine) Store() *transcript.Store { return c.s.eng.Store() }

func (c chatEngine) Transport() engine.Transport {
	local := c.s.eng.Transport()
	return func(ctx context.Context, id, text string, steer bool) (engine.Receipt, error) {
		a := c.s.current()
		if a == nil {
			return local(ctx, id, text, steer)
		}
		r, err := a.cv.Send(ctx, id, text, steer)
		return receiptOf(r, steer), err
	}
}

func (c chatEngine) StatusFunc() engine.StatusFunc {
	local := c.s.eng.StatusFunc()
	return func(ctx context.Context, id string) (engine.Receipt, error) {
		a := c.s.current()
		if a == nil {
			return local(ctx, id)
		}
		r, err := a.cv.Status(ctx, id)
		return receiptOf(r, r.Kind == "steer"), err
	}
}

// Changed is closed when the local engine's commands change, the owner
// sends a receipt, or the attachment ends.
func (c chatEngine) Changed() <-chan struct{} {
	a := c.s.current()
	if a == nil {
		return c.s.eng.Changed()
	}
	out := make(chan struct{})
	local, remote := c.s.eng.Changed(), a.cv.Changed()
	go func() {
		select {
		case <-local:
		case <-remote:
		case <-a.conn.Done():
		}
		close(out)
	}()
	return out
}

func (c chatEngine) Stop() bool {
	a := c.s.current()
	if a == nil {
		return c.s.eng.Stop()
	}
	t, ok := c.Store().Snapshot().Live.Turn()
	if !ok || t.Entry == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), attachTimeout)
	defer cancel()
	r, err := a.cv.Stop(ctx, newCommandID("stop"), t.Entry)
	return err == nil && r.State != transcript.CommandRejected
}

// Dismiss takes back a draft: while attached, the owner's engine, which
// gave it back and lists it (its own screen shows it), is told to stop
// listing it. One it does not list is engine.ErrUnknownCommand, as on the
// local engine.
func (c chatEngine) Dismiss(id string) error {
	a := c.s.current()
	if a == nil {
		return c.s.eng.Dismiss(id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), attachTimeout)
	defer cancel()
	r, err := a.cv.Dismiss(ctx, newCommandID("dismiss"), id)
	if err == nil && r.State == transcript.CommandRejected && r.Code == "not-found" {
		return fmt.Errorf("%w: %s", engine.ErrUnknownCommand, r.Reason)
	}
	return rejected(r, err)
}

func (c chatEngine) Retry(id string, opts ...engine.CommandOption) (engine.Receipt, error) {
	a := c.s.current()
	if a == nil {
		return c.s.eng.Retry(id, opts...)
	}
	d := c.Store().Snapshot().Document
	if d.Len() == 0 {
		return engine.Receipt{}, engine.ErrNothingToRetry
	}
	last := d.At(d.Len() - 1)
	if _, ok := last.Content.(transcript.Failure); !ok {
		return engine.Receipt{}, engine.ErrNothingToRetry
	}
	ctx, cancel := context.WithTimeout(context.Background(), attachTimeout)
	defer cancel()
	r, err := a.cv.Retry(ctx, id, last.ID)
	return receiptOf(r, false), rejected(r, err)
}

func (c chatEngine) Approve(invocation string, d engine.Decision) error {
	a := c.s.current()
	if a == nil {
		return c.s.eng.Approve(invocation, d)
	}
	scope := "once"
	if d == engine.AllowSession {
		scope = "conversation"
	}
	ctx, cancel := context.WithTimeout(context.Background(), attachTimeout)
	defer cancel()
	r, err := a.cv.Approve(ctx, newCommandID("approve"), invocation, d != engine.Deny, scope)
	return rejected(r, err)
}

// Allowed is the tools allowed for the rest of the session: the owner's
// engine's while attached, as it last said.
func (c chatEngine) Allowed() []string {
	if a := c.s.current(); a != nil {
		return a.cv.Allowed()
	}
	return c.s.eng.Allowed()
}

// Model is the model the conversation's turns run on: the owner's while
// attached (its model part of provider/model), as the footer shows it.
func (c chatEngine) Model() string {
	if a := c.s.current(); a != nil && a.model != "" {
		_, m, _ := strings.Cut(a.model, "/")
		return m
	}
	return c.s.eng.Model()
}

// receiptOf is an owner's receipt as the local engine would give it.
func receiptOf(r server.Receipt, steer bool) engine.Receipt {
	return engine.Receipt{CommandID: r.CommandID, State: r.State, Kind: r.Kind, EntryID: r.EntryID, Steer: steer, Reason: r.Reason}
}

// rejected turns a rejected receipt into an error naming its reason.
func rejected(r server.Receipt, err error) error {
	if err != nil {
		return err
	}
	if r.State == transcript.CommandRejected {
		return fmt.Errorf("the owner refused it: %s", r.Reason)
	}
	return nil
}

var attachSeq struct {
	sync.Mutex
	n int
}

// newCommandID names a command this terminal sends to an owner.
func newCommandID(kind string) string {
	attachSeq.Lock()
	attachSeq.n++
	n := attachSeq.n
	attachSeq.Unlock()
	return fmt.Sprintf("tui-%s-%d-%d-%d", kind, os.Getpid(), time.Now().UnixNano(), n)
}
