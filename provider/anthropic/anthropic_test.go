package anthropic

import (
	"context"
	"errors"
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

func newProvider(t *testing.T, srv *providertest.Server, clock provider.Clock, budget int) *Provider {
	t.Helper()
	p, err := New(provider.Config{Name: "anthropic", Type: provider.TypeAnthropic, Model: "claude-sonnet-4-5",
		BaseURL: srv.URL, APIKey: "sk-ant-test-secret", IdleTimeout: 30 * time.Second, Clock: clock, ThinkingBudget: budget})
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
		class   provider.Class
	}{
		{"thinking_tools.sse", []string{
			"reasoning:The user wants the folder ", "reasoning:listing and the README; ", "reasoning:both tools can run at once.",
			"reasoning-done:sig=EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
			"text:I'll list the folder ", "text:and read the README.",
			"tool-start:0:toolu_01T1x1fJ34qAmk2tNTrN7Up6:shell", "tool-delta:0:{\"command\": \"ls", "tool-delta:0: -la\"}",
			"tool-end:0:{\"command\": \"ls -la\"}",
			"tool-start:1:toolu_01A09q90qw90lq917835lq9:read_file", "tool-delta:1:{\"pa", "tool-delta:1:th\": \"README.md\"}",
			"tool-end:1:{\"path\": \"README.md\"}",
			"usage:p=2520,c=89,t=2609,cr=2048,cw=0", "done:tool_calls",
		}, ""},
		{"redacted_thinking.sse", []string{
			"reasoning-done:redacted=EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP",
			`text:Here is \(d_t\).`, "usage:p=20,c=12,t=32,cr=0,cw=0", "done:stop",
		}, ""},
		{"max_tokens.sse", []string{"text:A long", "usage:p=2520,c=8192,t=10712,cr=2048,cw=0", "done:length"}, ""},
		{"error_event.sse", []string{"text:Partial ", "text:answer"}, provider.ClassProvider},
		{"truncated.sse", []string{"text:cut off"}, provider.ClassTransport},
		{"refusal.sse", []string{"text:I can't help", "usage:p=2520,c=5,t=2525,cr=2048,cw=0"}, provider.ClassPolicy},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			t.Parallel()
			srv := providertest.NewServer(t, providertest.Fixture(t, "testdata/"+tt.fixture))
			s, err := newProvider(t, srv, nil, 0).Stream(context.Background(), hello)
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
			if pe := provider.AsError(err); pe == nil || pe.Class != tt.class || pe.Provider != "anthropic" {
				t.Fatalf("error %v, want class %s", err, tt.class)
			}
		})
	}
}

func TestToolInputInStartBlock(t *testing.T) {
	t.Parallel()
	body := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"c\",\"content\":[],\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_9\",\"name\":\"shell\",\"input\":{\"command\":\"ls\"}}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":7}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	srv := providertest.NewServer(t, providertest.Reply{Status: 200, Header: map[string]string{"Content-Type": "text/event-stream"}, Body: []byte(body)})
	s, err := newProvider(t, srv, nil, 0).Stream(context.Background(), hello)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := providertest.Collect(s)
	want := []string{"tool-start:0:toolu_9:shell", `tool-delta:0:{"command":"ls"}`, `tool-end:0:{"command":"ls"}`, "usage:p=3,c=7,t=10,cr=0,cw=0", "done:tool_calls"}
	if got := providertest.Summary(evs); err != nil || !slices.Equal(got, want) {
		t.Fatalf("got %q, %v\nwant %q", got, err, want)
	}
}

func TestOverloadedEventIsRetryable(t *testing.T) {
	t.Parallel()
	srv := providertest.NewServer(t, providertest.Fixture(t, "testdata/error_event.sse"))
	s, err := newProvider(t, srv, nil, 0).Stream(context.Background(), hello)
	if err != nil {
		t.Fatal(err)
	}
	_, err = providertest.Collect(s)
	if pe := provider.AsError(err); pe == nil || !pe.Retryable() || pe.Msg != "Overloaded" {
		t.Fatalf("got %v, want a retryable error saying Overloaded", err)
	}
}

