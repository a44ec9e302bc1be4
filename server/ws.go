package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/server/pager"
	"github.com/foliodev/folio/transcript"
)

// WebSocket limits (see docs/protocol.md).
const (
	maxFrame       = 256 << 10 // one client frame
	hardFrameLimit = 64 << 20  // past this the connection closes (1009)
	maxText        = 200000
	maxAttachments = 16
	maxFollows     = 16
	maxConns       = 512
	outQueue       = 1024
	outQueueBytes  = 16 << 20 // bytes queued for one connection before it is "lagged"
	maxCommands    = 64       // commands of one connection waiting or running
	maxOpenWaiting = 16       // opens of one connection waiting or capturing
	writeTimeout   = 10 * time.Second
	maxOpens       = 2 // concurrent snapshot captures per connection
)

// conn is one WebSocket connection: its snapshots, its followed
// conversations and its outgoing queue.
type conn struct {
	srv *Server
	ws  *websocket.Conn
	id  string
	out chan outFrame
	lru *pager.LRU

	closeOnce sync.Once
	closed    chan struct{}
	opens     chan struct{}  // semaphore for captures
	queued    atomic.Int64   // bytes in out
	cmds      sync.WaitGroup // command goroutines

	mu        sync.Mutex
	lanes     map[string]*lane // per conversation, the commands waiting to run in order
	running   int              // commands waiting or running
	openCount int              // opens waiting or capturing
	hello     bool
	tokens    map[string]tokenScope // live tokens of this connection
	expired   map[string]bool       // tokens evicted from the LRU
	follows   map[string]*conversation
}

type tokenScope struct {
	conv *conversation
	head string
	gen  int64
	seq  int64
}

type outFrame struct {
	b         []byte
	pooled    bool
	closeCode websocket.StatusCode // when set: close the connection here
}

var framePool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	// A slot is taken before the upgrade and held until the connection
	// is gone, so concurrent upgrades cannot overshoot the limit.
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	default:
		httpError(w, http.StatusServiceUnavailable, "too-many", "too many connections")
		return
	}
	// Accept checks Origin as well (admit did first): absent, or the
	// request's own host. Browsers offer the token as a subprotocol next to
	// Subprotocol, and need the server to select one of their offers.
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{Subprotocol}})
	if err != nil {
		return // Accept wrote the 403
	}
	ws.SetReadLimit(hardFrameLimit)
	c := &conn{
		srv: s, ws: ws, id: randomID("c-", 8),
		out:     make(chan outFrame, outQueue),
		lru:     pager.NewLRU(s.opts.Snapshots),
		closed:  make(chan struct{}),
		opens:   make(chan struct{}, maxOpens),
		tokens:  map[string]tokenScope{},
		expired: map[string]bool{},
		follows: map[string]*conversation{},
	}
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	go c.writeLoop()
	c.readLoop(r.Context())
	c.close(websocket.StatusNormalClosure, "")
}

// send queues a frame. A client that lets its queue fill, in frames or in
// bytes, is disconnected (4008); it reconnects and resumes from a
// checkpoint.
func (c *conn) send(b []byte, pooled bool) {
	select {
	case <-c.closed:
		return
	default:
	}
	if c.queued.Add(int64(len(b))) > outQueueBytes {
		go c.close(4008, "lagged")
		return
	}
	select {
	case c.out <- outFrame{b: b, pooled: pooled}:
	default:
		go c.close(4008, "lagged")
	}
}

func (c *conn) writeLoop() {
	for {
		select {
		case <-c.closed:
			return
		case f := <-c.out:
			if f.closeCode != 0 {
				go c.close(f.closeCode, "protocol version")
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
			err := c.ws.Write(ctx, websocket.MessageText, f.b)
			cancel()
			c.queued.Add(-int64(len(f.b)))
			if f.pooled && cap(f.b) <= 8<<20 {
				b := f.b[:0]
				framePool.Put(&b)
			}
			if err != nil {
				go c.close(websocket.StatusGoingAway, "write failed")
				return
			}
		}
	}
}

// close ends the connection and releases everything it held: its
// snapshots' files go at once.
func (c *conn) close(code websocket.StatusCode, reason string) {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.ws.Close(code, reason)
		c.mu.Lock()
		follows := c.follows
		c.follows = map[string]*conversation{}
		tokens := c.tokens
		c.tokens = map[string]tokenScope{}
		c.mu.Unlock()
		for _, cv := range follows {
			cv.unsubscribe(c)
		}
		c.srv.mu.Lock()
		for t := range tokens {
			delete(c.srv.tokens, t)
		}
		delete(c.srv.conns, c)
		c.srv.mu.Unlock()
		c.lru.Close()
		c.srv.mu.Lock()
		hook := c.srv.onConnClosed
		c.srv.mu.Unlock()
		if hook != nil {
			hook(code)
		}
	})
}

