// Package anthropic is folio's client for the Anthropic Messages API. It
// uses the official SDK for requests, authentication and stream decoding,
// and turns the event stream into provider events: text, thinking blocks
// (whose signatures, or redacted data, go back to the API unchanged with the
// next request), tool use with its input_json_delta fragments, and usage.
//
// Concurrency: a *Provider is safe for concurrent use; each Stream belongs
// to one goroutine (see package provider).
package anthropic

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/provider"
)

func init() {
	provider.Register(provider.TypeAnthropic, func(c provider.Config) (provider.Provider, error) { return New(c) })
}

// defaultMaxTokens bounds a reply when nothing else does; the API requires
// a bound.
const defaultMaxTokens = 8192

// Provider is an Anthropic Messages client.
type Provider struct {
	cfg    provider.Config
	client sdk.Client
}

var _ provider.Provider = (*Provider)(nil)

// New builds a client from a resolved configuration.
func New(c provider.Config) (*Provider, error) {
	if c.Name == "" {
		c.Name = provider.TypeAnthropic
	}
	if c.BaseURL == "" {
		c.BaseURL = provider.DefaultAnthropicBaseURL
	}
	if c.APIKey == "" && c.BaseURL == provider.DefaultAnthropicBaseURL {
		return nil, fmt.Errorf("%w: anthropic needs an API key: set ANTHROPIC_API_KEY", provider.ErrConfig)
	}
	if c.Model == "" {
		c.Model = provider.DefaultAnthropicModel
	}
	opts := []option.RequestOption{
		// folio resolves its own configuration; the SDK must not add
		// credentials or a base URL from the environment behind its back.
		option.WithoutEnvironmentDefaults(),
		option.WithoutOpenTelemetry(),
		option.WithBaseURL(c.BaseURL + "/"),
		option.WithAPIKey(c.APIKey),
		// This SDK release sends the key only as a bearer token; the
		// Messages API has always read it from x-api-key, so send both.
		option.WithHeader("x-api-key", c.APIKey),
		option.WithMaxRetries(0), // the engine retries, visibly
		option.WithHTTPClient(c.HTTPClient()),
	}
	for k, v := range c.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	return &Provider{cfg: c, client: sdk.NewClient(opts...)}, nil
}

// Name returns the configured provider name.
func (p *Provider) Name() string { return p.cfg.Name }

// Stream sends one streaming Messages request.
func (p *Provider) Stream(ctx context.Context, req provider.Request) (provider.Stream, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	var failure provider.HTTPFailure
	s := p.client.Messages.NewStreaming(ctx, params, option.WithMiddleware(failure.Middleware))
	if err := s.Err(); err != nil {
		s.Close()
		if pe := failure.Err(p.cfg.Name, p.now()); pe != nil {
			return nil, pe
		}
		return nil, p.classify(ctx, err)
	}
	return &stream{p: p, ctx: ctx, sdk: s, blocks: map[int64]*block{}}, nil
}

func (p *Provider) now() time.Time {
	if p.cfg.Clock != nil {
		return p.cfg.Clock.Now()
	}
	return time.Now()
}

// adaptiveModels take thinking.type=adaptive instead of a token budget.
var adaptiveModels = map[string]bool{"claude-opus-4-6": true, "claude-mythos-preview": true}