func TestHTTPErrorStatuses(t *testing.T) {
	t.Parallel()
	body := func(typ, msg string) string {
		return `{"type":"error","error":{"type":"` + typ + `","message":"` + msg + `"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`
	}
	tests := []struct {
		name       string
		status     int
		header     map[string]string
		body       string
		class      provider.Class
		retryAfter time.Duration
		retryable  bool
	}{
		{"rate limit", 429, map[string]string{"Retry-After": "12"}, body("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"), provider.ClassRateLimit, 12 * time.Second, true},
		{"auth", 401, nil, body("authentication_error", "invalid x-api-key"), provider.ClassAuth, 0, false},
		{"permission", 403, nil, body("permission_error", "Your API key does not have permission to use the specified resource."), provider.ClassAuthz, 0, false},
		{"prompt too long", 400, nil, body("invalid_request_error", "prompt is too long: 212345 tokens > 200000 maximum"), provider.ClassContext, 0, false},
		{"request too large", 413, nil, body("request_too_large", "Request exceeds the maximum allowed number of bytes."), provider.ClassContext, 0, false},
		{"bad request", 400, nil, body("invalid_request_error", "max_tokens: Field required"), provider.ClassProvider, 0, false},
		{"api error", 500, nil, body("api_error", "Internal server error"), provider.ClassProvider, 0, true},
		{"overloaded", 529, nil, body("overloaded_error", "Overloaded"), provider.ClassProvider, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := map[string]string{"Content-Type": "application/json"}
			for k, v := range tt.header {
				h[k] = v
			}
			srv := providertest.NewServer(t, providertest.Reply{Status: tt.status, Header: h, Body: []byte(tt.body)})
			_, err := newProvider(t, srv, nil, 0).Stream(context.Background(), hello)
			pe := provider.AsError(err)
			if pe == nil {
				t.Fatalf("got %v, want *provider.Error", err)
			}
			if pe.Class != tt.class || pe.Status != tt.status || pe.RetryAfter != tt.retryAfter || pe.Retryable() != tt.retryable {
				t.Fatalf("got class=%s status=%d retryAfter=%s retryable=%v; want %s %d %s %v",
					pe.Class, pe.Status, pe.RetryAfter, pe.Retryable(), tt.class, tt.status, tt.retryAfter, tt.retryable)
			}
			if strings.Contains(pe.Error(), "sk-ant-test-secret") {
				t.Fatalf("error text leaks the key: %s", pe.Error())
			}
			if n := len(srv.Requests()); n != 1 {
				t.Fatalf("%d requests; the client must not retry by itself", n)
			}
		})
	}
}

func TestStallEndsWithTimeout(t *testing.T) {
	t.Parallel()
	clock := providertest.NewClock()
	srv := providertest.NewServer(t, providertest.Fixture(t, "testdata/stall.sse"))
	s, err := newProvider(t, srv, clock, 0).Stream(context.Background(), hello)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ev, err := s.Next(); err != nil || ev.Text != "Thinking about it" {
		t.Fatalf("first event %+v, %v", ev, err)
	}
	go clock.Advance(30 * time.Second)
	_, err = s.Next()
	if pe := provider.AsError(err); pe == nil || pe.Class != provider.ClassTimeout || !errors.Is(err, provider.ErrIdleTimeout) {
		t.Fatalf("got %v, want an idle timeout", err)
	}
}