func (c *conn) readLoop(ctx context.Context) {
	buf := make([]byte, 0, 4096)
	for {
		typ, rd, err := c.ws.Reader(ctx)
		if err != nil {
			return
		}
		buf = buf[:0]
		lr := &io.LimitedReader{R: rd, N: maxFrame + 1}
		for {
			if len(buf) == cap(buf) {
				buf = append(buf, 0)[:len(buf)]
			}
			n, err := lr.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if err == io.EOF {
				break
			}
			if err != nil {
				return
			}
		}
		if len(buf) > maxFrame {
			if _, err := io.Copy(io.Discard, rd); err != nil {
				return
			}
			c.protoError("", "too-large", fmt.Sprintf("frame is over the %d-byte limit", maxFrame), false)
			continue
		}
		if typ != websocket.MessageText {
			c.protoError("", "bad-request", "frames must be JSON text", false)
			continue
		}
		c.handle(buf)
	}
}

// errorFrame is the protocol's error.
type errorFrame struct {
	Type    string `json:"type"`
	Re      string `json:"re,omitzero"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Rebuild bool   `json:"rebuild"`
}

func (c *conn) protoError(re, code, msg string, rebuild bool) {
	c.reply(errorFrame{Type: "error", Re: re, Code: code, Message: clientText(msg), Rebuild: rebuild})
}

func (c *conn) reply(v any) {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		return
	}
	c.send(b, false)
}

type envelope struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// strictly decodes a frame into v, which must name every member it allows.
func strictly(frame []byte, v any) error {
	return json.Unmarshal(frame, v, json.RejectUnknownMembers(true))
}

func (c *conn) handle(frame []byte) {
	select {
	case <-c.closed:
		// Closed (a lagging client, 4008): the requests it already sent
		// are not answered, so none of them builds a page nobody reads.
		return
	default:
	}
	var env envelope
	if err := json.Unmarshal(frame, &env); err != nil {
		c.protoError("", "bad-request", "frame is not a JSON object with a string type: "+err.Error(), false)
		return
	}
	if len(env.ID) > 64 {
		c.protoError("", "bad-request", "id is longer than 64 characters", false)
		return
	}
	c.mu.Lock()
	hello := c.hello
	c.mu.Unlock()
	if !hello && env.Type != "hello" {
		c.protoError(env.ID, "hello-required", "send hello first", false)
		return
	}
	switch env.Type {
	case "hello":
		c.onHello(env, frame)
	case "ping":
		var m struct {
			envelope
		}
		if c.decode(env, frame, &m) {
			c.reply(map[string]string{"type": "pong", "re": env.ID})
		}
	case "open":
		c.onOpen(env, frame)
	case "page":
		c.onPage(env, frame)
	case "release":
		c.onRelease(env, frame)
	case "unfollow":
		c.onUnfollow(env, frame)
	case "entry":
		c.onEntry(env, frame)
	case CmdSend, CmdSteer, CmdStop, CmdApprove, CmdRetry, CmdEdit, CmdSelectBranch:
		c.onCommand(env, frame)
	case "":
		c.protoError(env.ID, "bad-request", "frame has no type", false)
	default:
		c.protoError(env.ID, "unknown-type", fmt.Sprintf("unknown frame type %q", clip(env.Type)), false)
	}
}

func (c *conn) decode(env envelope, frame []byte, v any) bool {
	if err := strictly(frame, v); err != nil {
		c.protoError(env.ID, "bad-request", env.Type+": "+err.Error(), false)
		return false
	}
	return true
}

type limits struct {
	FrameBytes    int `json:"frameBytes"`
	MinBudget     int `json:"minBudget"`
	MaxBudget     int `json:"maxBudget"`
	DefaultBudget int `json:"defaultBudget"`
	Snapshots     int `json:"snapshots"`
}

// helloFrame is the client's hello.
type helloFrame struct {
	envelope
	Protocol int    `json:"protocol"`
	Client   string `json:"client"`
}

func (c *conn) onHello(env envelope, frame []byte) {
	var m helloFrame
	if !c.decode(env, frame, &m) {
		return
	}
	if m.Protocol != ProtocolVersion {
		c.protoError(env.ID, "protocol-version", fmt.Sprintf("this server speaks protocol %d, not %d", ProtocolVersion, m.Protocol), false)
		// Queued after the error, so the error goes out first.
		select {
		case c.out <- outFrame{closeCode: websocket.StatusPolicyViolation}:
		default:
			go c.close(websocket.StatusPolicyViolation, "protocol version")
		}
		return
	}
	c.mu.Lock()
	c.hello = true
	c.mu.Unlock()
	size := c.srv.opts.Snapshots
	if size < 1 {
		size = pager.DefaultLRUSize
	}
	c.reply(welcomeFrame{"welcome", env.ID, ProtocolVersion, c.id, limits{maxFrame, pager.MinBudget, pager.MaxBudget, pager.DefaultBudget, size}})
	if c.srv.storeReachable() != nil {
		c.reply(statusFrame{Type: "status", Store: StoreUnreachable})
	}
}

// welcomeFrame answers hello.
type welcomeFrame struct {
	Type       string `json:"type"`
	Re         string `json:"re"`
	Protocol   int    `json:"protocol"`
	Connection string `json:"connection"`
	Limits     limits `json:"limits"`
}

// follow subscribes the connection to a conversation's live events and
// returns the conversation it follows.
func (c *conn) follow(id string) (*conversation, error) {
	for {
		cv := c.srv.conv(id)
		c.mu.Lock()
		if cur, ok := c.follows[id]; ok {
			c.mu.Unlock()
			return cur, nil
		}
		if len(c.follows) >= maxFollows {
			c.mu.Unlock()
			return nil, errors.New("too-many")
		}
		c.follows[id] = cv
		c.mu.Unlock()
		if cv.subscribe(c) {
			return cv, nil
		}
		// Evicted between the lookup and the subscription: the registry
		// has (or makes) its successor.
		c.mu.Lock()
		if c.follows[id] == cv {
			delete(c.follows, id)
		}
		c.mu.Unlock()
	}
}

type snapshotFrame struct {
	Type         string      `json:"type"`
	Re           string      `json:"re"`
	Conversation string      `json:"conversation"`
	Token        string      `json:"token"`
	Head         string      `json:"head"`
	Generation   int64       `json:"generation"`
	Seq          int64       `json:"seq"`
	Groups       int         `json:"groups"`
	Entries      int         `json:"entries"`
	Bytes        int64       `json:"bytes"`
	Graph        bool        `json:"graph"`
	Checkpoint   *checkpoint `json:"checkpoint,omitzero"`
	// State is the engine's queue, turn and approvals, when an engine has
	// reported any for this conversation.
	State *controlState `json:"state,omitzero"`
}

// openFrame is the client's open.
type openFrame struct {
	envelope
	Conversation string `json:"conversation"`
	Head         string `json:"head"`
	Since        *Since `json:"since"`
}

func (c *conn) onOpen(env envelope, frame []byte) {
	var m openFrame
	if !c.decode(env, frame, &m) {
		return
	}
	if err := validConversationID(m.Conversation); err != nil {
		c.protoError(env.ID, "invalid-id", err.Error(), false)
		return
	}
	// Only existence: metadata would read the log a second time.
	if _, err := os.Stat(c.srv.logPath(m.Conversation)); err != nil {
		c.protoError(env.ID, "not-found", "no conversation "+m.Conversation, false)
		return
	}
	cv, err := c.follow(m.Conversation)
	if err != nil {
		c.protoError(env.ID, "too-many", fmt.Sprintf("a connection may follow at most %d conversations", maxFollows), false)
		return
	}
	// Captures run beside the read loop, at most maxOpens at a time; an
	// open past that waits on its own goroutine, never in the read loop.
	c.mu.Lock()
	if c.openCount >= maxOpenWaiting {
		c.mu.Unlock()
		c.protoError(env.ID, "too-many", fmt.Sprintf("at most %d opens may wait on one connection", maxOpenWaiting), false)
		return
	}
	c.openCount++
	c.mu.Unlock()
	go func() {
		defer func() {
			c.mu.Lock()
			c.openCount--
			c.mu.Unlock()
		}()
		select {
		case c.opens <- struct{}{}:
		case <-c.closed:
			return
		}
		defer func() { <-c.opens }()
		cp, err := cv.capture(m.Head, m.Since)
		if err != nil {
			if errors.Is(err, errHeadNotFound) {
				c.protoError(env.ID, "not-found", err.Error(), false)
			} else {
				c.srv.opts.Logger.Error("snapshot capture failed", "conversation", cv.id, "err", err)
				c.protoError(env.ID, "internal", "the conversation could not be captured: "+err.Error(), false)
			}
			return
		}
		token := randomID("s-", 16)
		c.srv.mu.Lock()
		c.srv.tokens[token] = c
		c.srv.mu.Unlock()
		c.mu.Lock()
		c.tokens[token] = tokenScope{conv: cv, head: cp.head, gen: cp.gen, seq: cp.seq}
		c.mu.Unlock()
		for _, t := range c.lru.Add(token, cp.snap) {
			c.forget(t, true)
		}
		if m.Since == nil && len(cp.checkpoint.Entries) == 0 && len(cp.checkpoint.Presentations) == 0 {
			cp.checkpoint = nil
		}
		st := cp.snap.Stats()
		c.reply(snapshotFrame{Type: "snapshot", Re: env.ID, Conversation: cv.id, Token: token, Head: cp.head,
			Generation: cp.gen, Seq: cp.seq, Groups: st.Groups, Entries: st.Entries, Bytes: st.Bytes,
			Graph: st.GraphBuilt, Checkpoint: cp.checkpoint, State: cp.control})
	}()
}

// forget drops a token from the connection and the server registry.
func (c *conn) forget(token string, expired bool) {
	c.mu.Lock()
	delete(c.tokens, token)
	if expired {
		if len(c.expired) > 1024 {
			clear(c.expired)
		}
		c.expired[token] = true
	}
	c.mu.Unlock()
	c.srv.mu.Lock()
	delete(c.srv.tokens, token)
	c.srv.mu.Unlock()
}

// scope checks a token against this connection and the request; it returns
// the protocol error code and message when the token cannot be used.
func (c *conn) scope(token, conversation, head string) (tokenScope, string, string) {
	c.mu.Lock()
	sc, ok := c.tokens[token]
	expired := c.expired[token]
	c.mu.Unlock()
	if !ok {
		if expired {
			return sc, "token-expired", "the snapshot was evicted from this connection's cache; open it again"
		}
		c.srv.mu.Lock()
		other := c.srv.tokens[token]
		c.srv.mu.Unlock()
		if other != nil {
			return sc, "token-scope", "the token belongs to another connection; open the conversation on this one"
		}
		return sc, "token-unknown", "no such snapshot token; open the conversation again"
	}
	if conversation != sc.conv.id {
		return sc, "token-scope", fmt.Sprintf("the token is for conversation %s, not %s", sc.conv.id, clip(conversation))
	}
	if head != "" && head != sc.head {
		return sc, "token-scope", fmt.Sprintf("the token is for head %s, not %s", sc.head, clip(head))
	}
	if g := sc.conv.gen.Load(); g != sc.gen {
		return sc, "token-stale", fmt.Sprintf("the document was replaced (generation %d, snapshot has %d); open it again", g, sc.gen)
	}
	sc.conv.mu.Lock()
	cur := sc.conv.head
	sc.conv.mu.Unlock()
	if cur != sc.head {
		return sc, "token-stale", fmt.Sprintf("the selected branch is now %s; open it again", cur)
	}
	return sc, "", ""
}

// pageRequest is the client's page request.
type pageRequest struct {
	envelope
	Token        string `json:"token"`
	Conversation string `json:"conversation"`
	Head         string `json:"head"`
	Anchor       string `json:"anchor"`
	Direction    string `json:"direction"`
	BudgetBytes  int    `json:"budgetBytes"`
}

func (c *conn) onPage(env envelope, frame []byte) {
	var m pageRequest
	if !c.decode(env, frame, &m) {
		return
	}
	if _, code, msg := c.scope(m.Token, m.Conversation, m.Head); code != "" {
		c.protoError(env.ID, code, msg, true)
		return
	}
	snap, ok := c.lru.Get(m.Token)
	if !ok {
		c.protoError(env.ID, "token-expired", "the snapshot was evicted; open it again", true)
		return
	}
	defer snap.Release()
	bp := framePool.Get().(*[]byte)
	b := (*bp)[:0]
	b = append(b, `{"type":"page","re":`...)
	b, _ = jsontext.AppendQuote(b, env.ID)
	b = append(b, `,"token":`...)
	b, _ = jsontext.AppendQuote(b, m.Token)
	b = append(b, `,"groups":[`...)
	p, err := snap.Page(b, m.Anchor, pager.Direction(m.Direction), m.BudgetBytes)
	if err != nil {
		framePool.Put(bp)
		switch {
		case errors.Is(err, pager.ErrAnchorNotFound):
			c.protoError(env.ID, "bad-anchor", err.Error(), false)
		case errors.Is(err, pager.ErrBadDirection):
			c.protoError(env.ID, "bad-direction", err.Error(), false)
		case errors.Is(err, pager.ErrBadBudget):
			c.protoError(env.ID, "bad-budget", err.Error(), false)
		case errors.Is(err, pager.ErrReleased):
			c.protoError(env.ID, "token-expired", "the snapshot was released; open it again", true)
		default:
			c.protoError(env.ID, "internal", "page read failed", false)
		}
		return
	}
	b = append(p.Bytes, ']')
	if p.First >= 0 {
		b = fmt.Appendf(b, `,"first":%d,"last":%d`, p.First, p.Last)
	}
	b = fmt.Appendf(b, `,"hasMoreBefore":%t,"hasMoreAfter":%t`, p.HasMoreBefore, p.HasMoreAfter)
	if len(p.Coverage) > 0 {
		cov, _ := json.Marshal(p.Coverage)
		b = append(append(b, `,"coverage":`...), cov...)
	}
	if len(p.Links) > 0 {
		l, _ := json.Marshal(p.Links)
		b = append(append(b, `,"links":`...), l...)
	}
	b = append(b, '}')
	c.send(b, true)
}

// releaseFrame is the client's release.
type releaseFrame struct {
	envelope
	Token string `json:"token"`
}

func (c *conn) onRelease(env envelope, frame []byte) {
	var m releaseFrame
	if !c.decode(env, frame, &m) {
		return
	}
	c.mu.Lock()
	_, ok := c.tokens[m.Token]
	c.mu.Unlock()
	if !ok {
		c.protoError(env.ID, "token-unknown", "no such snapshot token on this connection", false)
		return
	}
	c.lru.Remove(m.Token)
	c.forget(m.Token, false)
	c.reply(map[string]string{"type": "released", "re": env.ID})
}

// unfollowFrame is the client's unfollow.
type unfollowFrame struct {
	envelope
	Conversation string `json:"conversation"`
}

func (c *conn) onUnfollow(env envelope, frame []byte) {
	var m unfollowFrame
	if !c.decode(env, frame, &m) {
		return
	}
	c.mu.Lock()
	cv, ok := c.follows[m.Conversation]
	delete(c.follows, m.Conversation)
	c.mu.Unlock()
	if ok {
		cv.unsubscribe(c)
	}
	c.reply(map[string]string{"type": "ok", "re": env.ID})
}

// entryRequest is the client's entry: the current value of one entry of a
// followed conversation, asked for after a gap in its live events.
type entryRequest struct {
	envelope
	Conversation string `json:"conversation"`
	EntryID      string `json:"entryId"`
}

// entryFrame answers entry with the entry's whole current value, as an
// upsert or settle event would carry it. Seq is the conversation's seq when
// it was read: every event sent before the answer is at or below it, every
// later one above.
type entryFrame struct {
	Type         string         `json:"type"`
	Re           string         `json:"re"`
	Conversation string         `json:"conversation"`
	Generation   int64          `json:"generation"`
	Seq          int64          `json:"seq"`
	Entry        jsontext.Value `json:"entry"`
	Revision     int64          `json:"revision"`
	Open         bool           `json:"open"`
	After        string         `json:"after,omitzero"`
}

// onEntry answers a checkpoint of one entry. The answer is read and queued
// under the conversation's lock, so it takes its place among the live events
// exactly: a client drops the events for that entry that came before it and
// applies those after. An entry the conversation's live state does not hold
// (settled before this generation's changes began, or forgotten past the
// checkpoint bounds) is not-found with rebuild: the client opens again.
func (c *conn) onEntry(env envelope, frame []byte) {
	var m entryRequest
	if !c.decode(env, frame, &m) {
		return
	}
	c.mu.Lock()
	cv := c.follows[m.Conversation]
	c.mu.Unlock()
	if cv == nil {
		c.protoError(env.ID, "not-found", "this connection does not follow conversation "+clip(m.Conversation)+"; open it first", true)
		return
	}
	cv.mu.Lock()
	defer cv.mu.Unlock()
	le := cv.live[m.EntryID]
	switch {
	case le == nil:
		c.protoError(env.ID, "not-found", "the live state holds no entry "+clip(m.EntryID)+"; open the conversation again", true)
	case len(le.raw) > maxCheckpoint:
		c.protoError(env.ID, "too-large", fmt.Sprintf("entry %s is %d bytes, more than one frame carries; open the conversation again", clip(m.EntryID), len(le.raw)), true)
	default:
		c.reply(entryFrame{Type: "entry", Re: env.ID, Conversation: cv.id, Generation: cv.gen.Load(), Seq: cv.seq,
			Entry: le.raw, Revision: le.rev, Open: le.open, After: le.after})
	}
}

type commandFrame struct {
	envelope
	Conversation string   `json:"conversation"`
	CommandID    string   `json:"commandId"`
	Text         *string  `json:"text"`
	Attachments  []string `json:"attachments"`
	Head         string   `json:"head"`
	Turn         string   `json:"turn"`
	Reply        string   `json:"reply"`
	InvocationID string   `json:"invocationId"`
	Allow        *bool    `json:"allow"`
	Scope        string   `json:"scope"`
	FailureID    string   `json:"failureId"`
	EntryID      string   `json:"entryId"`
	Model        string   `json:"model"`
}

// needs lists, per command, the members it requires and allows.
var needs = map[string]struct{ required, allowed string }{
	CmdSend:         {"text", "text attachments head model"},
	CmdSteer:        {"text", "text"},
	CmdStop:         {"turn", "turn reply"},
	CmdApprove:      {"invocationId allow", "invocationId allow scope"},
	CmdRetry:        {"failureId", "failureId"},
	CmdEdit:         {"entryId text", "entryId text"},
	CmdSelectBranch: {"head", "head"},
}

func (m *commandFrame) present() map[string]bool {
	return map[string]bool{
		"text": m.Text != nil, "attachments": m.Attachments != nil, "head": m.Head != "", "turn": m.Turn != "",
		"reply": m.Reply != "", "invocationId": m.InvocationID != "", "allow": m.Allow != nil,
		"scope":     m.Scope != "",
		"failureId": m.FailureID != "", "entryId": m.EntryID != "", "model": m.Model != "",
	}
}

func (c *conn) onCommand(env envelope, frame []byte) {
	var m commandFrame
	if !c.decode(env, frame, &m) {
		return
	}
	if err := validConversationID(m.Conversation); err != nil {
		c.protoError(env.ID, "invalid-id", err.Error(), false)
		return
	}
	if err := validCommandID(m.CommandID); err != nil {
		c.protoError(env.ID, "invalid-id", err.Error(), false)
		return
	}
	rule := needs[env.Type]
	have := m.present()
	for _, f := range strings.Fields(rule.required) {
		if !have[f] {
			c.protoError(env.ID, "bad-request", fmt.Sprintf("%s: %s is required", env.Type, f), false)
			return
		}
	}
	for f, ok := range have {
		if ok && !strings.Contains(" "+rule.allowed+" ", " "+f+" ") {
			c.protoError(env.ID, "bad-request", fmt.Sprintf("%s: %s is not allowed", env.Type, f), false)
			return
		}
	}
	if m.Text != nil && len(*m.Text) > maxText {
		c.protoError(env.ID, "too-large", fmt.Sprintf("text is %d bytes; the limit is %d", len(*m.Text), maxText), false)
		return
	}
	if len(m.Attachments) > maxAttachments {
		c.protoError(env.ID, "bad-request", fmt.Sprintf("at most %d attachments", maxAttachments), false)
		return
	}
	switch m.Scope {
	case "", ScopeOnce, ScopeConversation:
	default:
		c.protoError(env.ID, "bad-request", fmt.Sprintf("approve: scope must be %q or %q", ScopeOnce, ScopeConversation), false)
		return
	}
	if m.Model != "" {
		if err := c.srv.checkModel(m.Model); err != nil {
			c.protoError(env.ID, "unknown-model", err.Error(), false)
			return
		}
	}
	cmd := Command{Kind: env.Type, Conversation: m.Conversation, CommandID: m.CommandID, Head: m.Head,
		Turn: m.Turn, Reply: m.Reply, InvocationID: m.InvocationID, FailureID: m.FailureID, EntryID: m.EntryID,
		Model: m.Model, Scope: m.Scope}
	if m.Text != nil {
		cmd.Text = *m.Text
	}
	if m.Allow != nil {
		cmd.Allow = *m.Allow
	}
	for _, id := range m.Attachments {
		cmd.Attachments = append(cmd.Attachments, Attachment{ID: id})
	}
	// The command runs off the read loop (opening a conversation's engine
	// may read a long log), after the connection's earlier commands on the
	// same conversation, so pages, pings and other conversations' commands
	// never wait for it.
	if !c.inOrder(cmd.Conversation, func() {
		rc := c.srv.do(context.Background(), cmd)
		c.reply(receiptFrame{"receipt", env.ID, rc})
	}) {
		c.protoError(env.ID, "too-many", fmt.Sprintf("at most %d commands may wait on one connection", maxCommands), false)
	}
}

// receiptFrame answers a command.
type receiptFrame struct {
	Type    string  `json:"type"`
	Re      string  `json:"re"`
	Receipt Receipt `json:"receipt"`
}

// lane holds one conversation's commands waiting behind the running one.
type lane struct{ waiting []func() }

// inOrder runs fn on its own goroutine after the connection's earlier
// commands on conversation. It reports false, running nothing, when
// maxCommands are already waiting or running.
func (c *conn) inOrder(conversation string, fn func()) bool {
	c.mu.Lock()
	if c.running >= maxCommands {
		c.mu.Unlock()
		return false
	}
	c.running++
	if c.lanes == nil {
		c.lanes = map[string]*lane{}
	}
	if l := c.lanes[conversation]; l != nil {
		l.waiting = append(l.waiting, fn)
		c.mu.Unlock()
		return true
	}
	l := &lane{}
	c.lanes[conversation] = l
	c.mu.Unlock()
	c.cmds.Add(1)
	go func() {
		defer c.cmds.Done()
		for {
			fn()
			c.mu.Lock()
			c.running--
			if len(l.waiting) == 0 {
				delete(c.lanes, conversation)
				c.mu.Unlock()
				return
			}
			fn, l.waiting = l.waiting[0], l.waiting[1:]
			c.mu.Unlock()
		}
	}()
	return true
}

// do hands a command to the engine, which makes it idempotent by command
// ID. A conversation that does not exist is not opened: the command is
// refused.
func (s *Server) do(ctx context.Context, cmd Command) Receipt {
	if s.eng == nil {
		return Receipt{CommandID: cmd.CommandID, Conversation: cmd.Conversation, Kind: cmd.Kind, State: transcript.CommandRejected,
			Code: "engine-unavailable", Reason: "this server has no engine; it only reads conversations"}
	}
	if _, err := os.Stat(s.logPath(cmd.Conversation)); err != nil {
		return rejection(cmd, fmt.Errorf("%w: no conversation %s", ErrNotFound, cmd.Conversation))
	}
	for i, a := range cmd.Attachments {
		full, err := s.attachment(cmd.Conversation, a.ID)
		if errors.Is(err, ErrNotFound) {
			return rejection(cmd, fmt.Errorf("attachment %q: %w", clip(a.ID), ErrNotFound))
		}
		if err != nil {
			if down := s.storeReachable(); down != nil {
				return rejection(cmd, down)
			}
			s.opts.Logger.Error("cannot read an attachment from the database", "conversation", cmd.Conversation, "err", err)
			return rejection(cmd, fmt.Errorf("attachment %q cannot be read", clip(a.ID)))
		}
		cmd.Attachments[i] = full
	}
	if err := s.storeReachable(); err != nil {
		return rejection(cmd, err)
	}
	rc, err := s.eng.Do(ctx, cmd)
	if errors.Is(err, ErrLocked) && s.rep.inbox != nil {
		rc, err = s.forward(ctx, cmd) // another replica's engine holds it
	}
	if err != nil {
		if down := s.storeReachable(); down != nil {
			err = fmt.Errorf("%w (%v)", down, err)
		}
		return rejection(cmd, err)
	}
	rc.CommandID, rc.Conversation, rc.Kind = cmd.CommandID, cmd.Conversation, cmd.Kind
	if rc.State == "" {
		rc.State = transcript.CommandRunning
	}
	return rc
}