func (p *Provider) params(req provider.Request) (sdk.MessageNewParams, error) {
	model := req.Model
	if model == "" {
		model = p.cfg.Model
	}
	maxTokens := req.MaxTokens
	if maxTokens == 0 {
		maxTokens = p.cfg.MaxTokens
	}
	if maxTokens == 0 {
		maxTokens = defaultMaxTokens
	}
	params := sdk.MessageNewParams{Model: sdk.Model(model), MaxTokens: int64(maxTokens)}
	if req.System != "" {
		params.System = []sdk.TextBlockParam{{Text: req.System}}
	}
	if b := p.cfg.ThinkingBudget; b > 0 {
		if adaptiveModels[model] {
			params.Thinking = sdk.ThinkingConfigParamUnion{OfAdaptive: &sdk.ThinkingConfigAdaptiveParam{}}
		} else {
			params.Thinking = sdk.ThinkingConfigParamOfEnabled(int64(b))
			if params.MaxTokens <= int64(b) { // the budget must leave room for the answer
				params.MaxTokens = int64(b) + defaultMaxTokens
			}
		}
	}
	msgs, err := convert(p.cfg.Name, req.Messages)
	if err != nil {
		return params, err
	}
	params.Messages = msgs
	for _, t := range req.Tools {
		tp := sdk.ToolParam{Name: t.Name}
		if t.Description != "" {
			tp.Description = param.NewOpt(t.Description)
		}
		if len(t.Schema) > 0 {
			var schema map[string]any
			if err := json.Unmarshal(t.Schema, &schema); err != nil {
				return params, provider.BadRequest(p.cfg.Name, "tool %s: its schema is not a JSON object: %v", t.Name, err)
			}
			tp.InputSchema.Properties = schema["properties"]
			if req, ok := schema["required"].([]any); ok {
				for _, r := range req {
					if s, ok := r.(string); ok {
						tp.InputSchema.Required = append(tp.InputSchema.Required, s)
					}
				}
			}
			delete(schema, "properties")
			delete(schema, "required")
			delete(schema, "type")
			if len(schema) > 0 {
				tp.InputSchema.ExtraFields = schema
			}
		}
		params.Tools = append(params.Tools, sdk.ToolUnionParam{OfTool: &tp})
	}
	return params, nil
}

// convert maps folio's messages to Anthropic's: thinking blocks keep their
// signatures (reasoning without one came from another provider and is
// dropped, since the API would reject it), tool results become tool_result
// blocks in a user turn, and consecutive user-side content shares one turn
// so roles alternate as the API requires.
func convert(name string, msgs []message.Message) ([]sdk.MessageParam, error) {
	var out []sdk.MessageParam
	var user []sdk.ContentBlockParamUnion
	flush := func() {
		if len(user) > 0 {
			out = append(out, sdk.NewUserMessage(user...))
			user = nil
		}
	}
	for i, m := range msgs {
		switch m.Role {
		case message.User:
			if m.Content != "" {
				user = append(user, sdk.NewTextBlock(m.Content))
			}
		case message.Tool:
			content := m.Content
			if content == "" {
				content = "(no output)"
			}
			user = append(user, sdk.NewToolResultBlock(m.ToolCallID, content, m.IsError))
		case message.Assistant:
			var blocks []sdk.ContentBlockParamUnion
			for _, r := range m.Reasoning {
				switch {
				case r.Redacted != "":
					blocks = append(blocks, sdk.NewRedactedThinkingBlock(r.Redacted))
				case r.Signature != "":
					blocks = append(blocks, sdk.NewThinkingBlock(r.Signature, r.Text))
				}
			}
			if m.Content != "" {
				blocks = append(blocks, sdk.NewTextBlock(m.Content))
			}
			for _, c := range m.ToolCalls {
				args := c.Arguments
				if len(args) == 0 {
					args = jsontext.Value("{}")
				}
				blocks = append(blocks, sdk.NewToolUseBlock(c.ID, rawJSON(args), c.Name))
			}
			if len(blocks) == 0 {
				continue
			}
			flush()
			out = append(out, sdk.NewAssistantMessage(blocks...))
		default:
			return nil, provider.BadRequest(name, "message %d has role %q", i, m.Role)
		}
	}
	flush()
	return out, nil
}

// rawJSON marshals as the JSON it holds, so tool inputs go back byte for
// byte.
type rawJSON []byte

func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }

// classify maps an SDK error to a classified *provider.Error. An error
// event inside the stream arrives as an *sdk.Error whose status is the
// stream's 200.
func (p *Provider) classify(ctx context.Context, err error) *provider.Error {
	var aerr *sdk.Error
	if errors.As(err, &aerr) {
		code, typ, msg := provider.ParseErrorBody([]byte(aerr.RawJSON()))
		if typ == "" {
			typ = string(aerr.Type())
		}
		if msg == "" {
			msg = aerr.Message
		}
		if aerr.StatusCode >= 400 {
			var h http.Header
			if aerr.Response != nil {
				h = aerr.Response.Header
			}
			return provider.FromStatus(p.cfg.Name, aerr.StatusCode, h, code, typ, msg, p.now())
		}
		return provider.FromEvent(p.cfg.Name, code, typ, msg)
	}
	var synErr *json.SemanticError
	var jsErr *jsontext.SyntacticError
	if errors.As(err, &synErr) || errors.As(err, &jsErr) {
		return &provider.Error{Class: provider.ClassProvider, Provider: p.cfg.Name, Msg: "the server sent a malformed event", Err: err}
	}
	return provider.Classify(ctx, p.cfg.Name, err)
}

