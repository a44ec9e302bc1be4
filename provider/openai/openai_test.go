package openai

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/provider/providertest"
)

func newProvider(t *testing.T, srv *providertest.Server, clock provider.Clock) *Provider {
	t.Helper()
	p, err := New(provider.Config{Name: "openai", Type: provider.TypeOpenAI, Model: "gpt-4o-mini",
		BaseURL: srv.URL + "/v1", APIKey: "sk-test-secret", IdleTimeout: 30 * time.Second, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var hello = provider.Request{Messages: []message.Message{message.Text(message.User, "hello")}}

func TestStreamFixtures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fixture string
		want    []string
		class   provider.Class // "" when the stream must end normally
	}{
		{"tools_parallel.sse", []string{
			"reasoning:The user wants ", "reasoning:the folder listing ", "reasoning:and the README.", "reasoning-done",
			"text:Let me ", "text:look at ", "text:both.",
			"tool-start:0:call_Vx1shell:shell", "tool-delta:0:{\"comm",
			"tool-start:1:call_Vx2read:read_file", "tool-delta:0:and\": \"ls", "tool-delta:1:{\"path\":",
			"tool-delta:0: -la\"}", "tool-delta:1: \"README.md\"}",
			"tool-end:0:{\"command\": \"ls -la\"}", "tool-end:1:{\"path\": \"README.md\"}",
			"usage:p=412,c=57,t=469,cr=256,r=14", "done:tool_calls",
		}, ""},
		{"reasoning_field.sse", []string{
			"reasoning:Inline math ", "reasoning:needs delimiters.", "reasoning-done",
			`text:The decay rate is \(d_t\), `, `text:so \[v_t = (d_t - d_{t+1}) / d_t\]`, "text:\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
			"usage:p=31,c=42,t=73,cr=0,r=9,$=0.0001234", "done:stop",
		}, ""},
		{"ollama_tools.sse", []string{
			"tool-start:0:call_a1:shell", "tool-delta:0:{\"command\":\"ls -la\"}",
			"tool-start:1:call_b2:read_file", "tool-delta:1:{\"path\":\"README.md\"}",
			"tool-end:0:{\"command\":\"ls -la\"}", "tool-end:1:{\"path\":\"README.md\"}", "done:tool_calls",
		}, ""},
		{"midstream_error.sse", []string{"text:Partial answer ", "text:before the failure"}, provider.ClassProvider},
		{"truncated.sse", []string{"text:cut off mid"}, provider.ClassTransport},
		{"bad_arguments.sse", []string{"tool-start:0:call_bad:shell", "tool-delta:0:{\"command\": \"ls"}, provider.ClassProvider},
		{"content_filter.sse", []string{"text:I can"}, provider.ClassPolicy},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			t.Parallel()
			srv := providertest.NewServer(t, providertest.Fixture(t, "testdata/"+tt.fixture))
			s, err := newProvider(t, srv, nil).Stream(context.Background(), hello)
			if err != nil {
				t.Fatal(err)
			}
			evs, err := providertest.Collect(s)
			if got := providertest.Summary(evs); !slices.Equal(got, tt.want) {
				t.Errorf("events:\n got %q\nwant %q", got, tt.want)
			}
			if err := providertest.Check(evs, tt.class == ""); err != nil {
				t.Error(err)
			}
			if tt.class == "" {
				if err != nil {
					t.Fatalf("stream failed: %v", err)
				}
				return
			}
			pe := provider.AsError(err)
			if pe == nil || pe.Class != tt.class || pe.Provider != "openai" {
				t.Fatalf("error %v, want class %s", err, tt.class)
			}
			// Next keeps returning the same error after the end.
			if _, again := s.Next(); provider.AsError(again) != pe {
				t.Errorf("second Next: %v, want the same error", again)
			}
		})
	}
}

