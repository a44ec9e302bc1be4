// Package providertest holds what tests of provider clients and of their
// consumers share: a loopback server that replays recorded SSE streams, a
// manual clock for the idle watchdog, and Check, the conformance rules every
// provider's event sequence must follow.
//
// Concurrency: Server and Clock are safe for concurrent use; Check and
// Collect are plain functions.
package providertest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodev/folio/provider"
)

// Reply is one canned HTTP response. Body is written in pieces split at
// blank lines (one SSE event each), flushed after each piece, so a client
// sees a real stream. A line ": stall" in Body makes the server stop
// sending there and hold the connection open until the client goes away.
type Reply struct {
	Status int
	Header map[string]string
	Body   []byte
}

// Fixture reads a testdata file as an SSE reply with status 200.
func Fixture(t testing.TB, path string) Reply {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return Reply{Status: 200, Header: map[string]string{"Content-Type": "text/event-stream"}, Body: b}
}

// Server is a loopback HTTP server answering each request with the next
// Reply (the last one repeats) and recording the request bodies.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	replies  []Reply
	requests [][]byte
	headers  []http.Header
	stop     chan struct{}
}

// NewServer starts a Server, closed when the test ends.
func NewServer(t testing.TB, replies ...Reply) *Server {
	s := &Server{replies: replies, stop: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(s.stop) }) // runs first: frees stalled handlers
	return s
}

var stallMark = []byte(": stall")

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, body)
	s.headers = append(s.headers, r.Header.Clone())
	rep := s.replies[min(n, len(s.replies)-1)]
	s.mu.Unlock()
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(rep.Status)
	flusher, _ := w.(http.Flusher)
	for _, piece := range bytes.SplitAfter(rep.Body, []byte("\n\n")) {
		if i := bytes.Index(piece, stallMark); i >= 0 {
			w.Write(piece[:i])
			if flusher != nil {
				flusher.Flush()
			}
			select {
			case <-r.Context().Done():
			case <-s.stop:
			}
			return
		}
		w.Write(piece)
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// Requests returns the bodies of the requests received so far.
func (s *Server) Requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.requests...)
}

// Headers returns the headers of the requests received so far.
func (s *Server) Headers() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.headers...)
}

// Clock is a manual provider.Clock: time moves only when Advance is called,
// which runs the callbacks of timers that came due.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*timer
}

// NewClock returns a Clock set to a fixed instant.
func NewClock() *Clock { return &Clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

type timer struct {
	c    *Clock
	when time.Time
	f    func()
	live bool
}

// Now returns the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f to run when the clock has been advanced past d.
func (c *Clock) AfterFunc(d time.Duration, f func()) provider.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &timer{c: c, when: c.now.Add(d), f: f, live: true}
	c.timers = append(c.timers, t)
	return t
}

func (t *timer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.live
	t.when, t.live = t.c.now.Add(d), true
	if !was {
		t.c.timers = append(t.c.timers, t)
	}
	return was
}

func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.live
	t.live = false
	return was
}

// Advance moves the clock forward by d and runs, in order, the callbacks of
// the timers that came due, each in its own goroutine as time.AfterFunc does.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*timer
	kept := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case !t.live:
		case !t.when.After(c.now):
			t.live = false
			due = append(due, t)
		default:
			kept = append(kept, t)
		}
	}
	c.timers = kept
	c.mu.Unlock()
	sort.Slice(due, func(i, j int) bool { return due[i].when.Before(due[j].when) })
	for _, t := range due {
		go t.f()
	}
}