// block is an open content block of the reply.
type block struct {
	kind  string // "text", "thinking", "tool_use", or another type folio skips
	index int    // our tool-call index, for tool_use
	id    string
	name  string
	args  []byte
	sig   []byte
}

type stream struct {
	p     *Provider
	ctx   context.Context
	sdk   *ssestream.Stream[sdk.MessageStreamEventUnion]
	queue []provider.Event
	head  int

	blocks  map[int64]*block
	calls   int
	usage   provider.Usage
	hasUse  bool
	stop    string
	stopped bool // message_stop seen
	err     error
}

func (s *stream) Next() (provider.Event, error) {
	for s.head == len(s.queue) {
		if s.err != nil {
			return provider.Event{}, s.err
		}
		s.queue, s.head = s.queue[:0], 0
		if !s.sdk.Next() {
			s.end(s.sdk.Err())
			continue
		}
		cur := s.sdk.Current()
		if err := s.event(&cur); err != nil {
			s.err = err
			s.sdk.Close()
		}
	}
	ev := s.queue[s.head]
	s.queue[s.head] = provider.Event{}
	s.head++
	return ev, nil
}

func (s *stream) Close() error { return s.sdk.Close() }

func (s *stream) push(ev provider.Event) { s.queue = append(s.queue, ev) }

func (s *stream) end(err error) {
	s.sdk.Close()
	switch {
	case err != nil:
		s.err = s.p.classify(s.ctx, err)
	case !s.stopped:
		s.err = &provider.Error{Class: provider.ClassTransport, Provider: s.p.cfg.Name, Msg: "the stream ended before the message was complete"}
	default:
		s.err = io.EOF
	}
}

