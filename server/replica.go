package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"sync"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/search"
	"github.com/foliodev/folio/transcript"
)

// Replica keeps the conversations in a database that several servers
// share (package pgstore's Mirror implements it). The server then serves
// local copies of the logs in DataDir, which the Replica keeps equal to the
// database: every request that names a conversation first brings its copy
// up to date (ReplicaSync), the follower publishes what other replicas
// appended from the copy, and writers (the engine, renames) write through
// ReplicaStore.OpenLog under the conversation's lease in the database. A
// command for a conversation another replica's engine holds is forwarded to
// it (ReplicaInbox), and its receipts come back.
//
// It is one value with five jobs, each a narrow interface that the part of
// the server doing that job is given alone (replicaParts).
type Replica interface {
	ReplicaSync
	ReplicaStore
	ReplicaInbox
	ReplicaLive
	ReplicaHealth
}

// ReplicaSync keeps DataDir's copies of the logs equal to the database.
type ReplicaSync interface {
	// Sync brings DataDir's copy of id up to the database (removing it
	// when the database has no such conversation) and keeps it current.
	Sync(ctx context.Context, id string) error
	// Hold keeps id's copy while the server has live state for it;
	// Release lets it go (copies nobody holds or names are dropped after
	// a while).
	Hold(id string)
	Release(id string)
	// OnChange sets the function told after a copy changed; OnDeleted
	// after a copy was dropped because the conversation was deleted.
	OnChange(func(id string))
	OnDeleted(func(id string))
}

// ReplicaStore is the database's conversations: what is written under a
// conversation's lease, and what is read without a copy.
type ReplicaStore interface {
	// OpenLog opens id for writing under its lease; history.ErrLocked
	// while another replica holds it.
	OpenLog(id string, opts ...history.Option) (*history.Log, error)
	// List lists the database's conversations.
	List() ([]history.Summary, error)
	// Commands reads a conversation's command receipts (each command's
	// last), which its engines recorded in the database.
	Commands(id string) ([]history.CommandRecord, error)
	// Create writes a new conversation's header line.
	Create(id string, header []byte) error
	// Delete removes a conversation under its lease.
	Delete(id string) error
	// Blobs is where the database keeps conversations' attachments and
	// artifacts, so each replica reads what another received or made
	// (blobs.go).
	Blobs() history.Blobs
}

// ReplicaInbox carries commands for a conversation another replica's
// engine holds: Forward writes one for the owner, Withdraw takes back one
// no owner claimed, Answer records a receipt of a command this replica
// runs for another; OnCommand is told of commands forwarded here, and
// OnReceipt of receipts of commands forwarded from here.
type ReplicaInbox interface {
	Forward(ctx context.Context, id, commandID string, body []byte) error
	Withdraw(ctx context.Context, id, commandID string) (bool, error)
	Answer(ctx context.Context, id, commandID string, receipt []byte) error
	OnCommand(func(id string, body []byte))
	OnReceipt(func(id string, receipt []byte))
}

// ReplicaLive publishes live changes between replicas: Stream sends one
// the owner's engine published (an entry's, streaming text, the turn, the
// queue, the approvals, a receipt, a presentation) to the other replicas,
// best effort and in order (replica_live.go); OnLive is told of theirs,
// for the conversations this replica serves.
type ReplicaLive interface {
	Stream(id string, msg []byte)
	OnLive(func(id string, msg []byte))
	// OnLiveElsewhere is told of the small messages of conversations this
	// replica does not serve.
	OnLiveElsewhere(func(id string, msg []byte))
}

// ReplicaHealth is whether the database answers.
type ReplicaHealth interface {
	// Reachable reports whether the database answers (see
	// replica_status.go); OnStatus is told when that changes, and on
	// recovery which conversations' leases this replica lost meanwhile.
	Reachable() bool
	OnStatus(func(reachable bool, lost []string))
	// OnLeaseLost is told when the lease of a conversation this replica
	// writes ended while the database stays reachable (its session alone
	// was ended); the function closes that conversation's engine.
	OnLeaseLost(func(id string))
	// OnWriterDied is told of a conversation this replica serves whose
	// owner (another replica, or this one) ended holding its lease: a
	// process that died. What the owner relayed as running is void.
	OnWriterDied(func(id string))
}

// replicaParts is the server's Replica by job, each nil on a single
// server: each part of the server reaches only the job it uses.
type replicaParts struct {
	sync   ReplicaSync
	store  ReplicaStore
	inbox  ReplicaInbox
	live   ReplicaLive
	health ReplicaHealth
}

func partsOf(r Replica) replicaParts {
	if r == nil {
		return replicaParts{}
	}
	return replicaParts{sync: r, store: r, inbox: r, live: r, health: r}
}

// forwardClaimWait is how long a forwarded command waits for an owner to
// claim it before the sender takes it back and tries to run it itself (the
// owner's engine may have closed meanwhile).
const forwardClaimWait = 2 * time.Second

// forwardAnswerWait bounds the wait for the first receipt of a claimed
// command.
const forwardAnswerWait = 30 * time.Second

