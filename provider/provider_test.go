package provider_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/provider"
	_ "github.com/foliodev/folio/provider/builtin"
	"github.com/foliodev/folio/provider/providertest"
)

func TestBackoff(t *testing.T) {
	t.Parallel()
	b := provider.Backoff{Base: time.Second, Max: 5 * time.Second, Retries: 4, MaxRetryAfter: time.Minute}
	transport := &provider.Error{Class: provider.ClassTransport}
	tests := []struct {
		name   string
		retry  int
		err    error
		jitter float64
		want   time.Duration
		ok     bool
	}{
		{"first retry, no jitter", 1, transport, 0, 500 * time.Millisecond, true},
		{"first retry, full jitter", 1, transport, 0.999999, 999_999_500 * time.Nanosecond, true},
		{"doubles", 2, transport, 0, time.Second, true},
		{"doubles again", 3, transport, 0.5, 3 * time.Second, true},
		{"capped at max", 4, transport, 0, 2500 * time.Millisecond, true},
		{"retries exhausted", 5, transport, 0, 0, false},
		{"not retryable", 1, &provider.Error{Class: provider.ClassAuth}, 0, 0, false},
		{"bad request is final", 1, &provider.Error{Class: provider.ClassProvider, Status: 400}, 0, 0, false},
		{"server error retries", 1, &provider.Error{Class: provider.ClassProvider, Status: 503}, 0, 500 * time.Millisecond, true},
		{"retry-after wins when longer", 1, &provider.Error{Class: provider.ClassRateLimit, RetryAfter: 7 * time.Second}, 0.3, 7 * time.Second, true},
		{"computed delay wins when longer", 3, &provider.Error{Class: provider.ClassRateLimit, RetryAfter: time.Millisecond}, 0, 2 * time.Second, true},
		{"retry-after too long gives up", 1, &provider.Error{Class: provider.ClassRateLimit, RetryAfter: time.Hour}, 0, 0, false},
		{"wrapped error", 1, fmt.Errorf("step 2: %w", transport), 0, 500 * time.Millisecond, true},
		{"plain error", 1, errors.New("boom"), 0, 0, false},
		{"jitter out of range is ignored", 1, transport, 7, 500 * time.Millisecond, true},
	}
	for _, tt := range tests {
		got, ok := b.Delay(tt.retry, tt.err, tt.jitter)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: Delay = %s, %v; want %s, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
	// Every delay of the default policy stays within its bounds.
	for retry := 1; retry <= provider.DefaultBackoff.Retries; retry++ {
		for _, j := range []float64{0, 0.5, 0.99} {
			d, ok := provider.DefaultBackoff.Delay(retry, transport, j)
			if !ok || d <= 0 || d > provider.DefaultBackoff.Max {
				t.Fatalf("retry %d jitter %g: %s %v", retry, j, d, ok)
			}
		}
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		header map[string]string
		want   time.Duration
	}{
		{map[string]string{"Retry-After": "3"}, 3 * time.Second},
		{map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{map[string]string{"Retry-After": now.Add(20 * time.Second).Format(http.TimeFormat)}, 20 * time.Second},
		{map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"Retry-After": "-4"}, 0},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond},
		{nil, 0},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.header {
			h.Set(k, v)
		}
		if got := provider.RetryAfter(h, now); got != tt.want {
			t.Errorf("%v: %s, want %s", tt.header, got, tt.want)
		}
	}
}

func TestFromStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status         int
		code, typ, msg string
		want           provider.Class
	}{
		{429, "rate_limit_exceeded", "", "", provider.ClassRateLimit},
		{429, "insufficient_quota", "insufficient_quota", "", provider.ClassAuthz},
		{401, "", "", "", provider.ClassAuth},
		{403, "", "permission_error", "", provider.ClassAuthz},
		{402, "", "", "Insufficient credits", provider.ClassAuthz},
		{400, "context_length_exceeded", "", "", provider.ClassContext},
		{400, "", "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum", provider.ClassContext},
		{400, "", "", "the input exceeds the context window of this model", provider.ClassContext},
		{413, "", "request_too_large", "", provider.ClassContext},
		{400, "", "invalid_request_error", "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000", provider.ClassContext},
		{400, "content_policy_violation", "", "", provider.ClassPolicy},
		{400, "", "invalid_request_error", "bad temperature", provider.ClassProvider},
		{404, "model_not_found", "", "", provider.ClassProvider},
		{408, "", "", "", provider.ClassTimeout},
		{500, "", "api_error", "", provider.ClassProvider},
		{529, "", "overloaded_error", "", provider.ClassProvider},
	}
	for _, tt := range tests {
		e := provider.FromStatus("x", tt.status, nil, tt.code, tt.typ, tt.msg, time.Time{})
		if e.Class != tt.want || e.Status != tt.status || e.Msg == "" {
			t.Errorf("%d %q %q %q: %s (msg %q), want %s", tt.status, tt.code, tt.typ, tt.msg, e.Class, e.Msg, tt.want)
		}
	}
	if e := provider.FromEvent("x", "", "invalid_request_error", "bad"); e.Retryable() {
		t.Error("an invalid request reported mid-stream must not be retried")
	}
	if e := provider.FromEvent("x", "", "overloaded_error", ""); !e.Retryable() || e.Msg == "" {
		t.Errorf("an overloaded stream should be retried with a message: %+v", e)
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer cancel2()
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want provider.Class
	}{
		{"idle", context.Background(), fmt.Errorf("read: %w", provider.ErrIdleTimeout), provider.ClassTimeout},
		{"cancelled context wins", cancelled, io.ErrUnexpectedEOF, provider.ClassCancelled},
		{"deadline", expired, context.DeadlineExceeded, provider.ClassTimeout},
		{"refused", context.Background(), refused, provider.ClassTransport},
		{"cut off", context.Background(), io.ErrUnexpectedEOF, provider.ClassTransport},
		{"already classified", context.Background(), &provider.Error{Class: provider.ClassPolicy}, provider.ClassPolicy},
	}
	for _, tt := range tests {
		if got := provider.Classify(tt.ctx, "x", tt.err); got.Class != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got.Class, tt.want)
		}
	}
	if provider.Classify(context.Background(), "x", nil) != nil {
		t.Error("nil error should stay nil")
	}
}

func TestParseClass(t *testing.T) {
	t.Parallel()
	for _, c := range provider.Classes {
		got, ok := provider.ParseClass(strings.ReplaceAll(string(c), "_", "-"))
		if !ok || got != c {
			t.Errorf("%s: %s %v", c, got, ok)
		}
	}
	if _, ok := provider.ParseClass("bogus"); ok {
		t.Error("bogus parsed")
	}
}

func TestParseErrorBody(t *testing.T) {
	t.Parallel()
	tests := []struct{ body, code, typ, msg string }{
		{`{"error":{"message":"m","type":"t","code":"c"}}`, "c", "t", "m"},
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "", "overloaded_error", "Overloaded"},
		{`{"error":"model not found"}`, "", "", "model not found"},
		{`{"object":"error","message":"too long","type":"BadRequestError","code":400}`, "400", "BadRequestError", "too long"},
		{`{"detail":"Not Found"}`, "", "", "Not Found"},
		{`<html>bad gateway</html>`, "", "", ""},
		{``, "", "", ""},
	}
	for _, tt := range tests {
		code, typ, msg := provider.ParseErrorBody([]byte(tt.body))
		if code != tt.code || typ != tt.typ || msg != tt.msg {
			t.Errorf("%s: %q %q %q", tt.body, code, typ, msg)
		}
	}
	long := `{"error":"` + strings.Repeat("x", 2000) + `"}`
	if _, _, msg := provider.ParseErrorBody([]byte(long)); len(msg) > 600 {
		t.Errorf("message not bounded: %d bytes", len(msg))
	}
}

