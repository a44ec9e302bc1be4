// Package openai is folio's client for OpenAI-compatible Chat Completions
// servers: OpenAI itself, Ollama, vLLM, llama.cpp's server, LM Studio,
// OpenRouter and anything else that speaks the same streaming protocol. It
// uses the official SDK for requests, authentication and error bodies, and
// turns each streamed chunk into provider events: text, reasoning (the
// non-standard reasoning_content or reasoning fields, read from the chunk's
// raw JSON), tool calls with their argument fragments, and usage.
//
// Concurrency: a *Provider is safe for concurrent use; each Stream belongs
// to one goroutine (see package provider).
package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/provider"
)

func init() {
	provider.Register(provider.TypeOpenAI, func(c provider.Config) (provider.Provider, error) { return New(c) })
}

// Provider is an OpenAI-compatible client.
type Provider struct {
	cfg    provider.Config
	client sdk.Client
}

var _ provider.Provider = (*Provider)(nil)

// New builds a client from a resolved configuration. It refuses OpenAI's
// own endpoint without a key, since every request would fail; local servers
// usually need none.
func New(c provider.Config) (*Provider, error) {
	if c.Name == "" {
		c.Name = provider.TypeOpenAI
	}
	if c.BaseURL == "" {
		c.BaseURL = provider.DefaultOpenAIBaseURL
	}
	if c.APIKey == "" && c.BaseURL == provider.DefaultOpenAIBaseURL {
		return nil, fmt.Errorf("%w: openai needs an API key: set OPENAI_API_KEY, or point --base-url at a local server", provider.ErrConfig)
	}
	if c.Model == "" {
		return nil, fmt.Errorf("%w: openai needs a model name", provider.ErrConfig)
	}
	opts := []option.RequestOption{
		option.WithBaseURL(c.BaseURL + "/"),
		option.WithAPIKey(c.APIKey),
		// The engine retries with provider.Backoff, showing the wait to the
		// user; the SDK's own silent retries would hide it and double up.
		option.WithMaxRetries(0),
		option.WithHTTPClient(c.HTTPClient()),
	}
	for k, v := range c.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	return &Provider{cfg: c, client: sdk.NewClient(opts...)}, nil
}

// Name returns the configured provider name ("openai", or a config file
// section such as "ollama").
func (p *Provider) Name() string { return p.cfg.Name }

// Stream sends one streaming Chat Completions request.
func (p *Provider) Stream(ctx context.Context, req provider.Request) (provider.Stream, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	var failure provider.HTTPFailure
	s := p.client.Chat.Completions.NewStreaming(ctx, params, option.WithMiddleware(failure.Middleware))
	if err := s.Err(); err != nil {
		s.Close()
		if pe := failure.Err(p.cfg.Name, p.now()); pe != nil {
			return nil, pe
		}
		return nil, p.classify(ctx, err)
	}
	return &stream{p: p, ctx: ctx, sdk: s, calls: map[int64]int{}}, nil
}

func (p *Provider) params(req provider.Request) (sdk.ChatCompletionNewParams, error) {
	model := req.Model
	if model == "" {
		model = p.cfg.Model
	}
	params := sdk.ChatCompletionNewParams{
		Model:         model,
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}
	if req.System != "" {
		params.Messages = append(params.Messages, sdk.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		switch m.Role {
		case message.User:
			params.Messages = append(params.Messages, sdk.UserMessage(m.Content))
		case message.Assistant:
			a := sdk.ChatCompletionAssistantMessageParam{}
			if m.Content != "" {
				a.Content.OfString = param.NewOpt(m.Content)
			}
			for _, c := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
						ID:       c.ID,
						Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: string(c.Arguments)},
					},
				})
			}
			if m.Content == "" && len(a.ToolCalls) == 0 {
				continue // an empty reply (say, only reasoning) has nothing to send back
			}
			params.Messages = append(params.Messages, sdk.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case message.Tool:
			params.Messages = append(params.Messages, sdk.ToolMessage(m.Content, m.ToolCallID))
		default:
			return params, provider.BadRequest(p.cfg.Name, "message %d has role %q", i, m.Role)
		}
	}
	for _, t := range req.Tools {
		fn := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			fn.Description = param.NewOpt(t.Description)
		}
		if len(t.Schema) > 0 {
			var schema map[string]any
			if err := json.Unmarshal(t.Schema, &schema); err != nil {
				return params, provider.BadRequest(p.cfg.Name, "tool %s: its schema is not a JSON object: %v", t.Name, err)
			}
			fn.Parameters = schema
		}
		params.Tools = append(params.Tools, sdk.ChatCompletionFunctionTool(fn))
	}
	maxTokens := req.MaxTokens
	if maxTokens == 0 {
		maxTokens = p.cfg.MaxTokens
	}
	if maxTokens > 0 {
		// OpenAI's reasoning models reject max_tokens; most other servers
		// only know max_tokens.
		if p.cfg.BaseURL == provider.DefaultOpenAIBaseURL {
			params.MaxCompletionTokens = param.NewOpt(int64(maxTokens))
		} else {
			params.MaxTokens = param.NewOpt(int64(maxTokens))
		}
	}
	return params, nil
}