func (s *stream) event(e *sdk.MessageStreamEventUnion) error {
	switch e.Type {
	case "message_start":
		u := e.Message.Usage
		s.hasUse = true
		s.usage.Prompt = provider.Int(u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens)
		s.usage.CacheRead = provider.Int(u.CacheReadInputTokens)
		s.usage.CacheWrite = provider.Int(u.CacheCreationInputTokens)
		s.usage.Completion = provider.Int(u.OutputTokens)
	case "content_block_start":
		if len(s.blocks) > 0 {
			// The API sends blocks one after another; an overlap means a
			// broken stream, and guessing would misplace reasoning.
			return &provider.Error{Class: provider.ClassProvider, Provider: s.p.cfg.Name, Msg: fmt.Sprintf("content block %d started before the previous block stopped", e.Index)}
		}
		cb := &e.ContentBlock
		b := &block{kind: cb.Type}
		s.blocks[e.Index] = b
		switch cb.Type {
		case "text":
			if cb.Text != "" {
				s.push(provider.Event{Kind: provider.TextDelta, Text: cb.Text})
			}
		case "thinking":
			if cb.Thinking != "" {
				s.push(provider.Event{Kind: provider.ReasoningDelta, Text: cb.Thinking})
			}
			b.sig = append(b.sig, cb.Signature...)
		case "redacted_thinking":
			s.push(provider.Event{Kind: provider.ReasoningDone, Redacted: cb.Data})
		case "tool_use":
			if cb.ID == "" || cb.Name == "" {
				return &provider.Error{Class: provider.ClassProvider, Provider: s.p.cfg.Name, Msg: "a tool_use block started without an id or name"}
			}
			b.index, b.id, b.name = s.calls, cb.ID, cb.Name
			s.calls++
			s.push(provider.Event{Kind: provider.ToolCallStart, Index: b.index, ID: b.id, Name: b.name})
			// Anthropic streams input as input_json_delta after an empty
			// object, but some gateways send the whole input here instead.
			if in, ok := cb.Input.(map[string]any); ok && len(in) > 0 {
				if raw, err := json.Marshal(in, json.Deterministic(true)); err == nil {
					b.args = raw
					s.push(provider.Event{Kind: provider.ToolCallDelta, Index: b.index, Text: string(raw)})
				}
			}
		}
	case "content_block_delta":
		b := s.blocks[e.Index]
		if b == nil {
			return &provider.Error{Class: provider.ClassProvider, Provider: s.p.cfg.Name, Msg: fmt.Sprintf("a delta for content block %d, which never started", e.Index)}
		}
		d := &e.Delta
		switch d.Type {
		case "text_delta":
			if b.kind == "text" && d.Text != "" {
				s.push(provider.Event{Kind: provider.TextDelta, Text: d.Text})
			}
		case "thinking_delta":
			if b.kind == "thinking" && d.Thinking != "" {
				s.push(provider.Event{Kind: provider.ReasoningDelta, Text: d.Thinking})
			}
		case "signature_delta":
			b.sig = append(b.sig, d.Signature...)
		case "input_json_delta":
			if b.kind == "tool_use" && d.PartialJSON != "" {
				b.args = append(b.args, d.PartialJSON...)
				s.push(provider.Event{Kind: provider.ToolCallDelta, Index: b.index, Text: d.PartialJSON})
			}
		}
	case "content_block_stop":
		b := s.blocks[e.Index]
		if b == nil {
			return nil
		}
		delete(s.blocks, e.Index)
		switch b.kind {
		case "thinking":
			s.push(provider.Event{Kind: provider.ReasoningDone, Signature: string(b.sig)})
		case "tool_use":
			args := b.args
			if len(args) == 0 {
				args = []byte("{}")
			}
			if !jsontext.Value(args).IsValid() {
				return &provider.Error{Class: provider.ClassProvider, Provider: s.p.cfg.Name,
					Msg: fmt.Sprintf("tool call %d (%s): the model sent input that is not valid JSON (%d bytes)", b.index, b.name, len(b.args))}
			}
			s.push(provider.Event{Kind: provider.ToolCallEnd, Index: b.index, ID: b.id, Name: b.name, Arguments: jsontext.Value(args)})
		}
	case "message_delta":
		if e.Delta.StopReason != "" {
			s.stop = string(e.Delta.StopReason)
		}
		// message_delta usage is cumulative; input counts appear here too
		// when the server revises them.
		u := e.Usage
		s.hasUse = true
		s.usage.Completion = provider.Int(u.OutputTokens)
		if u.JSON.InputTokens.Valid() {
			s.usage.Prompt = provider.Int(u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens)
			s.usage.CacheRead = provider.Int(u.CacheReadInputTokens)
			s.usage.CacheWrite = provider.Int(u.CacheCreationInputTokens)
		}
	case "message_stop":
		s.stopped = true
		if len(s.blocks) > 0 {
			return &provider.Error{Class: provider.ClassProvider, Provider: s.p.cfg.Name, Msg: "the message ended with a content block still open"}
		}
		if s.hasUse {
			u := s.usage
			if u.Prompt != nil && u.Completion != nil {
				u.Total = provider.Int(*u.Prompt + *u.Completion)
			}
			s.push(provider.Event{Kind: provider.UsageReport, Usage: &u})
		}
		switch s.stop {
		case "refusal":
			return &provider.Error{Class: provider.ClassPolicy, Provider: s.p.cfg.Name, Msg: "the model declined to answer (refusal)"}
		case "model_context_window_exceeded":
			return &provider.Error{Class: provider.ClassContext, Provider: s.p.cfg.Name, Msg: "the reply ran into the model's context window"}
		}
		s.push(provider.Event{Kind: provider.Done, FinishReason: finish(s.stop)})
	}
	return nil
}

func finish(stop string) provider.FinishReason {
	switch stop {
	case "end_turn", "stop_sequence":
		return provider.FinishStop
	case "tool_use":
		return provider.FinishToolCalls
	case "max_tokens":
		return provider.FinishLength
	}
	return provider.FinishReason(stop)
}