// forwards tracks commands crossing replicas.
type forwards struct {
	mu sync.Mutex
	// waiting: commands this replica forwarded, waiting for their first
	// receipt.
	waiting map[[2]string]chan Receipt
	// answering: commands this replica runs for another, whose receipts
	// go back to the sender.
	answering map[[2]string]bool
}

func (f *forwards) wait(id, cmd string) chan Receipt {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.waiting == nil {
		f.waiting = map[[2]string]chan Receipt{}
	}
	ch := make(chan Receipt, 1)
	f.waiting[[2]string{id, cmd}] = ch
	return ch
}

func (f *forwards) done(id, cmd string) {
	f.mu.Lock()
	delete(f.waiting, [2]string{id, cmd})
	f.mu.Unlock()
}

// forward runs cmd on the replica whose engine holds its conversation,
// and returns that replica's first receipt. Later receipts reach this
// replica's tabs through OnReceipt. When no owner claims the command in
// time, it is taken back and run here; a conversation still locked after a
// few rounds is refused as locked.
func (s *Server) forward(ctx context.Context, cmd Command) (Receipt, error) {
	r := s.rep.inbox
	body, err := json.Marshal(cmd)
	if err != nil {
		return Receipt{}, err
	}
	id, k := cmd.Conversation, cmd.CommandID
	defer s.fwd.done(id, k)
	lockErr := fmt.Errorf("%w: another replica holds the conversation", ErrLocked)
	for range 3 {
		ch := s.fwd.wait(id, k)
		if err := r.Forward(ctx, id, k, body); err != nil {
			return Receipt{}, err
		}
		t := time.NewTimer(forwardClaimWait)
		select {
		case rc := <-ch:
			t.Stop()
			return rc, nil
		case <-ctx.Done():
			t.Stop()
			return Receipt{}, ctx.Err()
		case <-t.C:
		}
		took, err := r.Withdraw(ctx, id, k)
		if err != nil {
			return Receipt{}, err
		}
		if !took {
			// Claimed meanwhile: its answer is on its way.
			t := time.NewTimer(forwardAnswerWait)
			defer t.Stop()
			select {
			case rc := <-ch:
				return rc, nil
			case <-ctx.Done():
				return Receipt{}, ctx.Err()
			case <-t.C:
				return Receipt{}, fmt.Errorf("%w: the replica that took the command did not answer", ErrLocked)
			}
		}
		rc, err := s.eng.Do(ctx, cmd)
		if !errors.Is(err, ErrLocked) {
			return rc, err
		}
		lockErr = err
	}
	return Receipt{}, lockErr
}

// runForwarded runs a command another replica forwarded here, and sends
// its receipts back.
func (s *Server) runForwarded(id string, body []byte) {
	var cmd Command
	if err := json.Unmarshal(body, &cmd); err != nil || cmd.Conversation != id || cmd.CommandID == "" {
		s.opts.Logger.Warn("a forwarded command does not decode", "conversation", id)
		return
	}
	key := [2]string{id, cmd.CommandID}
	s.fwd.mu.Lock()
	if s.fwd.answering == nil {
		s.fwd.answering = map[[2]string]bool{}
	}
	s.fwd.answering[key] = true
	s.fwd.mu.Unlock()
	rc := s.do(context.Background(), cmd)
	s.answer(id, rc)
}

// answer sends a receipt of a command run for another replica back to it;
// others are left alone.
func (s *Server) answer(id string, rc Receipt) {
	key := [2]string{id, rc.CommandID}
	s.fwd.mu.Lock()
	ok := s.fwd.answering[key]
	if ok && rc.State.Final() {
		delete(s.fwd.answering, key)
	}
	s.fwd.mu.Unlock()
	if !ok {
		return
	}
	b, err := json.Marshal(rc)
	if err == nil {
		err = s.rep.inbox.Answer(context.Background(), id, rc.CommandID, b)
	}
	if err != nil {
		s.opts.Logger.Warn("cannot answer a forwarded command", "conversation", id, "err", err)
	}
}

// forwardedReceipt takes a receipt the owner gave a command this replica
// forwarded: the first one answers the waiting send, and each is published
// to this replica's tabs unless it would move the command backwards.
func (s *Server) forwardedReceipt(id string, b []byte) {
	var rc Receipt
	if err := json.Unmarshal(b, &rc); err != nil || rc.Conversation != id {
		return
	}
	s.fwd.mu.Lock()
	ch := s.fwd.waiting[[2]string{id, rc.CommandID}]
	s.fwd.mu.Unlock()
	if ch != nil {
		select {
		case ch <- rc:
			// The command's answer: the owner's tabs get no event of it
			// either.
			return
		default:
		}
	}
	// The owner relays its receipts with its other changes, in their
	// order (replica_live.go); this answer reaches the tabs only when the
	// relayed one has not come by then. Tabs never move a receipt
	// backwards (web/src/protocol/states.ts), so a late non-final receipt
	// after the final one changes nothing.
	time.AfterFunc(relayGrace, func() {
		if c := s.lookupConv(id); c != nil {
			c.receiptIn(rc)
		}
	})
}

// relayGrace is how long a receipt answered through the inbox waits for
// the same receipt relayed with the owner's live changes.
const relayGrace = 500 * time.Millisecond

