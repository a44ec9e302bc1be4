// Package client is the Go client of folio's web protocol (docs/protocol.md):
// it connects to a folio process that owns conversations (over its local
// endpoint, a Unix socket, or over TCP with a token), opens a conversation
// and mirrors it into a transcript.Store, which a terminal paints as it
// paints its own engine's store, and sends commands (send, steer, stop,
// approve, retry) with the client's command IDs, returning the owner's
// receipts. In a long live session the mirror keeps the end of the
// document, as the owner's engine keeps its store: the settled entries of
// earlier turns leave it, and readers page them from the log.
//
// Concurrency: a Conn is safe for concurrent use. One goroutine reads the
// connection; it applies a conversation's live events to its store in the
// order they arrive, and answers callers waiting for their requests.
// Commands may be sent from any goroutine.
package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/server"
)

// Name is what the client says it is in its hello.
const Name = "folio-go-client/1"

// ErrClosed is returned for requests on a connection that has gone.
var ErrClosed = errors.New("client: the connection to the owner is closed")

// Error is an error frame the owner answered a request with.
type Error struct {
	Code, Message string
	Rebuild       bool
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Conn is one WebSocket connection to a folio process.
type Conn struct {
	ws   *websocket.Conn
	http *http.Client
	base string // http://host for HTTP resources
	tok  string

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	err    error // why reading stopped; set before done closes

	n       atomic.Uint64
	mu      sync.Mutex
	pending map[string]chan frame
	convs   map[string]*Conversation
}

// DialLocal connects to the local endpoint at path (history.EndpointPath).
func DialLocal(ctx context.Context, path string) (*Conn, error) {
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}}}
	return dial(ctx, hc, "http://folio", "")
}

// Dial connects to a server at base (http://127.0.0.1:7878) with token
// (empty for a server started with --no-token).
func Dial(ctx context.Context, base, token string) (*Conn, error) {
	return dial(ctx, http.DefaultClient, strings.TrimSuffix(base, "/"), token)
}

