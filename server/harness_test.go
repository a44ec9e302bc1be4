package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/transcript"
)

// testToken is a token that passes CheckToken.
const testToken = "test-token-0123456789"

// testServer is a real server on a loopback port.
type testServer struct {
	*Server
	url  string // http://127.0.0.1:port
	data string
}

func newTestServer(t testing.TB, opts Options) *testServer {
	t.Helper()
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	if opts.TempDir == "" {
		opts.TempDir = t.TempDir()
	}
	if opts.FollowInterval == 0 {
		opts.FollowInterval = 5 * time.Millisecond
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		s.Close()
		hs.Close()
	})
	return &testServer{Server: s, url: hs.URL, data: opts.DataDir}
}

// writeGen writes a generated conversation into the server's data folder.
func (ts *testServer) writeGen(t testing.TB, id string, n int, seed uint64) string {
	t.Helper()
	p := filepath.Join(ts.data, "conversations", id+".jsonl")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := gen.Write(f, gen.Options{Messages: n, Seed: seed, ConversationID: id}); err != nil {
		t.Fatal(err)
	}
	return p
}

// frame is a decoded server frame; raw keeps the bytes.
type frame struct {
	Type         string         `json:"type"`
	Re           string         `json:"re"`
	Code         string         `json:"code"`
	Message      string         `json:"message"`
	Rebuild      bool           `json:"rebuild"`
	Token        string         `json:"token"`
	Conversation string         `json:"conversation"`
	Head         string         `json:"head"`
	Generation   int64          `json:"generation"`
	Seq          int64          `json:"seq"`
	Groups       jsontext.Value `json:"groups"`
	GroupCount   int            `json:"-"`
	First        *int           `json:"first"`
	Last         *int           `json:"last"`
	HasMoreB     bool           `json:"hasMoreBefore"`
	HasMoreA     bool           `json:"hasMoreAfter"`
	Graph        bool           `json:"graph"`
	Entries      int            `json:"entries"`
	Op           string         `json:"op"`
	Entry        jsontext.Value `json:"entry"`
	Revision     int64          `json:"revision"`
	EntryID      string         `json:"entryId"`
	Base         int64          `json:"base"`
	Offset       int            `json:"offset"`
	Text         string         `json:"text"`
	Open         bool           `json:"open"`
	After        string         `json:"after"`
	Receipt      *Receipt       `json:"receipt"`
	Checkpoint   *checkpoint    `json:"checkpoint"`
	Coverage     jsontext.Value `json:"coverage"`
	Store        string         `json:"store"`
	raw          []byte
}

// client is a protocol client over a real WebSocket.
type client struct {
	t      testing.TB
	ws     *websocket.Conn
	frames chan frame
	held   []frame
	n      atomic.Int64
	ctx    context.Context
	err    error // why reading stopped; set before frames closes
	// tap, when set, sees every frame as it arrives, before await.
	tap atomic.Pointer[func(frame)]
}

func (ts *testServer) dial(t testing.TB) *client {
	t.Helper()
	c := ts.dialRaw(t)
	f := c.call(map[string]any{"type": "hello", "protocol": ProtocolVersion})
	if f.Type != "welcome" {
		t.Fatalf("hello: %s", f.raw)
	}
	return c
}

func (ts *testServer) dialRaw(t testing.TB) *client {
	t.Helper()
	var h http.Header
	if ts.opts.Token != "" {
		h = http.Header{"Authorization": {"Bearer " + ts.opts.Token}}
	}
	return ts.dialWith(t, h)
}

