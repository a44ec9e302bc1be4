// Package demo is folio's built-in offline model, the default when no real
// provider is configured. It needs no network and no account, answers from a
// fixed script chosen by the last message, and is deterministic: the same
// request always yields the same events. It still behaves like a real model
// where folio's engine and views can tell: it streams at a configurable
// rate with real timing (so tokens per second are real), reasons before it
// answers, calls the engine's real tools (a shell command listing the
// folder, reading a file) over several steps and uses their results, writes
// markdown with code, tables and math, reports realistic usage, and on
// request fails after partial output with any error class.
//
// Concurrency: a *Provider is safe for concurrent use; each Stream belongs
// to one goroutine (see package provider). Timing uses the time package, so
// tests run it under testing/synctest.
package demo

import (
	"context"
	"hash/fnv"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/provider"
)

func init() {
	provider.Register(provider.TypeDemo, func(c provider.Config) (provider.Provider, error) {
		return New(Options{Name: c.Name, TokensPerSecond: c.TokensPerSecond, FirstToken: DefaultFirstToken}), nil
	})
}

// DefaultFirstToken is the demo's time to first token, like a real model
// thinking about the prompt.
const DefaultFirstToken = 300 * time.Millisecond

// Options configure the demo model.
type Options struct {
	// Name is what Provider.Name returns; "" means "demo".
	Name string
	// TokensPerSecond is the streaming rate; 0 sends as fast as the reader
	// takes events (for benchmarks and headless tests).
	TokensPerSecond float64
	// FirstToken is the delay before the first token.
	FirstToken time.Duration
}

// Provider is the demo model.
type Provider struct {
	opts Options

	mu     sync.Mutex
	failed map[uint64]bool // conversations whose "/demo fail … once" already failed
}

var _ provider.Provider = (*Provider)(nil)

// New returns a demo model.
func New(o Options) *Provider {
	if o.Name == "" {
		o.Name = provider.TypeDemo
	}
	return &Provider{opts: o, failed: map[uint64]bool{}}
}

// Name returns the provider name.
func (p *Provider) Name() string { return p.opts.Name }

// Stream plans the whole reply from the request, then streams it.
func (p *Provider) Stream(ctx context.Context, req provider.Request) (provider.Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, provider.Classify(ctx, p.opts.Name, err)
	}
	h := hashRequest(req)
	plan := p.plan(req, h)
	if plan.failNow != nil {
		return nil, plan.failNow
	}
	s := &stream{ctx: ctx, name: p.opts.Name, rate: p.opts.TokensPerSecond, start: time.Now(), first: p.opts.FirstToken}
	s.build(plan, h, promptTokens(req))
	return s, nil
}

// once reports whether a "once" failure should fire for conversation h,
// remembering that it did.
func (p *Provider) once(h uint64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed[h] {
		return false
	}
	p.failed[h] = true
	return true
}

// hashRequest fingerprints the conversation up to its last user message, so
// tool-call IDs are stable for the same input and differ between turns.
func hashRequest(req provider.Request) uint64 {
	f := fnv.New64a()
	for _, m := range req.Messages {
		f.Write([]byte(m.Role))
		f.Write([]byte{0})
		f.Write([]byte(m.Content))
		f.Write([]byte{0})
		for _, c := range m.ToolCalls {
			f.Write([]byte(c.ID))
			f.Write(c.Arguments)
		}
	}
	return f.Sum64()
}

// part is one piece of a planned reply.
type part struct {
	kind provider.EventKind // TextDelta, ReasoningDelta or ToolCallStart
	text string             // text or reasoning
	name string             // tool name
	args string             // tool arguments (JSON)
}

type plan struct {
	parts   []part
	finish  provider.FinishReason
	failNow *provider.Error // fail before any output
	failEnd *provider.Error // fail after the parts
}

// stream replays a planned reply at the configured rate.
type stream struct {
	ctx   context.Context
	name  string
	rate  float64
	start time.Time
	first time.Duration

	events []provider.Event
	tokens []int32 // per event: its token ordinal (1-based), or 0 for no wait
	next   int
	end    error // returned after the last event
	timer  *time.Timer
	closed bool
}