func TestMidStreamErrorIsRetryable(t *testing.T) {
	t.Parallel()
	srv := providertest.NewServer(t, providertest.Fixture(t, "testdata/midstream_error.sse"))
	s, err := newProvider(t, srv, nil).Stream(context.Background(), hello)
	if err != nil {
		t.Fatal(err)
	}
	_, err = providertest.Collect(s)
	pe := provider.AsError(err)
	if pe == nil || !pe.Retryable() || !strings.Contains(pe.Msg, "The server had an error") {
		t.Fatalf("got %v, want a retryable server error carrying the provider's message", err)
	}
}

func TestHTTPErrorStatuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		status     int
		header     map[string]string
		body       string
		class      provider.Class
		retryAfter time.Duration
		retryable  bool
	}{
		{"rate limit with retry-after", 429, map[string]string{"Retry-After": "7"},
			`{"error":{"message":"Rate limit reached for gpt-4o-mini on tokens per min (TPM): Limit 200000, Used 199000.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`,
			provider.ClassRateLimit, 7 * time.Second, true},
		{"rate limit with retry-after-ms", 429, map[string]string{"Retry-After-Ms": "1500"},
			`{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`,
			provider.ClassRateLimit, 1500 * time.Millisecond, true},
		{"quota", 429, nil,
			`{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`,
			provider.ClassAuthz, 0, false},
		{"bad key", 401, nil,
			`{"error":{"message":"Incorrect API key provided: sk-test-****cret.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			provider.ClassAuth, 0, false},
		{"forbidden", 403, nil,
			`{"error":{"message":"You are not allowed to sample from this model","type":"invalid_request_error","param":null,"code":null}}`,
			provider.ClassAuthz, 0, false},
		{"context length", 400, nil,
			`{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			provider.ClassContext, 0, false},
		{"vllm context length", 400, nil,
			`{"object":"error","message":"This model's maximum context length is 4096 tokens.","type":"BadRequestError","param":null,"code":400}`,
			provider.ClassContext, 0, false},
		{"policy", 400, nil,
			`{"error":{"message":"Your request was rejected as a result of our safety system.","type":"invalid_request_error","param":null,"code":"content_policy_violation"}}`,
			provider.ClassPolicy, 0, false},
		{"bad request", 400, nil,
			`{"error":{"message":"Invalid value for 'temperature'.","type":"invalid_request_error","param":"temperature","code":null}}`,
			provider.ClassProvider, 0, false},
		{"server error", 500, nil,
			`{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`,
			provider.ClassProvider, 0, true},
		{"ollama model missing", 404, nil, `{"error":"model \"llama9\" not found, try pulling it first"}`,
			provider.ClassProvider, 0, false},
		{"bad gateway without a body", 502, nil, ``, provider.ClassProvider, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := map[string]string{"Content-Type": "application/json"}
			for k, v := range tt.header {
				h[k] = v
			}
			srv := providertest.NewServer(t, providertest.Reply{Status: tt.status, Header: h, Body: []byte(tt.body)})
			_, err := newProvider(t, srv, nil).Stream(context.Background(), hello)
			pe := provider.AsError(err)
			if pe == nil {
				t.Fatalf("got %v, want *provider.Error", err)
			}
			if pe.Class != tt.class || pe.Status != tt.status || pe.RetryAfter != tt.retryAfter || pe.Retryable() != tt.retryable {
				t.Fatalf("got class=%s status=%d retryAfter=%s retryable=%v; want %s %d %s %v",
					pe.Class, pe.Status, pe.RetryAfter, pe.Retryable(), tt.class, tt.status, tt.retryAfter, tt.retryable)
			}
			if strings.Contains(pe.Error(), "sk-test-secret") {
				t.Fatalf("error text leaks the key: %s", pe.Error())
			}
			if len(srv.Requests()) != 1 {
				t.Fatalf("%d requests; the client must not retry by itself", len(srv.Requests()))
			}
		})
	}
}