func dial(ctx context.Context, hc *http.Client, base, token string) (*Conn, error) {
	opts := &websocket.DialOptions{HTTPClient: hc}
	if token != "" {
		opts.HTTPHeader = http.Header{"Authorization": {"Bearer " + token}}
	}
	ws, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/api/v2/ws", opts)
	if err != nil {
		if resp != nil && resp.Body != nil {
			// A refusal (peer-not-allowed, unauthorized) says why in its body.
			var body struct {
				Error struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.UnmarshalRead(resp.Body, &body, loose) == nil && body.Error.Code != "" {
				return nil, &Error{Code: body.Error.Code, Message: body.Error.Message}
			}
		}
		return nil, fmt.Errorf("client: connect: %w", err)
	}
	ws.SetReadLimit(64 << 20)
	cctx, cancel := context.WithCancel(context.Background())
	c := &Conn{ws: ws, http: hc, base: base, tok: token, ctx: cctx, cancel: cancel, done: make(chan struct{}),
		pending: map[string]chan frame{}, convs: map[string]*Conversation{}}
	go c.read()
	f, err := c.call(ctx, map[string]any{"type": "hello", "protocol": server.ProtocolVersion, "client": Name})
	if err == nil && f.Type != "welcome" {
		err = fmt.Errorf("client: hello answered %q", f.Type)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Done is closed when the connection ends: closed by either side, or the
// owner's process gone.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err says why the connection ended, once Done is closed.
func (c *Conn) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// Close closes the connection.
func (c *Conn) Close() error {
	err := c.ws.Close(websocket.StatusNormalClosure, "")
	c.cancel()
	<-c.done
	return err
}

// frame is any server frame, decoded loosely; raw keeps its bytes.
type frame struct {
	Type         string                `json:"type"`
	Re           string                `json:"re"`
	Code         string                `json:"code"`
	Message      string                `json:"message"`
	Rebuild      bool                  `json:"rebuild"`
	Conversation string                `json:"conversation"`
	Token        string                `json:"token"`
	Head         string                `json:"head"`
	Generation   int64                 `json:"generation"`
	Seq          int64                 `json:"seq"`
	Entries      int                   `json:"entries"`
	Op           server.ChangeOp       `json:"op"`
	Entry        jsontext.Value        `json:"entry"`
	Revision     int64                 `json:"revision"`
	After        string                `json:"after"`
	Open         bool                  `json:"open"`
	EntryID      string                `json:"entryId"`
	Base         int64                 `json:"base"`
	Offset       int                   `json:"offset"`
	Text         string                `json:"text"`
	InvocationID string                `json:"invocationId"`
	Presentation jsontext.Value        `json:"presentation"`
	Items        []server.QueueItem    `json:"items"`
	State        jsontext.Value        `json:"state"`
	Turn         string                `json:"turn"`
	Reply        string                `json:"reply"`
	Activity     string                `json:"activity"`
	Retry        *server.TurnRetry     `json:"retry"`
	Context      int64                 `json:"context"`
	Totals       server.Usage          `json:"totals"`
	Children     []server.ChildState   `json:"children"`
	Allowed      []string              `json:"allowed"`
	Steers       []server.QueueItem    `json:"steers"`
	Approvals    []server.ApprovalItem `json:"approvals"`
	Receipt      *server.Receipt       `json:"receipt"`
	Checkpoint   *checkpoint           `json:"checkpoint"`

	// page answers
	// Groups is a page's groups (a snapshot's count of them is read
	// from here too, so it stays raw until a page decodes it).
	Groups        jsontext.Value `json:"groups"`
	HasMoreBefore bool           `json:"hasMoreBefore"`
}

type group struct {
	Index   int              `json:"index"`
	Entries []jsontext.Value `json:"entries"`
}

type checkpoint struct {
	Replaced bool `json:"replaced"`
	Entries  []struct {
		Entry    jsontext.Value `json:"entry"`
		Revision int64          `json:"revision"`
		Open     bool           `json:"open"`
	} `json:"entries"`
	Presentations []struct {
		EntryID      string         `json:"entryId"`
		Revision     int64          `json:"revision"`
		Presentation jsontext.Value `json:"presentation"`
	} `json:"presentations"`
}

var loose = json.RejectUnknownMembers(false)

func (c *Conn) read() {
	defer close(c.done)
	for {
		_, b, err := c.ws.Read(c.ctx)
		if err != nil {
			c.err = err
			c.mu.Lock()
			for id, ch := range c.pending {
				close(ch)
				delete(c.pending, id)
			}
			c.mu.Unlock()
			return
		}
		var f frame
		if err := json.Unmarshal(b, &f, loose); err != nil {
			// A frame this client cannot read changes nothing; an answer
			// to a request fails that request.
			var env struct {
				Re string `json:"re"`
			}
			if json.Unmarshal(b, &env, loose) != nil || env.Re == "" {
				continue
			}
			f = frame{Type: "error", Re: env.Re, Code: "undecodable", Message: err.Error()}
		}
		if f.Re != "" {
			c.mu.Lock()
			ch := c.pending[f.Re]
			delete(c.pending, f.Re)
			c.mu.Unlock()
			if ch != nil {
				ch <- f
			}
			continue
		}
		if f.Type == "event" {
			c.mu.Lock()
			cv := c.convs[f.Conversation]
			c.mu.Unlock()
			if cv != nil {
				cv.event(f)
			}
		}
	}
}

// call sends a request with a fresh ID and waits for its answer. An error
// frame is returned as *Error.
func (c *Conn) call(ctx context.Context, m map[string]any) (frame, error) {
	id := "g" + strconv.FormatUint(c.n.Add(1), 36)
	m["id"] = id
	b, err := json.Marshal(m)
	if err != nil {
		return frame{}, err
	}
	ch := make(chan frame, 1)
	c.mu.Lock()
	select {
	case <-c.done:
		c.mu.Unlock()
		return frame{}, ErrClosed
	default:
	}
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return frame{}, fmt.Errorf("client: %w", err)
	}
	select {
	case f, ok := <-ch:
		if !ok {
			return frame{}, ErrClosed
		}
		if f.Type == "error" {
			return f, &Error{Code: f.Code, Message: f.Message, Rebuild: f.Rebuild}
		}
		return f, nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return frame{}, ctx.Err()
	}
}

// Create makes a new, empty conversation on the owner and returns its ID.
func (c *Conn) Create(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/api/v2/conversations", strings.NewReader("{}"))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.tok != "" {
		req.Header.Set("Authorization", "Bearer "+c.tok)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("client: create: %w", err)
	}
	defer resp.Body.Close()
	var m struct {
		ID string `json:"id"`
	}
	if resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("client: create: HTTP %d", resp.StatusCode)
	}
	if err := json.UnmarshalRead(resp.Body, &m, loose); err != nil {
		return "", fmt.Errorf("client: create: %w", err)
	}
	return m.ID, nil
}

// groups decodes a page answer's groups.
func (f frame) groups() ([]group, error) {
	var gs []group
	if len(f.Groups) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(f.Groups, &gs, loose); err != nil {
		return nil, fmt.Errorf("client: a page's groups: %w", err)
	}
	return gs, nil
}