// build turns the plan into events, counting tokens as it goes.
func (s *stream) build(pl plan, h uint64, prompt int64) {
	var n int32
	add := func(ev provider.Event, token bool) {
		s.events = append(s.events, ev)
		if token {
			n++
			s.tokens = append(s.tokens, n)
		} else {
			s.tokens = append(s.tokens, 0)
		}
	}
	calls := 0
	reasoning := false
	for _, pt := range pl.parts {
		if pt.kind != provider.ReasoningDelta && reasoning {
			reasoning = false
			add(provider.Event{Kind: provider.ReasoningDone}, false)
		}
		switch pt.kind {
		case provider.ReasoningDelta:
			reasoning = true
			for _, tok := range tokenize(pt.text) {
				add(provider.Event{Kind: provider.ReasoningDelta, Text: tok}, true)
			}
		case provider.TextDelta:
			for _, tok := range tokenize(pt.text) {
				add(provider.Event{Kind: provider.TextDelta, Text: tok}, true)
			}
		case provider.ToolCallStart:
			id := callID(h, calls)
			add(provider.Event{Kind: provider.ToolCallStart, Index: calls, ID: id, Name: pt.name}, true)
			for _, frag := range tokenize(pt.args) {
				add(provider.Event{Kind: provider.ToolCallDelta, Index: calls, Text: frag}, true)
			}
			add(provider.Event{Kind: provider.ToolCallEnd, Index: calls, ID: id, Name: pt.name, Arguments: jsontext.Value(pt.args)}, false)
			calls++
		}
	}
	if reasoning {
		add(provider.Event{Kind: provider.ReasoningDone}, false)
	}
	if pl.failEnd != nil {
		s.end = pl.failEnd
		return
	}
	completion := int64(n)
	cost := 0.0
	add(provider.Event{Kind: provider.UsageReport, Usage: &provider.Usage{
		Prompt: provider.Int(prompt), Completion: provider.Int(completion), Total: provider.Int(prompt + completion), CostUSD: &cost,
	}}, false)
	add(provider.Event{Kind: provider.Done, FinishReason: pl.finish}, false)
	s.end = io.EOF
}

func callID(h uint64, i int) string {
	const hex = "0123456789abcdef"
	b := []byte("call_demo_000000000000_0")
	for j := 0; j < 12; j++ {
		b[10+j] = hex[(h>>(4*uint(j)))&0xf]
	}
	b[len(b)-1] = byte('0' + i%10)
	return string(b)
}

// Next returns the next event once its time has come.
func (s *stream) Next() (provider.Event, error) {
	if s.closed {
		return provider.Event{}, s.cancelled()
	}
	if s.next >= len(s.events) {
		return provider.Event{}, s.end
	}
	if err := s.wait(s.tokens[s.next]); err != nil {
		s.end = err
		s.next = len(s.events)
		return provider.Event{}, err
	}
	ev := s.events[s.next]
	s.next++
	return ev, nil
}

// wait sleeps until token number n is due: the first token after the
// first-token delay, then one every 1/rate seconds, on a fixed schedule so
// slow readers do not drift the rate.
func (s *stream) wait(n int32) error {
	if err := s.ctx.Err(); err != nil {
		return s.cancelled()
	}
	if n == 0 || s.rate <= 0 {
		return nil
	}
	due := s.start.Add(s.first + time.Duration(float64(n-1)/s.rate*float64(time.Second)))
	d := time.Until(due)
	if d <= 0 {
		return nil
	}
	if s.timer == nil {
		s.timer = time.NewTimer(d)
	} else {
		s.timer.Reset(d)
	}
	select {
	case <-s.timer.C:
		return nil
	case <-s.ctx.Done():
		s.timer.Stop()
		return s.cancelled()
	}
}

func (s *stream) cancelled() error {
	return &provider.Error{Class: provider.ClassCancelled, Provider: s.name, Msg: "the request was cancelled", Err: context.Canceled}
}

// Close ends the stream; later calls to Next report cancellation.
func (s *stream) Close() error {
	if !s.closed && s.next < len(s.events) {
		s.closed = true
	}
	if s.timer != nil {
		s.timer.Stop()
	}
	return nil
}

// tokenize splits text the way a tokenizer roughly would: a word with its
// leading space, long words in pieces of up to six letters, punctuation and
// newlines on their own.
func tokenize(text string) []string {
	var out []string
	i := 0
	for i < len(text) {
		j := i
		for j < len(text) && text[j] == ' ' {
			j++
		}
		if j < len(text) && text[j] == '\n' {
			if j > i {
				out = append(out, text[i:j])
			}
			out = append(out, "\n")
			i = j + 1
			continue
		}
		k := j
		for k < len(text) && k-j < 6 && isWord(text[k]) {
			k++
		}
		if k == j && k < len(text) {
			k = nextRune(text, k)
		}
		out = append(out, text[i:k])
		i = k
	}
	return out
}

func isWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// nextRune returns the index after the rune at i.
func nextRune(s string, i int) int {
	i++
	for i < len(s) && s[i]&0xC0 == 0x80 {
		i++
	}
	return i
}

// promptTokens estimates the prompt size the way the stream counts its own
// tokens, plus a few per message for the chat template.
func promptTokens(req provider.Request) int64 {
	n := int64(len(tokenize(req.System))) + 3
	for _, m := range req.Messages {
		n += 4 + int64(len(tokenize(m.Content)))
		for _, c := range m.ToolCalls {
			n += 3 + int64(len(tokenize(string(c.Arguments))))
		}
		for _, r := range m.Reasoning {
			n += int64(len(tokenize(r.Text)))
		}
	}
	for _, t := range req.Tools {
		n += 8 + int64(len(tokenize(t.Description))) + int64(len(tokenize(string(t.Schema))))
	}
	return n
}

// lastUser returns the index of the last user message, or -1.
func lastUser(msgs []message.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == message.User {
			return i
		}
	}
	return -1
}

// words splits text into lower-case words for keyword matching.
func words(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '/')
	}) {
		out[w] = true
	}
	return out
}