// bindReplica pokes a conversation's follower when its copy changed, so
// tabs on this replica see another replica's appends without waiting for
// the follower's tick.
func (s *Server) bindReplica() {
	if s.opts.Replica == nil {
		return
	}
	s.rep.sync.OnDeleted(func(id string) {
		s.deleteLocalBlobs(id) // the database dropped them with it
		go s.announceDeleted(id)
	})
	s.rep.inbox.OnCommand(s.runForwarded)
	s.rep.inbox.OnReceipt(s.forwardedReceipt)
	s.rep.health.OnStatus(s.storeStatus)
	s.rep.live.OnLive(s.streamIn)
	s.rep.live.OnLiveElsewhere(s.stateIn)
	s.rep.health.OnLeaseLost(s.lockLost)
	s.rep.health.OnWriterDied(s.ownerDied)
	s.rep.sync.OnChange(func(id string) {
		// Not under the mirror's lock: the poll takes the conversation's.
		go s.pollCopy(id)
	})
}

// pollCopy has conversation id's follower read what its copy gained,
// unless the owner's relayed changes may not have shown that yet
// (holdRecordsLocked): then a little later.
func (s *Server) pollCopy(id string) {
	c := s.lookupConv(id)
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stop == nil || !c.synced {
		return
	}
	if c.holdRecordsLocked() {
		time.AfterFunc(recordGrace, func() { s.pollCopy(id) })
		return
	}
	c.pollLocked()
}

// syncCopy brings a replica's copy of id up to date; without a Replica it
// does nothing.
func (s *Server) syncCopy(id string) {
	if r := s.rep.sync; r != nil {
		if err := r.Sync(context.Background(), id); err != nil {
			s.opts.Logger.Warn("database unreachable; serving the local copy", "conversation", id, "err", err)
		}
	}
}

// openLog opens conversation id's log (at p in DataDir) for writing: the
// file's lock, or the database lease on a replica.
func (s *Server) openLog(id, p string) (*history.Log, error) {
	if r := s.rep.store; r != nil {
		return r.OpenLog(id, search.FollowStore(r))
	}
	// The data folder's search index follows every save (package search).
	return history.Open(p, search.Follow(s.opts.DataDir))
}

// listed is one conversation of a listing: its Meta when the listing
// gives it, else the log to read it from (Path; "" on a replica: its
// copy, made when read).
type listed struct {
	ID     string
	Path   string
	Listed *wireMeta
}

// listing lists the conversations: the data folder's logs, or on a
// replica the database's rows, which give a conversation's Meta without
// its log unless it has branches (their labels are read from a copy).
func (s *Server) listing() ([]listed, error) {
	r := s.rep.store
	if r == nil {
		logs, err := history.Logs(s.opts.DataDir)
		out := make([]listed, 0, len(logs))
		for _, l := range logs {
			out = append(out, listed{ID: l.ID, Path: l.Path})
		}
		return out, err
	}
	list, err := r.List()
	if err != nil {
		return nil, err
	}
	out := make([]listed, 0, len(list))
	for _, sum := range list {
		if validConversationID(sum.ID) != nil {
			continue
		}
		if sum.Err != nil || sum.Branched {
			out = append(out, listed{ID: sum.ID})
			continue
		}
		out = append(out, listed{ID: sum.ID, Listed: metaOfSummary(sum)})
	}
	return out, nil
}

// metaOfSummary is the Meta of a linear conversation's listing.
func metaOfSummary(sum history.Summary) *wireMeta {
	var started string
	if !sum.StartedAt.IsZero() {
		started = string(transcript.AppendInstant(nil, sum.StartedAt))
	}
	updated := started
	if !sum.UpdatedAt.IsZero() {
		updated = string(transcript.AppendInstant(nil, sum.UpdatedAt))
	}
	return &wireMeta{ID: sum.ID, Title: sum.Title, StartedAt: started, UpdatedAt: updated, Bytes: sum.Size,
		Head: defaultHead, Branches: []listedBranch{{Head: defaultHead, Label: defaultHead}}, Alternatives: []branchAlternative{}}
}

// createLog writes a new log's header line on a replica; false without
// one, where the caller creates the file.
func (s *Server) createLog(id string, header []byte) (bool, error) {
	r := s.rep.store
	if r == nil {
		return false, nil
	}
	return true, r.Create(id, header)
}

// deleteReplica deletes a conversation on a replica and answers the
// request; false without one.
func (s *Server) deleteReplica(w http.ResponseWriter, id string) bool {
	r := s.rep.store
	if r == nil {
		return false
	}
	err := r.Delete(id) // the database drops its blobs with it
	if errors.Is(err, history.ErrLocked) {
		httpError(w, http.StatusConflict, "locked", lockedText(err))
		return true
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.opts.Logger.Error("delete failed", "conversation", id, "err", err)
		httpError(w, http.StatusInternalServerError, "internal", "cannot delete the conversation")
		return true
	}
	s.deleteLocalBlobs(id)
	s.announceDeleted(id)
	w.WriteHeader(http.StatusNoContent)
	return true
}
