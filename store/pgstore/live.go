package pgstore

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"time"
)

// Streaming across replicas. The replica whose engine runs a turn sends
// what its tabs see (text appended to an open entry, an entry whole, the
// turn, the queue, the approvals, receipts; the server's replica_live.go
// says what) to the other replicas as it happens, before any of it is
// saved: Stream hands a message to a sender goroutine,
// which notifies liveChannel with it inline when it fits NOTIFY's payload
// limit, or writes it to folio_live and notifies the row's number. Every
// listening replica passes the messages of the conversations it serves to
// OnLive, in the order they were sent, and those of the others that came
// inline to OnLiveElsewhere.
//
// Delivery is best effort: a message is dropped when the sender falls
// behind (more than maxLiveQueue waiting), when the database cannot be
// reached, or while a listener reconnects. The receiver notices by the
// message's base revision and offset and waits for the saved records,
// which are never lost.

// liveChannel is the channel of streaming messages.
const liveChannel = "folio_live"

// maxNotify is the largest payload sent inline; PostgreSQL's limit is
// 8000 bytes.
const maxNotify = 7900

// maxLiveQueue bounds the messages waiting to be sent.
const maxLiveQueue = 1024

// liveKeep is how long a message written to folio_live is kept: far
// longer than any listener takes to read it.
const liveKeep = time.Minute

// liveNote is a liveChannel payload: the message inline (m), or the number
// of its row in folio_live (n).
type liveNote struct {
	Conversation string          `json:"c"`
	From         string          `json:"f"`
	Message      json.RawMessage `json:"m,omitempty"`
	Row          int64           `json:"n,omitempty"`
}

// liveOut is the sending side.
type liveOut struct {
	mu      sync.Mutex
	queue   []liveNote
	wake    chan struct{}
	dropped int64
	swept   time.Time
	onLive  func(id string, msg []byte)
	// onElsewhere is told of inline messages of conversations not served.
	onElsewhere func(id string, msg []byte)
}

// Stream sends msg, a JSON value, to the other replicas' OnLive for
// conversation id. It never blocks; see the section comment for what may
// be lost.
func (m *Mirror) Stream(id string, msg []byte) {
	o := &m.out
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.queue) >= maxLiveQueue || m.down.Load() {
		o.dropped++
		return
	}
	o.queue = append(o.queue, liveNote{Conversation: id, From: m.s.owner, Message: msg})
	if o.wake == nil {
		o.wake = make(chan struct{}, 1)
	}
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// OnLive sets the function told of another replica's streaming messages
// for the conversations this replica serves. It is called from the
// listener, one message at a time in the order they were sent, and must
// not block.
func (m *Mirror) OnLive(f func(id string, msg []byte)) {
	m.out.mu.Lock()
	m.out.onLive = f
	m.out.mu.Unlock()
}

// OnLiveElsewhere sets the function told of another replica's streaming
// messages that came inline for conversations this replica does not serve
// (a replica keeps the owners' turn, queue and approvals from them, for a
// tab that opens such a conversation mid-turn). It is called as OnLive is.
func (m *Mirror) OnLiveElsewhere(f func(id string, msg []byte)) {
	m.out.mu.Lock()
	m.out.onElsewhere = f
	m.out.mu.Unlock()
}

// send runs until ctx ends, sending Stream's messages in order: what
// waits when it is free goes in one round trip.
func (m *Mirror) send(ctx context.Context) {
	o := &m.out
	o.mu.Lock()
	if o.wake == nil {
		o.wake = make(chan struct{}, 1)
	}
	wake := o.wake
	o.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		}
		for {
			o.mu.Lock()
			q := o.queue
			o.queue = nil
			o.mu.Unlock()
			if len(q) == 0 {
				break
			}
			if err := m.sendLive(ctx, q); err != nil && ctx.Err() == nil {
				m.log.Debug("streaming messages not sent", "err", err)
			}
		}
	}
}

// sendLive notifies messages in order: the small ones that come together
// in one statement (one round trip; notifications of one transaction are
// delivered in order, and identical ones only once, which messages never
// are: each names its revision), a large one through folio_live.
func (m *Mirror) sendLive(ctx context.Context, q []liveNote) error {
	var batch []string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		_, err := m.s.pool.Exec(ctx, `SELECT pg_notify($1, p) FROM unnest($2::text[]) WITH ORDINALITY AS t(p, i) ORDER BY i`, liveChannel, batch)
		batch = batch[:0]
		return err
	}
	for _, n := range q {
		b, err := json.Marshal(n)
		if err != nil {
			return err
		}
		if len(b) <= maxNotify {
			batch = append(batch, string(b))
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		if err := m.sendLarge(ctx, n); err != nil {
			return err
		}
	}
	return flush()
}

// sendLarge writes a message to folio_live and notifies its row.
func (m *Mirror) sendLarge(ctx context.Context, n liveNote) error {
	// The row and the notification commit together, so a listener told of
	// the row finds it.
	ref, err := json.Marshal(liveNote{Conversation: n.Conversation, From: n.From})
	if err != nil {
		return err
	}
	_, err = m.s.pool.Exec(ctx, `WITH r AS (INSERT INTO folio_live (conversation_id, body) VALUES ($1, $2) RETURNING n)
		SELECT pg_notify($3, left($4, -1) || ',"n":' || r.n || '}') FROM r`,
		n.Conversation, []byte(n.Message), liveChannel, string(ref))
	if err != nil {
		return err
	}
	// Only this goroutine (send) touches swept.
	if time.Since(m.out.swept) > liveKeep {
		m.out.swept = time.Now()
		_, err = m.s.pool.Exec(ctx, `DELETE FROM folio_live WHERE created_at < now() - $1::interval`, strconv.Itoa(int(liveKeep.Seconds()))+" seconds")
	}
	return err
}

// liveNoteIn handles a liveChannel notification on the listener.
func (m *Mirror) liveNoteIn(ctx context.Context, payload string) {
	var n liveNote
	if json.Unmarshal([]byte(payload), &n) != nil || n.From == m.s.owner {
		return
	}
	m.mu.Lock()
	_, served := m.convs[n.Conversation]
	m.mu.Unlock()
	m.out.mu.Lock()
	f := m.out.onLive
	m.out.mu.Unlock()
	if !served {
		// Only inline: a row is read only for a conversation served.
		m.out.mu.Lock()
		g := m.out.onElsewhere
		m.out.mu.Unlock()
		if g != nil && n.Row == 0 {
			g(n.Conversation, n.Message)
		}
		return
	}
	if f == nil {
		return
	}
	msg := []byte(n.Message)
	if n.Row != 0 {
		if err := m.s.pool.QueryRow(ctx, `SELECT body FROM folio_live WHERE n = $1`, n.Row).Scan(&msg); err != nil {
			m.log.Debug("streaming message gone", "conversation", n.Conversation, "err", err)
			return
		}
	}
	f(n.Conversation, msg)
}