func TestStallEndsWithTimeout(t *testing.T) {
	t.Parallel()
	clock := providertest.NewClock()
	srv := providertest.NewServer(t, providertest.Fixture(t, "testdata/stall.sse"))
	s, err := newProvider(t, srv, clock).Stream(context.Background(), hello)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ev, err := s.Next()
	if err != nil || ev.Kind != provider.TextDelta || ev.Text != "Thinking about it" {
		t.Fatalf("first event %+v, %v", ev, err)
	}
	// Everything the server sent is consumed; the next read blocks until
	// the watchdog fires. Less than the idle time changes nothing.
	clock.Advance(29 * time.Second)
	go clock.Advance(time.Second)
	_, err = s.Next()
	pe := provider.AsError(err)
	if pe == nil || pe.Class != provider.ClassTimeout || !pe.Retryable() || !errors.Is(err, provider.ErrIdleTimeout) {
		t.Fatalf("got %v, want a retryable timeout caused by the idle watchdog", err)
	}
}

func TestCancelDuringStall(t *testing.T) {
	t.Parallel()
	srv := providertest.NewServer(t, providertest.Fixture(t, "testdata/stall.sse"))
	ctx, cancel := context.WithCancel(context.Background())
	s, err := newProvider(t, srv, providertest.NewClock()).Stream(ctx, hello)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	go cancel()
	_, err = s.Next()
	if pe := provider.AsError(err); pe == nil || pe.Class != provider.ClassCancelled || pe.Retryable() {
		t.Fatalf("got %v, want cancelled", err)
	}
}

