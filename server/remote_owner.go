package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// A conversation another folio process owns (a terminal chat holding its
// log's lock and serving it on its local endpoint, chat_host.go in
// internal/cli) is not refused to this server's tabs: with
// Options.DialOwner the server attaches to that owner as an attached
// terminal does. The owner's conversation is mirrored into a store of the
// server's (through the protocol client), and that store is published to
// the conversation's tabs by the same publisher an engine of the server's
// own has (turns_publish.go): entries, the turn, the queue, the approvals.
// The tabs' commands are forwarded to the owner under their own command
// IDs, so the owner's engine stays their one authority (it makes them
// idempotent and keeps their receipts), and the receipts it sends back are
// published as the server's own. When the owner goes away the attachment
// ends: the follower produces the conversation's changes again, and the
// next command opens the server's own engine (handover).

// RemoteOwner is a conversation attached to on its owner (Options.DialOwner).
type RemoteOwner interface {
	// Store is the mirror of the owner's conversation, kept live.
	Store() *transcript.Store
	// Command sends a command frame of kind with the caller's ID and the
	// protocol's members for it, and returns the owner's receipt.
	Command(ctx context.Context, kind, commandID string, members map[string]any) (Receipt, error)
	// Status is a command's receipt on the owner.
	Status(ctx context.Context, commandID string) (Receipt, error)
	// Allowed lists, sorted, the tools the owner's engine allows, as it
	// last said.
	Allowed() []string
	// OnReceipt sets a function told every receipt that moves.
	OnReceipt(func(Receipt))
	// Done is closed when the connection to the owner ended.
	Done() <-chan struct{}
	Close() error
}

// DialOwner attaches to conversation on the process serving the local
// endpoint at path.
type DialOwner func(ctx context.Context, path, conversation string) (RemoteOwner, error)

// ownerDialTimeout bounds attaching to an owner.
const ownerDialTimeout = 10 * time.Second

// remoteOwner is one conversation attached to its owner.
type remoteOwner struct {
	ro   RemoteOwner
	pid  int
	quit chan struct{}
	done chan struct{} // the relay ended
}

// remoteFor returns the attachment of conversation id, attaching to the
// owner pid when there is none yet.
func (s *Server) remoteFor(id string, pid int) (*remoteOwner, error) {
	s.mu.Lock()
	r := s.remotes[id]
	s.mu.Unlock()
	if r != nil {
		return r, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), ownerDialTimeout)
	defer cancel()
	ro, err := s.opts.DialOwner(ctx, history.EndpointPath(s.opts.DataDir, pid), id)
	if err != nil {
		return nil, err
	}
	c := s.conv(id)
	c.mu.Lock()
	if c.eng != nil || c.changing != nil {
		c.mu.Unlock()
		ro.Close()
		return nil, fmt.Errorf("%w: conversation %s changes hands; try again", ErrBusy, id)
	}
	// The publisher reads the engine's store, its command changes and
	// receipts; an engine over the mirror that runs nothing gives it
	// exactly the mirror (the owner's receipts are published below).
	mirror := engine.New(ro.Store(), nil)
	c.saved.Store(&saveState{doc: ro.Store().Snapshot().Document})
	snap := ro.Store().Snapshot()
	pub := c.newPublisher(snap, turnsHooks{})
	// The mirror's engine never signals a change of its own, which is
	// what first publishes an engine's control state: the owner's turn,
	// queue and approvals as mirrored now are what snapshots give
	// (controlLocked), and every change of them is published from here.
	cs := controlOf(snap.Live)
	pub.control, pub.lastTurn, pub.lastQueue, pub.lastSteer, pub.lastAppr = true, *cs.Turn, cs.Queue, cs.Steers, cs.Approvals
	// The mirror's engine allows nothing; the owner's engine says what
	// it allows.
	pub.allowed = ro.Allowed
	sub := ro.Store().Subscribe()
	quit, pubDone, pubSync := make(chan struct{}), make(chan struct{}), make(chan chan struct{})
	c.quit, c.pubDone, c.pubSync, c.lent = quit, pubDone, pubSync, true
	c.acquireLocked(mirror)
	c.allowed = ro.Allowed
	c.mu.Unlock()
	saved := make(chan struct{})
	go pub.run(mirror, sub, saved, pubSync, quit, pubDone)
	ro.OnReceipt(func(rc Receipt) {
		rc.Conversation = id
		_ = c.publish(Change{Op: OpReceipt, Receipt: &rc})
	})

	r = &remoteOwner{ro: ro, pid: pid, quit: quit, done: make(chan struct{})}
	s.mu.Lock()
	if s.remotes == nil {
		s.remotes = map[string]*remoteOwner{}
	}
	s.remotes[id] = r
	s.mu.Unlock()
	go func() {
		select {
		case <-ro.Done():
		case <-s.done:
		}
		s.detachOwner(id, r, c, mirror)
	}()
	return r, nil
}

