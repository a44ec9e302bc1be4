package engine_test

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/provider"
)

// scripted is a Provider that plays canned replies, one per request, and
// records every request. It implements the real interface; waits use the
// real clock, which testing/synctest makes virtual.
type scripted struct {
	mu       sync.Mutex
	replies  [][]item
	requests []provider.Request
	ctxs     []context.Context
	started  chan int // receives the request number as each stream starts
}

// item is one step of a canned reply: an event, a pause, an error, or a
// block that lasts until the request is cancelled (a silent provider).
type item struct {
	ev    provider.Event
	pause time.Duration
	err   error
	block bool
	gate  chan struct{} // wait for this channel to close
}

func newScripted(replies ...[]item) *scripted {
	return &scripted{replies: replies, started: make(chan int, 100)}
}

func (p *scripted) Name() string { return "scripted" }

func (p *scripted) Stream(ctx context.Context, req provider.Request) (provider.Stream, error) {
	p.mu.Lock()
	n := len(p.requests)
	p.requests = append(p.requests, req)
	p.ctxs = append(p.ctxs, ctx)
	var r []item
	if n < len(p.replies) {
		r = p.replies[n]
	} else {
		r = reply(text("(no more script)"), done())
	}
	p.mu.Unlock()
	p.started <- n
	if len(r) > 0 && r[0].err != nil && r[0].ev.Kind == 0 && r[0].pause == 0 {
		return nil, r[0].err
	}
	return &scriptStream{ctx: ctx, items: r}, nil
}

func (p *scripted) ctx(i int) context.Context {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ctxs[i]
}

func (p *scripted) reqs() []provider.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]provider.Request(nil), p.requests...)
}

type scriptStream struct {
	ctx   context.Context
	items []item
	err   error
}

func (s *scriptStream) Next() (provider.Event, error) {
	for {
		if s.err != nil {
			return provider.Event{}, s.err
		}
		if err := s.ctx.Err(); err != nil {
			s.err = provider.Classify(s.ctx, "scripted", err)
			continue
		}
		if len(s.items) == 0 {
			s.err = io.EOF
			continue
		}
		it := s.items[0]
		s.items = s.items[1:]
		switch {
		case it.pause > 0:
			t := time.NewTimer(it.pause)
			select {
			case <-t.C:
			case <-s.ctx.Done():
				t.Stop()
			}
		case it.block:
			<-s.ctx.Done()
		case it.gate != nil:
			select {
			case <-it.gate:
			case <-s.ctx.Done():
			}
		case it.err != nil:
			s.err = it.err
		default:
			if it.ev.Kind == provider.Done {
				s.items = nil
			}
			return it.ev, nil
		}
	}
}

func (s *scriptStream) Close() error { return nil }

func reply(items ...item) []item { return items }
func text(s string) item         { return item{ev: provider.Event{Kind: provider.TextDelta, Text: s}} }
func think(s string) item        { return item{ev: provider.Event{Kind: provider.ReasoningDelta, Text: s}} }
func thinkDone() item {
	return item{ev: provider.Event{Kind: provider.ReasoningDone, Signature: "sig"}}
}
func pause(d time.Duration) item { return item{pause: d} }
func block() item                { return item{block: true} }
func gate(c chan struct{}) item  { return item{gate: c} }
func fail(err error) item        { return item{err: err} }
func done() item {
	return item{ev: provider.Event{Kind: provider.Done, FinishReason: provider.FinishStop}}
}
func usage(prompt, completion int64) item {
	return item{ev: provider.Event{Kind: provider.UsageReport, Usage: &provider.Usage{
		Prompt: provider.Int(prompt), Completion: provider.Int(completion), Total: provider.Int(prompt + completion)}}}
}
func callStart(i int, id, name string) item {
	return item{ev: provider.Event{Kind: provider.ToolCallStart, Index: i, ID: id, Name: name}}
}
func callDelta(i int, frag string) item {
	return item{ev: provider.Event{Kind: provider.ToolCallDelta, Index: i, Text: frag}}
}
func callEnd(i int, id, name, args string) item {
	return item{ev: provider.Event{Kind: provider.ToolCallEnd, Index: i, ID: id, Name: name, Arguments: jsontext.Value(args)}}
}

// call is a complete tool call streamed in fragments.
func call(i int, id, name string, frags ...string) []item {
	out := []item{callStart(i, id, name)}
	var all string
	for _, f := range frags {
		out = append(out, callDelta(i, f))
		all += f
	}
	return append(out, callEnd(i, id, name, all))
}

func cat(parts ...any) []item {
	var out []item
	for _, p := range parts {
		switch v := p.(type) {
		case item:
			out = append(out, v)
		case []item:
			out = append(out, v...)
		}
	}
	return out
}