// Collect reads a stream to its end. It returns the events received and
// the error that ended it (nil after io.EOF), and closes the stream.
func Collect(s provider.Stream) ([]provider.Event, error) {
	defer s.Close()
	var evs []provider.Event
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

// Check reports the first way evs breaks the event contract of
// provider.Stream. complete says whether the stream ended normally (then it
// must close with Done); a failed stream may stop anywhere.
//
// The rules: tool calls start with ToolCallStart at the next index, have
// fragments only while open, and end once with valid JSON arguments equal
// to their fragments joined (or {} when there were none); a reasoning block
// is closed by ReasoningDone before text or a tool call follows it; Usage
// comes at most once; Done comes once, last, with every tool call ended.
func Check(evs []provider.Event, complete bool) error {
	type call struct {
		id, name string
		args     bytes.Buffer
		ended    bool
	}
	var calls []*call
	inReasoning, sawUsage := false, false
	for i, ev := range evs {
		at := fmt.Sprintf("event %d (%s)", i, ev.Kind)
		switch ev.Kind {
		case provider.TextDelta:
			if inReasoning {
				return fmt.Errorf("%s: text while a reasoning block is open", at)
			}
		case provider.ReasoningDelta:
			inReasoning = true
		case provider.ReasoningDone:
			inReasoning = false
		case provider.ToolCallStart:
			if inReasoning {
				return fmt.Errorf("%s: tool call while a reasoning block is open", at)
			}
			if ev.Index != len(calls) {
				return fmt.Errorf("%s: index %d, want %d", at, ev.Index, len(calls))
			}
			if ev.ID == "" || ev.Name == "" {
				return fmt.Errorf("%s: tool call without id or name", at)
			}
			calls = append(calls, &call{id: ev.ID, name: ev.Name})
		case provider.ToolCallDelta, provider.ToolCallEnd:
			if ev.Index < 0 || ev.Index >= len(calls) || calls[ev.Index].ended {
				return fmt.Errorf("%s: index %d is not an open tool call", at, ev.Index)
			}
			c := calls[ev.Index]
			if ev.Kind == provider.ToolCallDelta {
				c.args.WriteString(ev.Text)
				continue
			}
			c.ended = true
			if ev.ID != c.id || ev.Name != c.name {
				return fmt.Errorf("%s: ends %s/%s but started as %s/%s", at, ev.ID, ev.Name, c.id, c.name)
			}
			if !ev.Arguments.IsValid() {
				return fmt.Errorf("%s: arguments are not valid JSON", at)
			}
			want := c.args.String()
			if want == "" {
				want = "{}"
			}
			if string(ev.Arguments) != want {
				return fmt.Errorf("%s: arguments %s differ from their fragments %s", at, ev.Arguments, want)
			}
		case provider.UsageReport:
			if sawUsage || ev.Usage == nil {
				return fmt.Errorf("%s: usage repeated or empty", at)
			}
			sawUsage = true
		case provider.Done:
			if i != len(evs)-1 {
				return fmt.Errorf("%s: Done is not the last event", at)
			}
			for j, c := range calls {
				if !c.ended {
					return fmt.Errorf("%s: tool call %d never ended", at, j)
				}
			}
			if inReasoning {
				return fmt.Errorf("%s: reasoning block never closed", at)
			}
		default:
			return fmt.Errorf("%s: unknown kind", at)
		}
	}
	if complete && (len(evs) == 0 || evs[len(evs)-1].Kind != provider.Done) {
		return fmt.Errorf("a complete stream must end with Done")
	}
	return nil
}

// Summary renders events one per string, compactly, for table tests:
// "text:Hello", "tool-start:0:call_1:shell", "tool-end:0:{...}",
// "usage:p=10,c=5,t=15", "done:stop".
func Summary(evs []provider.Event) []string {
	out := make([]string, 0, len(evs))
	for _, ev := range evs {
		s := ev.Kind.String()
		switch ev.Kind {
		case provider.TextDelta, provider.ReasoningDelta:
			s += ":" + ev.Text
		case provider.ReasoningDone:
			if ev.Signature != "" {
				s += ":sig=" + ev.Signature
			}
			if ev.Redacted != "" {
				s += ":redacted=" + ev.Redacted
			}
		case provider.ToolCallStart:
			s += fmt.Sprintf(":%d:%s:%s", ev.Index, ev.ID, ev.Name)
		case provider.ToolCallDelta:
			s += fmt.Sprintf(":%d:%s", ev.Index, ev.Text)
		case provider.ToolCallEnd:
			s += fmt.Sprintf(":%d:%s", ev.Index, ev.Arguments)
		case provider.UsageReport:
			s += ":" + UsageString(ev.Usage)
		case provider.Done:
			s += ":" + string(ev.FinishReason)
		}
		out = append(out, s)
	}
	return out
}

// UsageString renders the reported fields of u, skipping unreported ones.
func UsageString(u *provider.Usage) string {
	if u == nil {
		return "<nil>"
	}
	var parts []string
	add := func(name string, v *int64) {
		if v != nil {
			parts = append(parts, fmt.Sprintf("%s=%d", name, *v))
		}
	}
	add("p", u.Prompt)
	add("c", u.Completion)
	add("t", u.Total)
	add("cr", u.CacheRead)
	add("cw", u.CacheWrite)
	add("r", u.Reasoning)
	if u.CostUSD != nil {
		parts = append(parts, fmt.Sprintf("$=%g", *u.CostUSD))
	}
	return strings.Join(parts, ",")
}