// dialWith connects with the upgrade's headers h.
func (ts *testServer) dialWith(t testing.TB, h http.Header) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	var do *websocket.DialOptions
	if h != nil {
		do = &websocket.DialOptions{HTTPHeader: h}
		if p := h.Get("Sec-WebSocket-Protocol"); p != "" {
			h.Del("Sec-WebSocket-Protocol")
			for _, o := range strings.Split(p, ",") {
				do.Subprotocols = append(do.Subprotocols, strings.TrimSpace(o))
			}
		}
	}
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.url, "http")+"/api/v2/ws", do)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(64 << 20)
	c := &client{t: t, ws: ws, frames: make(chan frame, 4096), ctx: ctx}
	go func() {
		defer close(c.frames)
		for {
			_, b, err := ws.Read(ctx)
			if err != nil {
				c.err = err
				return
			}
			var f frame
			if err := json.Unmarshal(b, &f); err != nil {
				f = frame{Type: "undecodable"}
			}
			f.raw = b
			if tap := c.tap.Load(); tap != nil {
				(*tap)(f)
			}
			c.frames <- f
		}
	}()
	t.Cleanup(func() { ws.CloseNow() })
	return c
}

func (c *client) write(b []byte) {
	c.t.Helper()
	if err := c.ws.Write(c.ctx, websocket.MessageText, b); err != nil {
		c.t.Fatal(err)
	}
}

// call sends a frame with a fresh id and returns the answer to it, holding
// other frames (events) for later.
func (c *client) call(m map[string]any) frame {
	c.t.Helper()
	id := fmt.Sprintf("r%d", c.n.Add(1))
	m["id"] = id
	b, err := json.Marshal(m)
	if err != nil {
		c.t.Fatal(err)
	}
	c.write(b)
	return c.await(func(f frame) bool { return f.Re == id })
}

// await returns the first frame (held or new) that matches.
func (c *client) await(match func(frame) bool) frame {
	c.t.Helper()
	for i, f := range c.held {
		if match(f) {
			c.held = append(c.held[:i:i], c.held[i+1:]...)
			return f
		}
	}
	for f := range c.frames {
		if match(f) {
			return f
		}
		c.held = append(c.held, f)
	}
	c.t.Fatal("connection closed while waiting for a frame")
	return frame{}
}

func (c *client) event(op string) frame {
	c.t.Helper()
	return c.await(func(f frame) bool { return f.Type == "event" && f.Op == op })
}

func (c *client) open(conv string) frame {
	c.t.Helper()
	f := c.call(map[string]any{"type": "open", "conversation": conv})
	if f.Type != "snapshot" {
		c.t.Fatalf("open %s: %s", conv, f.raw)
	}
	return f
}

func (c *client) page(tok, conv, anchor, dir string, budget int) frame {
	c.t.Helper()
	return c.call(map[string]any{"type": "page", "token": tok, "conversation": conv, "anchor": anchor, "direction": dir, "budgetBytes": budget})
}

type pageGroup struct {
	Index   int `json:"index"`
	Entries []struct {
		ID string `json:"id"`
	} `json:"entries"`
}

// groups decodes a page's groups, keeping only what the tests look at.
func (f frame) groups(t testing.TB) []pageGroup {
	t.Helper()
	var gs []pageGroup
	if err := json.Unmarshal(f.Groups, &gs, json.RejectUnknownMembers(false)); err != nil {
		t.Fatalf("page groups: %v", err)
	}
	return gs
}

func countFiles(t testing.TB, dir string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

// appendTo applies an append event to the entry it names, checking that
// the entry is at the revision and text length the event expects.
func (f frame) appendTo(t testing.TB, e transcript.Entry, rev int64) transcript.Entry {
	t.Helper()
	if f.Base != rev {
		t.Fatalf("append against revision %d; the client holds %d: %s", f.Base, rev, f.raw)
	}
	if n := utf16Len(textOf(e)); n != f.Offset {
		t.Fatalf("append at offset %d; the text is %d long: %s", f.Offset, n, f.raw)
	}
	return withText(e, textOf(e)+f.Text)
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func tsAt(sec int) time.Time { return time.Date(2026, 3, 1, 0, 0, sec, 0, time.UTC) }

func io_copy(w *strings.Builder, resp *http.Response) (int64, error) { return io.Copy(w, resp.Body) }