// detachOwner ends conversation id's attachment r: the publisher sends
// what is left, and the follower produces the conversation's changes
// again.
func (s *Server) detachOwner(id string, r *remoteOwner, c *conversation, mirror *engine.Engine) {
	defer close(r.done)
	s.mu.Lock()
	if s.remotes[id] == r {
		delete(s.remotes, id)
	}
	s.mu.Unlock()
	r.ro.Close()
	c.mu.Lock()
	pubDone := c.pubDone
	c.mu.Unlock()
	close(r.quit)
	<-pubDone
	mirror.Close()
	c.mu.Lock()
	c.releaseLocked()
	c.quit, c.pubDone, c.pubSync, c.lent = nil, nil, nil, false
	c.mu.Unlock()
	s.evictLater(c)
}

// attachedOwner returns conversation id's attachment, nil when it has none.
func (s *Server) attachedOwner(id string) *remoteOwner {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.remotes[id]
}

// lockedByOwner reports the live process that holds the log when err is
// the server's refusal to open it as locked, and the server can attach.
func (s *Server) lockedByOwner(err error) (pid int, ok bool) {
	var le *history.LockedError
	// On a replica the lock is a database's, not a local process's.
	if s.opts.DialOwner == nil || s.rep.store != nil || !errors.As(err, &le) || le.PID <= 0 {
		return 0, false
	}
	return le.PID, true
}

// attachIfOwned attaches conversation id to its owner when another live
// folio process holds its log (the lock file beside the log names it), so
// a tab that opens it gets the owner's live state from its first
// snapshot, not only once it sends. Any failure leaves the conversation
// to the follower, as before.
func (s *Server) attachIfOwned(id string) {
	if s.opts.DialOwner == nil || s.rep.store != nil || s.attachedOwner(id) != nil {
		return
	}
	if c := s.lookupConv(id); c != nil && c.openEngine() != nil {
		return
	}
	b, err := os.ReadFile(s.logPath(id) + ".lock")
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return
	}
	if _, err := os.Stat(history.EndpointPath(s.opts.DataDir, pid)); err != nil {
		return
	}
	if _, err := s.remoteFor(id, pid); err != nil {
	}
}

// forward runs cmd on the owner: the command's members go as the web app
// sends them, under the tab's command ID. A send names no model (the
// owner runs its own). Its attachments go as their IDs: the owner serves
// the endpoint of this data folder (the socket is found there), so the
// files this server stored on upload are the owner's too, and the owner
// reads them into the message as it reads its own uploads.
func (r *remoteOwner) forward(ctx context.Context, cmd Command) (Receipt, error) {
	b, err := json.Marshal(cmd)
	if err != nil {
		return Receipt{}, err
	}
	var members map[string]any
	if err := json.Unmarshal(b, &members); err != nil {
		return Receipt{}, err
	}
	for _, k := range []string{"kind", "conversation", "commandId", "model", "attachments"} {
		delete(members, k)
	}
	if len(cmd.Attachments) > 0 {
		ids := make([]string, len(cmd.Attachments))
		for i, a := range cmd.Attachments {
			ids[i] = a.ID
		}
		members["attachments"] = ids
	}
	rc, err := r.ro.Command(ctx, cmd.Kind, cmd.CommandID, members)
	rc.Conversation = cmd.Conversation
	return rc, err
}