func FuzzParseErrorBody(f *testing.F) {
	f.Add([]byte(`{"error":{"message":"m","type":"t","code":"c"}}`))
	f.Add([]byte(`{"error":"x"}`))
	f.Add([]byte(`{"message":"m","code":400}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		code, typ, msg := provider.ParseErrorBody(body)
		e := provider.FromStatus("x", 400, nil, code, typ, msg, time.Time{})
		if e.Class == "" || e.Error() == "" || len(msg) > 600 {
			t.Fatalf("bad classification %+v", e)
		}
	})
}

func TestContextWindow(t *testing.T) {
	t.Parallel()
	tests := map[string]int{
		"gpt-4o-mini":                 128_000,
		"gpt-4.1-mini":                1_047_576,
		"openai/gpt-4o":               128_000,
		"claude-sonnet-4-5":           200_000,
		"anthropic/claude-3.5-sonnet": 200_000,
		"llama3.2:3b":                 131_072,
		"qwen2.5-coder:7b":            32_768,
		"folio-demo":                  32_768,
		"o1-mini":                     128_000,
		"o1-preview":                  200_000,
		"my-own-model":                0,
	}
	for model, want := range tests {
		if got := provider.ContextWindow(model); got != want {
			t.Errorf("%s: %d, want %d", model, got, want)
		}
	}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, provider.ConfigFile), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestResolveDefaultsToDemo(t *testing.T) {
	t.Parallel()
	c, p, err := provider.Load(provider.Options{DataDir: t.TempDir(), Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "demo" || c.Model != provider.DemoModel || p.Name() != "demo" || c.FileFound || c.Sources["provider"] != "default" {
		t.Fatalf("%v %+v", c, c.Sources)
	}
	if c.ContextWindow != 32_768 || c.TokensPerSecond != provider.DefaultDemoRate {
		t.Fatalf("context %d rate %g", c.ContextWindow, c.TokensPerSecond)
	}
}

func TestResolvePrecedence(t *testing.T) {
	t.Parallel()
	dir := writeConfig(t, `{
		"provider": "anthropic",
		"idleTimeout": "45s",
		"providers": {
			"openai": {"model": "file-model", "baseURL": "http://127.0.0.1:9/v1", "contextWindow": 9999, "maxTokens": 100},
			"anthropic": {"model": "claude-file", "thinkingBudget": 1024}
		}
	}`)
	// File alone.
	c, err := provider.Resolve(provider.Options{DataDir: dir, Getenv: env(map[string]string{"ANTHROPIC_API_KEY": "k"})})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "anthropic" || c.Model != "claude-file" || c.ThinkingBudget != 1024 || c.IdleTimeout != 45*time.Second ||
		c.APIKey != "k" || c.KeySource != "ANTHROPIC_API_KEY" || c.BaseURL != provider.DefaultAnthropicBaseURL || !c.FileFound {
		t.Fatalf("file: %v %+v", c, c.Sources)
	}
	// Environment beats the file.
	e := map[string]string{"FOLIO_PROVIDER": "openai", "FOLIO_MODEL": "env-model", "OPENAI_API_KEY": "sk-1"}
	c, err = provider.Resolve(provider.Options{DataDir: dir, Getenv: env(e)})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "openai" || c.Model != "env-model" || c.BaseURL != "http://127.0.0.1:9/v1" || c.ContextWindow != 9999 || c.MaxTokens != 100 ||
		c.Sources["model"] != "env FOLIO_MODEL" || c.Sources["baseURL"] != "config file" || c.Sources["contextWindow"] != "config file" {
		t.Fatalf("env: %v %+v", c, c.Sources)
	}
	// Flags beat the environment.
	c, err = provider.Resolve(provider.Options{DataDir: dir, Getenv: env(e), Provider: "openai", Model: "flag-model", BaseURL: "http://127.0.0.1:8/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "flag-model" || c.BaseURL != "http://127.0.0.1:8/v1" || c.Sources["model"] != "flag" || c.Sources["baseURL"] != "flag" {
		t.Fatalf("flags: %v %+v", c, c.Sources)
	}
	if strings.Contains(c.String(), "sk-1") || !strings.Contains(c.String(), "key=yes") {
		t.Fatalf("String leaks or hides the key state: %s", c)
	}
}

func TestResolveBaseURLImpliesOpenAI(t *testing.T) {
	t.Parallel()
	c, p, err := provider.Load(provider.Options{Getenv: env(map[string]string{"FOLIO_BASE_URL": "http://127.0.0.1:11434/v1", "FOLIO_MODEL": "llama3.2"})})
	if err != nil {
		t.Fatal(err)
	}
	if c.Type != "openai" || p.Name() != "openai" || c.ContextWindow != 131_072 || c.APIKey != "" {
		t.Fatalf("%v", c)
	}
}

func TestResolveNamedSection(t *testing.T) {
	t.Parallel()
	dir := writeConfig(t, `{"provider":"router","providers":{"router":{"type":"openai","baseURL":"http://127.0.0.1:7/api/v1","model":"openai/gpt-4o","apiKeyEnv":"ROUTER_KEY","headers":{"X-Title":"folio"}}}}`)
	c, p, err := provider.Load(provider.Options{DataDir: dir, Getenv: env(map[string]string{"ROUTER_KEY": "r-1", "OPENAI_API_KEY": "must-not-be-used"})})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "router" || c.Type != "openai" || p.Name() != "router" || c.APIKey != "r-1" || c.KeySource != "ROUTER_KEY" ||
		c.ContextWindow != 128_000 || c.Headers["X-Title"] != "folio" {
		t.Fatalf("%v %+v", c, c)
	}
}

func TestResolveErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file string
		opts       provider.Options
		env        map[string]string
		want       error
		says       string
	}{
		{"unknown provider", "", provider.Options{Provider: "gemini"}, nil, provider.ErrUnknownProvider, `"gemini" (from flag)`},
		{"section without type", `{"providers":{"x":{"model":"m"}}}`, provider.Options{Provider: "x"}, nil, provider.ErrConfig, "providers.x.type"},
		{"builtin retyped", `{"providers":{"demo":{"type":"openai"}}}`, provider.Options{}, nil, provider.ErrConfig, "providers.demo.type"},
		{"unknown member", `{"provider":"demo","colour":"red"}`, provider.Options{}, nil, provider.ErrConfig, "colour"},
		{"malformed json", `{"provider":`, provider.Options{}, nil, provider.ErrConfig, "config.json"},
		{"bad idle timeout", `{"idleTimeout":"soon"}`, provider.Options{}, nil, provider.ErrConfig, `idleTimeout "soon"`},
		{"negative tokens", `{"providers":{"demo":{"maxTokens":-1}}}`, provider.Options{}, nil, provider.ErrConfig, "cannot be negative"},
		{"local server without model", "", provider.Options{BaseURL: "http://127.0.0.1:1/v1"}, nil, provider.ErrConfig, "needs a model name"},
		{"bad demo rate", "", provider.Options{}, map[string]string{"FOLIO_DEMO_RATE": "fast"}, provider.ErrConfig, "FOLIO_DEMO_RATE"},
	}
	for _, tt := range tests {
		o := tt.opts
		if tt.file != "" {
			o.DataDir = writeConfig(t, tt.file)
		}
		o.Getenv = env(tt.env)
		_, err := provider.Resolve(o)
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: %v; want %v saying %q", tt.name, err, tt.want, tt.says)
		}
	}
}

func TestLoadNeedsKeyForHostedAPIs(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"openai", "anthropic"} {
		_, _, err := provider.Load(provider.Options{Provider: name, Getenv: env(nil)})
		if !errors.Is(err, provider.ErrConfig) || !strings.Contains(err.Error(), "API key") {
			t.Errorf("%s without a key: %v", name, err)
		}
	}
}

func TestRegistered(t *testing.T) {
	t.Parallel()
	if got := strings.Join(provider.Registered(), ","); got != "anthropic,demo,openai" {
		t.Fatalf("registered: %s", got)
	}
}

// TestIdleClientResetsOnData checks that a slow but steady stream is not cut
// off: the watchdog restarts with every read that brings bytes.
func TestIdleClientResetsOnData(t *testing.T) {
	t.Parallel()
	clock := providertest.NewClock()
	srv := providertest.NewServer(t, providertest.Reply{Status: 200, Body: []byte("data: a\n\ndata: b\n\n: stall\n\n")})
	client := provider.IdleTimeoutClient(nil, 10*time.Second, clock)
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 64)
	got := ""
	for !strings.Contains(got, "data: b") {
		n, err := resp.Body.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got += string(buf[:n])
		clock.Advance(9 * time.Second) // under the limit after each read
	}
	go clock.Advance(10 * time.Second)
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, provider.ErrIdleTimeout) {
		t.Fatalf("got %v, want the idle timeout", err)
	}
}