func TestRequestShape(t *testing.T) {
	t.Parallel()
	srv := providertest.NewServer(t, providertest.Fixture(t, "testdata/redacted_thinking.sse"))
	p := newProvider(t, srv, nil, 2048)
	req := provider.Request{
		System: "Be brief.",
		Messages: []message.Message{
			message.Text(message.User, "list files"),
			{Role: message.Assistant, Content: "Listing.",
				Reasoning: []message.Reasoning{{Text: "plan", Signature: "sig-1"}, {Redacted: "opaque"}, {Text: "from another provider"}},
				ToolCalls: []message.ToolCall{
					{ID: "toolu_1", Name: "shell", Arguments: jsontext.Value(`{"command": "ls"}`)},
					{ID: "toolu_2", Name: "read_file", Arguments: jsontext.Value(`{"path":"a"}`)},
				}},
			{Role: message.Tool, ToolCallID: "toolu_1", Content: "a\nb"},
			{Role: message.Tool, ToolCallID: "toolu_2", Content: "no such file", IsError: true},
			message.Text(message.User, "and now?"),
		},
		Tools: []provider.ToolSpec{{Name: "shell", Description: "Run a command",
			Schema: jsontext.Value(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}`)}},
	}
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := providertest.Collect(s); err != nil {
		t.Fatal(err)
	}
	h := srv.Headers()[0]
	// The Messages API reads the key from x-api-key; the SDK adds a bearer
	// token of its own.
	if h.Get("X-Api-Key") != "sk-ant-test-secret" || h.Get("Anthropic-Version") == "" {
		t.Errorf("headers: key not sent, or no version (%q)", h.Get("Anthropic-Version"))
	}
	var body struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
		Stream    bool   `json:"stream"`
		System    []struct {
			Text string `json:"text"`
		} `json:"system"`
		Thinking struct {
			Type         string `json:"type"`
			BudgetTokens int    `json:"budget_tokens"`
		} `json:"thinking"`
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string         `json:"type"`
				Text      string         `json:"text"`
				Thinking  string         `json:"thinking"`
				Signature string         `json:"signature"`
				Data      string         `json:"data"`
				ID        string         `json:"id"`
				Input     jsontext.Value `json:"input"`
				ToolUseID string         `json:"tool_use_id"`
				IsError   bool           `json:"is_error"`
			} `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"input_schema"`
		} `json:"tools"`
	}
	raw := srv.Requests()[0]
	if err := json.Unmarshal(raw, &body, json.RejectUnknownMembers(false)); err != nil {
		t.Fatalf("%v in %s", err, raw)
	}
	if body.Model != "claude-sonnet-4-5" || !body.Stream || body.System[0].Text != "Be brief." ||
		body.Thinking.Type != "enabled" || body.Thinking.BudgetTokens != 2048 || body.MaxTokens <= 2048 {
		t.Errorf("request fields wrong: %s", raw)
	}
	if len(body.Messages) != 3 {
		t.Fatalf("want user, assistant, user; got %s", raw)
	}
	a := body.Messages[1].Content
	if len(a) != 5 || a[0].Type != "thinking" || a[0].Signature != "sig-1" || a[0].Thinking != "plan" ||
		a[1].Type != "redacted_thinking" || a[1].Data != "opaque" || a[2].Type != "text" ||
		a[3].Type != "tool_use" || string(a[3].Input) != `{"command": "ls"}` || a[4].ID != "toolu_2" {
		t.Errorf("assistant blocks: %+v", a)
	}
	u := body.Messages[2].Content
	if body.Messages[2].Role != "user" || len(u) != 3 || u[0].ToolUseID != "toolu_1" || u[1].ToolUseID != "toolu_2" || !u[1].IsError || u[2].Text != "and now?" {
		t.Errorf("tool results and the next prompt should share one user turn: %+v", u)
	}
	if len(body.Tools) != 1 || body.Tools[0].InputSchema["additionalProperties"] != false || body.Tools[0].InputSchema["type"] != "object" {
		t.Errorf("tools: %+v", body.Tools)
	}
}

func TestNewNeedsKey(t *testing.T) {
	t.Parallel()
	if _, err := New(provider.Config{}); !errors.Is(err, provider.ErrConfig) {
		t.Fatalf("got %v", err)
	}
}