// classify maps an SDK error to a classified *provider.Error.
func (p *Provider) classify(ctx context.Context, err error) *provider.Error {
	var aerr *sdk.Error
	if errors.As(err, &aerr) {
		var h http.Header
		if aerr.Response != nil {
			h = aerr.Response.Header
		}
		return provider.FromStatus(p.cfg.Name, aerr.StatusCode, h, aerr.Code, aerr.Type, aerr.Message, p.now())
	}
	var serr *ssestream.StreamError
	if errors.As(err, &serr) {
		code, typ, msg := provider.ParseErrorBody(serr.Event.Data)
		return provider.FromEvent(p.cfg.Name, code, typ, msg)
	}
	var synErr *json.SemanticError
	var jsErr *jsontext.SyntacticError
	if errors.As(err, &synErr) || errors.As(err, &jsErr) {
		return &provider.Error{Class: provider.ClassProvider, Provider: p.cfg.Name, Msg: "the server sent a malformed chunk", Err: err}
	}
	return provider.Classify(ctx, p.cfg.Name, err)
}

func (p *Provider) now() time.Time {
	if p.cfg.Clock != nil {
		return p.cfg.Clock.Now()
	}
	return provider.SystemClock{}.Now()
}

// stream turns SDK chunks into provider events. One chunk can yield several
// events (a reasoning block closing as text starts), so they wait in queue.
type stream struct {
	p     *Provider
	ctx   context.Context
	sdk   *ssestream.Stream[sdk.ChatCompletionChunk]
	queue []provider.Event
	head  int

	reasoning bool          // a reasoning block is open
	calls     map[int64]int // server tool-call index → our index
	open      []toolCall    // our index → call
	finish    string
	usage     *provider.Usage
	err       error // sticky result once the stream ended
}

type toolCall struct {
	id, name string
	args     []byte
	ended    bool
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
		if err := s.chunk(s.sdk.Current()); err != nil {
			s.fail(err)
		}
	}
	ev := s.queue[s.head]
	s.queue[s.head] = provider.Event{}
	s.head++
	return ev, nil
}

func (s *stream) Close() error {
	return s.sdk.Close()
}

func (s *stream) push(ev provider.Event) { s.queue = append(s.queue, ev) }

func (s *stream) fail(err error) {
	s.err = err
	s.sdk.Close()
}

// end runs when the SDK stream stops: with an error, or after [DONE] or the
// end of the body.
func (s *stream) end(err error) {
	if err != nil {
		s.fail(s.p.classify(s.ctx, err))
		return
	}
	if s.finish == "" {
		s.fail(&provider.Error{Class: provider.ClassTransport, Provider: s.p.cfg.Name, Msg: "the stream ended before the model finished"})
		return
	}
	if err := s.closeAll(); err != nil {
		s.fail(err)
		return
	}
	if s.usage != nil {
		s.push(provider.Event{Kind: provider.UsageReport, Usage: s.usage})
	}
	if s.finish == "content_filter" {
		s.err = &provider.Error{Class: provider.ClassPolicy, Provider: s.p.cfg.Name, Msg: "the reply was stopped by the provider's content filter"}
		return
	}
	reason := provider.FinishReason(s.finish)
	if s.finish == "function_call" {
		reason = provider.FinishToolCalls
	}
	s.push(provider.Event{Kind: provider.Done, FinishReason: reason})
	s.err = io.EOF
}

func (s *stream) closeReasoning() {
	if s.reasoning {
		s.reasoning = false
		s.push(provider.Event{Kind: provider.ReasoningDone})
	}
}

