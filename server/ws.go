package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/server/pager"
)

// This file is one WebSocket connection: the upgrade, the goroutine that
// reads frames and hands each to its handler (ws_read.go, ws_command.go),
// and the one that writes the connection's outgoing queue.

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

	// who carries the person the upgrade was admitted for (accounts.go),
	// without the request's cancellation.
	who context.Context
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

// person is the context naming who the connection was admitted for.
func (c *conn) person() context.Context {
	if c.who == nil {
		return context.Background()
	}
	return c.who
}

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
		who:     context.WithoutCancel(r.Context()),
	}
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	go c.writeLoop()
	go c.watchSession() // accounts.go
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
	case cmdSend, cmdSteer, cmdStop, cmdApprove, cmdRetry, cmdEdit, cmdSelectBranch, cmdDismiss:
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