func TestConnectionRefusedIsTransport(t *testing.T) {
	t.Parallel()
	srv := providertest.NewServer(t, providertest.Reply{Status: 200})
	url := srv.URL
	srv.Close()
	p, err := New(provider.Config{Name: "openai", Model: "m", BaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Stream(context.Background(), hello)
	if pe := provider.AsError(err); pe == nil || pe.Class != provider.ClassTransport || !pe.Retryable() {
		t.Fatalf("got %v, want transport", err)
	}
}

func TestRequestShape(t *testing.T) {
	t.Parallel()
	srv := providertest.NewServer(t, providertest.Fixture(t, "testdata/reasoning_field.sse"))
	p := newProvider(t, srv, nil)
	req := provider.Request{
		System: "You are terse.",
		Messages: []message.Message{
			message.Text(message.User, "list files"),
			{Role: message.Assistant, Content: "Listing.", Reasoning: []message.Reasoning{{Text: "hidden"}},
				ToolCalls: []message.ToolCall{{ID: "call_1", Name: "shell", Arguments: jsontext.Value(`{"command":"ls"}`)}}},
			{Role: message.Tool, ToolCallID: "call_1", Content: "a.txt\nb.txt"},
		},
		Tools:     []provider.ToolSpec{{Name: "shell", Description: "Run a command", Schema: jsontext.Value(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)}},
		MaxTokens: 256,
	}
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := providertest.Collect(s); err != nil {
		t.Fatal(err)
	}
	if got := srv.Headers()[0].Get("Authorization"); got != "Bearer sk-test-secret" {
		t.Errorf("Authorization %q", got)
	}
	var body struct {
		Model         string `json:"model"`
		Stream        bool   `json:"stream"`
		MaxTokens     int    `json:"max_tokens"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Messages []struct {
			Role       string `json:"role"`
			Content    any    `json:"content"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name       string         `json:"name"`
				Parameters map[string]any `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	raw := srv.Requests()[0]
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("%v in %s", err, raw)
	}
	if body.Model != "gpt-4o-mini" || !body.Stream || !body.StreamOptions.IncludeUsage || body.MaxTokens != 256 {
		t.Errorf("request header fields wrong: %s", raw)
	}
	roles := []string{}
	for _, m := range body.Messages {
		roles = append(roles, m.Role)
	}
	if !slices.Equal(roles, []string{"system", "user", "assistant", "tool"}) {
		t.Errorf("roles %v", roles)
	}
	if tc := body.Messages[2].ToolCalls; len(tc) != 1 || tc[0].ID != "call_1" || tc[0].Function.Arguments != `{"command":"ls"}` {
		t.Errorf("assistant tool calls %+v", tc)
	}
	if body.Messages[3].ToolCallID != "call_1" {
		t.Errorf("tool message %+v", body.Messages[3])
	}
	if len(body.Tools) != 1 || body.Tools[0].Function.Name != "shell" || body.Tools[0].Function.Parameters["type"] != "object" {
		t.Errorf("tools %+v", body.Tools)
	}
	if bytes.Contains(raw, []byte("hidden")) {
		t.Errorf("reasoning text was sent back to an OpenAI-compatible server: %s", raw)
	}
}

func TestNewNeedsKeyForOpenAIOnly(t *testing.T) {
	t.Parallel()
	if _, err := New(provider.Config{Model: "gpt-4o"}); !errors.Is(err, provider.ErrConfig) {
		t.Fatalf("no key for api.openai.com: %v", err)
	}
	if _, err := New(provider.Config{Model: "llama3.2", BaseURL: "http://127.0.0.1:11434/v1"}); err != nil {
		t.Fatalf("a local server needs no key: %v", err)
	}
}

func TestReasoningTextReadsEscapes(t *testing.T) {
	t.Parallel()
	srv := providertest.NewServer(t, providertest.Reply{Status: 200, Body: []byte(
		`data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"reasoning_content":"tab\tquote\" \u00e9"},"finish_reason":null}]}` + "\n\n" +
			`data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"reasoning":null,"content":"ok"},"finish_reason":"stop"}]}` + "\n\n" +
			"data: [DONE]\n\n")})
	s, err := newProvider(t, srv, nil).Stream(context.Background(), hello)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := providertest.Collect(s)
	want := []string{"reasoning:tab\tquote\" é", "reasoning-done", "text:ok", "done:stop"}
	if got := providertest.Summary(evs); err != nil || !slices.Equal(got, want) {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}

// roundTripper serves one canned body from memory, so the benchmark
// measures parsing, not the loopback network.
type roundTripper struct{ body []byte }

func (r roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: readCloser{bytes.NewReader(r.body)}, Request: req}, nil
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// BenchmarkStreamParse measures the OpenAI client's cost per event: SSE
// decoding, the SDK's chunk parsing and folio's translation, for a stream of
// one-token text chunks as OpenAI sends them.
func BenchmarkStreamParse(b *testing.B) {
	var sse bytes.Buffer
	const tokens = 1000
	for i := range tokens {
		_ = i
		sse.WriteString(`data: {"id":"chatcmpl-BfQ2x7sYcA1","object":"chat.completion.chunk","created":1764460000,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_560af6e559","choices":[{"index":0,"delta":{"content":" token"},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n")
	}
	sse.WriteString(`data: {"id":"chatcmpl-BfQ2x7sYcA1","object":"chat.completion.chunk","created":1764460000,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}` + "\n\ndata: [DONE]\n\n")
	p, err := New(provider.Config{Name: "openai", Model: "gpt-4o-mini", BaseURL: "http://127.0.0.1:1/v1", Transport: roundTripper{sse.Bytes()}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	events := 0
	for b.Loop() {
		s, err := p.Stream(context.Background(), hello)
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, err := s.Next()
			if err != nil {
				break
			}
			events++
		}
		s.Close()
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}

func TestUnsendableRequestIsNotRetryable(t *testing.T) {
	t.Parallel()
	srv := providertest.NewServer(t, providertest.Reply{Status: 200})
	p := newProvider(t, srv, nil)
	for _, req := range []provider.Request{
		{Messages: []message.Message{{Role: "system", Content: "x"}}},
		{Messages: hello.Messages, Tools: []provider.ToolSpec{{Name: "t", Schema: jsontext.Value(`[1]`)}}},
	} {
		_, err := p.Stream(context.Background(), req)
		pe := provider.AsError(err)
		if pe == nil || pe.Retryable() || !errors.Is(err, provider.ErrBadRequest) {
			t.Fatalf("got %v, want a non-retryable bad request", err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}