// closeAll ends every open tool call, checking its arguments.
func (s *stream) closeAll() error {
	s.closeReasoning()
	for i := range s.open {
		c := &s.open[i]
		if c.ended {
			continue
		}
		c.ended = true
		args := c.args
		if len(args) == 0 {
			args = []byte("{}")
		}
		if !jsontext.Value(args).IsValid() {
			return &provider.Error{Class: provider.ClassProvider, Provider: s.p.cfg.Name,
				Msg: fmt.Sprintf("tool call %d (%s): the model sent arguments that are not valid JSON (%d bytes)", i, c.name, len(c.args))}
		}
		s.push(provider.Event{Kind: provider.ToolCallEnd, Index: i, ID: c.id, Name: c.name, Arguments: jsontext.Value(args)})
	}
	return nil
}

func (s *stream) chunk(ch sdk.ChatCompletionChunk) error {
	if ch.JSON.Usage.Valid() {
		s.usage = usage(ch.Usage)
	}
	for _, choice := range ch.Choices {
		if choice.Index != 0 {
			continue // folio never asks for n > 1
		}
		d := &choice.Delta
		if r := reasoningText(d); r != "" {
			s.reasoning = true
			s.push(provider.Event{Kind: provider.ReasoningDelta, Text: r})
		}
		if d.Content != "" || d.Refusal != "" {
			s.closeReasoning()
			s.push(provider.Event{Kind: provider.TextDelta, Text: d.Content + d.Refusal})
		}
		for _, tc := range d.ToolCalls {
			s.closeReasoning()
			i, ok := s.calls[tc.Index]
			// Some servers number every call 0 and send each whole in one
			// chunk; a new id at a known index is then a new call.
			if ok && tc.ID != "" && tc.ID != s.open[i].id {
				ok = false
			}
			if !ok {
				i = len(s.open)
				s.calls[tc.Index] = i
				id := tc.ID
				if id == "" {
					id = "call_" + strconv.Itoa(i)
				}
				if tc.Function.Name == "" {
					return &provider.Error{Class: provider.ClassProvider, Provider: s.p.cfg.Name,
						Msg: fmt.Sprintf("tool call %d started without a function name", i)}
				}
				s.open = append(s.open, toolCall{id: id, name: tc.Function.Name})
				s.push(provider.Event{Kind: provider.ToolCallStart, Index: i, ID: id, Name: tc.Function.Name})
			}
			if s.open[i].ended {
				continue // fragments after the call was closed by finish_reason
			}
			if frag := tc.Function.Arguments; frag != "" {
				s.open[i].args = append(s.open[i].args, frag...)
				s.push(provider.Event{Kind: provider.ToolCallDelta, Index: i, Text: frag})
			}
		}
		if choice.FinishReason != "" {
			s.finish = choice.FinishReason
			if err := s.closeAll(); err != nil {
				return err
			}
		}
	}
	return nil
}

// reasoningText reads reasoning from the fields servers use for it:
// reasoning_content (DeepSeek, vLLM, llama.cpp, LM Studio) or reasoning
// (Ollama, OpenRouter). When both are present they repeat each other, so
// only the first is used.
func reasoningText(d *sdk.ChatCompletionChunkChoiceDelta) string {
	for _, key := range [...]string{"reasoning_content", "reasoning"} {
		f, ok := d.JSON.ExtraFields[key]
		if !ok {
			continue
		}
		raw := f.Raw()
		if len(raw) < 2 || raw[0] != '"' {
			continue // null or not a string
		}
		if s, err := strconv.Unquote(raw); err == nil {
			return s
		}
		var s string
		if json.Unmarshal([]byte(raw), &s) == nil {
			return s
		}
	}
	return ""
}

func usage(u sdk.CompletionUsage) *provider.Usage {
	out := &provider.Usage{}
	if u.JSON.PromptTokens.Valid() {
		out.Prompt = provider.Int(u.PromptTokens)
	}
	if u.JSON.CompletionTokens.Valid() {
		out.Completion = provider.Int(u.CompletionTokens)
	}
	if u.JSON.TotalTokens.Valid() {
		out.Total = provider.Int(u.TotalTokens)
	}
	if u.PromptTokensDetails.JSON.CachedTokens.Valid() {
		out.CacheRead = provider.Int(u.PromptTokensDetails.CachedTokens)
	}
	if u.CompletionTokensDetails.JSON.ReasoningTokens.Valid() {
		out.Reasoning = provider.Int(u.CompletionTokensDetails.ReasoningTokens)
	}
	if f, ok := u.JSON.ExtraFields["cost"]; ok {
		if c, err := strconv.ParseFloat(f.Raw(), 64); err == nil {
			out.CostUSD = &c
		}
	}
	return out
}
