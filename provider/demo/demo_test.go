package demo

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/provider"
	"github.com/foliodev/folio/provider/providertest"
)

var tools = []provider.ToolSpec{
	{Name: "shell", Description: "Run a shell command", Schema: jsontext.Value(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
	{Name: "read_file", Description: "Read a file", Schema: jsontext.Value(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
}

func ask(text string) provider.Request {
	return provider.Request{Messages: []message.Message{message.Text(message.User, text)}, Tools: tools}
}

// run streams req from a fast demo model and checks the event contract.
func run(t *testing.T, p *Provider, req provider.Request) ([]provider.Event, error) {
	t.Helper()
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		return nil, err
	}
	evs, err := providertest.Collect(s)
	if cerr := providertest.Check(evs, err == nil); cerr != nil {
		t.Fatalf("event contract: %v\n%q", cerr, providertest.Summary(evs))
	}
	return evs, err
}

func text(evs []provider.Event, kind provider.EventKind) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Kind == kind {
			b.WriteString(ev.Text)
		}
	}
	return b.String()
}

func last(evs []provider.Event) provider.Event { return evs[len(evs)-1] }

func TestScenarios(t *testing.T) {
	t.Parallel()
	tests := []struct {
		prompt string
		want   []string
	}{
		{"hello", []string{"demo model", "FOLIO_PROVIDER", "OPENAI_API_KEY", "folio models", "/demo fail rate-limit"}},
		{"show me some math", []string{`\(d_t\)`, `\[v_t = (d_t - d_{t+1}) / d_t\]`, "$$\\bar{v}", "$e^{i\\pi} + 1 = 0$"}},
		{"a table please", []string{"| provider | kind |", "|---|---|:---:|:---:|", "| Anthropic |"}},
		{"write some code", []string{"```go\npackage main", "```sh\ngo run .\n```"}},
		{"give me a markdown tour", []string{"# Markdown tour", "```python", "| left | center | right |", `\[v_t`}},
		{"think about it", []string{"expand the reasoning"}},
		{"what happens on errors?", []string{"/demo fail CLASS"}},
		{"/demo fail nonsense", []string{"`nonsense` is not an error class"}},
	}
	p := New(Options{})
	for _, tt := range tests {
		t.Run(tt.prompt, func(t *testing.T) {
			evs, err := run(t, p, ask(tt.prompt))
			if err != nil {
				t.Fatal(err)
			}
			answer := text(evs, provider.TextDelta)
			for _, w := range tt.want {
				if !strings.Contains(answer, w) {
					t.Errorf("answer lacks %q:\n%s", w, answer)
				}
			}
			if evs[0].Kind != provider.ReasoningDelta || text(evs, provider.ReasoningDelta) == "" {
				t.Errorf("the reply should open with reasoning, got %s", evs[0].Kind)
			}
			if d := last(evs); d.FinishReason != provider.FinishStop {
				t.Errorf("finish %q", d.FinishReason)
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	for _, prompt := range []string{"hello", "tools", "parallel tools", "long", "/demo fail auth"} {
		a, errA := run(t, New(Options{}), ask(prompt))
		b, errB := run(t, New(Options{}), ask(prompt))
		if !slices.Equal(providertest.Summary(a), providertest.Summary(b)) || (errA == nil) != (errB == nil) {
			t.Fatalf("%q: two runs differ", prompt)
		}
	}
	// Different conversations get different tool-call IDs.
	a, _ := run(t, New(Options{}), ask("tools"))
	b, _ := run(t, New(Options{}), ask("tools please"))
	if callOf(t, a, 0).ID == callOf(t, b, 0).ID {
		t.Fatal("tool call IDs repeat across conversations")
	}
}

func callOf(t *testing.T, evs []provider.Event, i int) message.ToolCall {
	t.Helper()
	for _, ev := range evs {
		if ev.Kind == provider.ToolCallEnd && ev.Index == i {
			return ev.ToolCall()
		}
	}
	t.Fatalf("no tool call %d in %q", i, providertest.Summary(evs))
	return message.ToolCall{}
}

// execute runs a call the way folio's tools would, for real, in dir.
func execute(t *testing.T, dir string, c message.ToolCall) message.Message {
	t.Helper()
	var args map[string]string
	if err := json.Unmarshal(c.Arguments, &args); err != nil {
		t.Fatalf("%s arguments %s: %v", c.Name, c.Arguments, err)
	}
	res := message.Message{Role: message.Tool, ToolCallID: c.ID, Name: c.Name}
	switch c.Name {
	case "shell":
		cmd := exec.Command("sh", "-c", args["command"])
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		res.Content, res.IsError = string(out), err != nil
	case "read_file":
		b, err := os.ReadFile(filepath.Join(dir, args["path"]))
		if err != nil {
			res.Content, res.IsError = err.Error(), true
		} else {
			res.Content = string(b)
		}
	default:
		t.Fatalf("unexpected tool %s", c.Name)
	}
	return res
}

func workdir(t *testing.T) string {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# Widget\n\nA widget factory.\nThird line.\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o600)
	os.Mkdir(filepath.Join(dir, "docs"), 0o700)
	return dir
}

// TestToolTurn plays the engine's part: it runs each requested tool for real
// and sends the result back, until the model answers.
func TestToolTurn(t *testing.T) {
	t.Parallel()
	dir := workdir(t)
	p := New(Options{})
	req := ask("what files are in this folder?")
	var steps [][]message.ToolCall
	var evs []provider.Event
	for step := 0; step < 5; step++ {
		var err error
		evs, err = run(t, p, req)
		if err != nil {
			t.Fatal(err)
		}
		if last(evs).FinishReason == provider.FinishStop {
			break
		}
		if last(evs).FinishReason != provider.FinishToolCalls {
			t.Fatalf("step %d finished with %q", step, last(evs).FinishReason)
		}
		var calls []message.ToolCall
		for _, ev := range evs {
			if ev.Kind == provider.ToolCallEnd {
				calls = append(calls, ev.ToolCall())
			}
		}
		steps = append(steps, calls)
		req.Messages = append(req.Messages, message.Message{Role: message.Assistant, Content: text(evs, provider.TextDelta),
			Reasoning: []message.Reasoning{{Text: text(evs, provider.ReasoningDelta)}}, ToolCalls: calls})
		for _, c := range calls {
			req.Messages = append(req.Messages, execute(t, dir, c))
		}
	}
	if len(steps) != 2 || len(steps[0]) != 1 || steps[0][0].Name != "shell" || string(steps[0][0].Arguments) != `{"command":"ls -la"}` ||
		len(steps[1]) != 1 || steps[1][0].Name != "read_file" || string(steps[1][0].Arguments) != `{"path":"README.md"}` {
		t.Fatalf("tool steps %+v", steps)
	}
	answer := text(evs, provider.TextDelta)
	for _, w := range []string{"**3 entries**: 1 folder and 2 files", "| `README.md` | file |", "| `docs` | folder |", "4 lines", "> # Widget"} {
		if !strings.Contains(answer, w) {
			t.Errorf("final answer lacks %q:\n%s", w, answer)
		}
	}
}

func TestParseListing(t *testing.T) {
	t.Parallel()
	out := "exit status 0\ntotal 20\ndrwx------  4 root root 4096 Nov 30 02:40 .\ndrwxrwxrwt 43 root root 4096 Nov 30 02:40 ..\n" +
		"-rw-r--r--  1 root root   28 Nov 30 02:40 README.md\ndrwxr-xr-x  2 root root 4096 Nov 30 02:40 my docs\n"
	got := parseListing(out)
	if len(got) != 2 || got[0] != (entry{name: "README.md", size: "28"}) || got[1] != (entry{name: "my docs", dir: true, size: "4096"}) {
		t.Fatalf("%+v", got)
	}
	if got := parseListing("exit status 0\na.txt\nb.txt\n"); len(got) != 2 || got[1].name != "b.txt" {
		t.Fatalf("short format: %+v", got)
	}
}

func TestParallelToolCalls(t *testing.T) {
	t.Parallel()
	dir := workdir(t)
	p := New(Options{})
	req := ask("run tools in parallel")
	evs, err := run(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	a, b := callOf(t, evs, 0), callOf(t, evs, 1)
	if a.Name != "shell" || b.Name != "read_file" || a.ID == b.ID {
		t.Fatalf("calls %+v %+v", a, b)
	}
	req.Messages = append(req.Messages, message.Message{Role: message.Assistant, ToolCalls: []message.ToolCall{a, b}},
		execute(t, dir, a), execute(t, dir, b))
	evs, err = run(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	if answer := text(evs, provider.TextDelta); !strings.Contains(answer, "3 entries") || !strings.Contains(answer, "# Widget") {
		t.Fatalf("answer does not use both results:\n%s", answer)
	}
}

func TestToolErrorIsReported(t *testing.T) {
	t.Parallel()
	p := New(Options{})
	req := ask("list the folder")
	evs, _ := run(t, p, req)
	c := callOf(t, evs, 0)
	req.Messages = append(req.Messages, message.Message{Role: message.Assistant, ToolCalls: []message.ToolCall{c}},
		message.Message{Role: message.Tool, ToolCallID: c.ID, Content: "sh: ls: permission denied", IsError: true})
	evs, err := run(t, p, req)
	if err != nil || last(evs).FinishReason != provider.FinishStop {
		t.Fatalf("%v %q", err, providertest.Summary(evs))
	}
	if answer := text(evs, provider.TextDelta); !strings.Contains(answer, "The `shell` tool failed: sh: ls: permission denied") {
		t.Fatalf("answer:\n%s", answer)
	}
}

func TestNoToolsOffered(t *testing.T) {
	t.Parallel()
	req := ask("list the files")
	req.Tools = nil
	evs, err := run(t, New(Options{}), req)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(evs, func(e provider.Event) bool { return e.Kind == provider.ToolCallStart }) {
		t.Fatal("called a tool that was not offered")
	}
	if !strings.Contains(text(evs, provider.TextDelta), "no `shell` and `read_file` tools") {
		t.Fatal("the answer should say the tools are missing")
	}
}

func TestFailureAfterPartialOutput(t *testing.T) {
	t.Parallel()
	for _, class := range provider.Classes {
		t.Run(string(class), func(t *testing.T) {
			t.Parallel()
			name := strings.ReplaceAll(string(class), "_", "-")
			evs, err := run(t, New(Options{}), ask("/demo fail "+name))
			pe := provider.AsError(err)
			if pe == nil || pe.Class != class || pe.Provider != "demo" {
				t.Fatalf("got %v, want class %s", err, class)
			}
			if !strings.Contains(text(evs, provider.TextDelta), "fails on purpose") {
				t.Fatalf("no partial output before the failure: %q", providertest.Summary(evs))
			}
			if slices.ContainsFunc(evs, func(e provider.Event) bool { return e.Kind == provider.Done || e.Kind == provider.UsageReport }) {
				t.Fatal("a failed stream must not report Done")
			}
			if class == provider.ClassRateLimit && (pe.RetryAfter != 2*time.Second || pe.Status != 429 || !pe.Retryable()) {
				t.Fatalf("rate limit %+v", pe)
			}
		})
	}
}

func TestFailureModes(t *testing.T) {
	t.Parallel()
	p := New(Options{})
	if _, err := p.Stream(context.Background(), ask("/demo fail auth now")); provider.AsError(err) == nil || provider.AsError(err).Class != provider.ClassAuth {
		t.Fatalf("now: %v", err)
	}
	req := ask("/demo fail transport once")
	if _, err := run(t, p, req); provider.AsError(err) == nil || provider.AsError(err).Class != provider.ClassTransport {
		t.Fatalf("first attempt: %v", err)
	}
	evs, err := run(t, p, req)
	if err != nil || !strings.Contains(text(evs, provider.TextDelta), "Recovered") {
		t.Fatalf("retry: %v %q", err, providertest.Summary(evs))
	}
}

func TestUsageCountsTokens(t *testing.T) {
	t.Parallel()
	evs, err := run(t, New(Options{}), ask("write a long essay"))
	if err != nil {
		t.Fatal(err)
	}
	tokens := int64(0)
	for _, ev := range evs {
		if ev.Kind == provider.TextDelta || ev.Kind == provider.ReasoningDelta {
			tokens++
		}
	}
	u := evs[len(evs)-2].Usage
	if u == nil || *u.Completion != tokens || *u.Total != *u.Prompt+*u.Completion || *u.Prompt < 10 || *u.CostUSD != 0 {
		t.Fatalf("usage %s for %d tokens", providertest.UsageString(u), tokens)
	}
	if tokens < 800 {
		t.Fatalf("a long answer has only %d tokens", tokens)
	}
}

// TestRate checks the schedule under synctest's fake clock: the first
// token after the first-token delay, then one every 1/rate seconds.
func TestRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := New(Options{TokensPerSecond: 20, FirstToken: 300 * time.Millisecond})
		start := time.Now()
		s, err := p.Stream(context.Background(), ask("hello"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var tokens int
		var firstAt, lastAt time.Duration
		for {
			ev, err := s.Next()
			if err != nil {
				break
			}
			if ev.Kind == provider.TextDelta || ev.Kind == provider.ReasoningDelta {
				tokens++
				lastAt = time.Since(start)
				if tokens == 1 {
					firstAt = lastAt
				}
			}
		}
		if firstAt != 300*time.Millisecond {
			t.Errorf("first token at %s, want 300ms", firstAt)
		}
		want := 300*time.Millisecond + time.Duration(tokens-1)*50*time.Millisecond
		if lastAt != want {
			t.Errorf("%d tokens ended at %s, want %s", tokens, lastAt, want)
		}
	})
}

func TestCancelWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		s, err := New(Options{TokensPerSecond: 1}).Stream(ctx, ask("hello"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Next(); err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(500*time.Millisecond, cancel)
		start := time.Now()
		_, err = s.Next()
		if pe := provider.AsError(err); pe == nil || pe.Class != provider.ClassCancelled || !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v", err)
		}
		if waited := time.Since(start); waited != 500*time.Millisecond {
			t.Fatalf("cancellation took %s", waited)
		}
	})
}

func TestTokenize(t *testing.T) {
	t.Parallel()
	got := tokenize("Hello, wonderful  world!\n\n| a |")
	want := []string{"Hello", ",", " wonder", "ful", "  world", "!", "\n", "\n", "|", " a", " |"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if strings.Join(tokenize("héllo wörld ∑"), "") != "héllo wörld ∑" {
		t.Fatal("tokenize loses text")
	}
}

func FuzzTokenize(f *testing.F) {
	f.Add("Hello, world!\n")
	f.Add(`\[v_t = (d_t - d_{t+1}) / d_t\]`)
	f.Add("  \n\t∑ é")
	f.Fuzz(func(t *testing.T, s string) {
		toks := tokenize(s)
		if strings.Join(toks, "") != s {
			t.Fatalf("tokens do not rebuild the text")
		}
		for _, tok := range toks {
			if tok == "" {
				t.Fatal("empty token")
			}
		}
	})
}

// BenchmarkStream measures the demo stream's cost per event with no rate
// limit: what the engine pays per token on top of its own work.
func BenchmarkStream(b *testing.B) {
	p := New(Options{})
	req := ask("write a long essay")
	events := 0
	b.ReportAllocs()
	for b.Loop() {
		s, err := p.Stream(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := s.Next(); err != nil {
				break
			}
			events++
		}
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}

func TestDemoCall(t *testing.T) {
	t.Parallel()
	p := New(Options{})
	req := ask(`/demo call demo__progress {"steps":2}`)
	req.Tools = append(req.Tools, provider.ToolSpec{Name: "demo__progress", Schema: []byte(`{"type":"object"}`)})
	evs, err := run(t, p, req)
	if err != nil || last(evs).FinishReason != provider.FinishToolCalls {
		t.Fatalf("%v %q", err, providertest.Summary(evs))
	}
	c := callOf(t, evs, 0)
	if c.Name != "demo__progress" || string(c.Arguments) != `{"steps":2}` {
		t.Fatalf("call %+v", c)
	}
	for _, res := range []struct {
		content string
		isErr   bool
		want    string
	}{
		{"counted 2 steps\n[image]", false, "`demo__progress` returned: counted 2 steps"},
		{"this tool always fails", true, "`demo__progress` failed: this tool always fails"},
	} {
		r := req
		r.Messages = append(slices.Clone(req.Messages), message.Message{Role: message.Assistant, ToolCalls: []message.ToolCall{c}},
			message.Message{Role: message.Tool, ToolCallID: c.ID, Content: res.content, IsError: res.isErr})
		evs, err := run(t, p, r)
		if err != nil || last(evs).FinishReason != provider.FinishStop {
			t.Fatalf("%v %q", err, providertest.Summary(evs))
		}
		if got := text(evs, provider.TextDelta); !strings.Contains(got, res.want) {
			t.Fatalf("answer %q, want %q", got, res.want)
		}
	}
	// A tool that is not offered is not called.
	evs, _ = run(t, p, ask(`/demo call nope__x`))
	if slices.ContainsFunc(evs, func(e provider.Event) bool { return e.Kind == provider.ToolCallStart }) {
		t.Fatal("called a tool that was not offered")
	}
}
