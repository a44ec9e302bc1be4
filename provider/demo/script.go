package demo

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/provider"
)

// plan chooses the reply from the last user message and, when the turn is
// already running tools, from the tool results since then.
func (p *Provider) plan(req provider.Request, h uint64) plan {
	u := lastUser(req.Messages)
	if u < 0 {
		return answer(greetingThought, greeting)
	}
	prompt := strings.TrimSpace(req.Messages[u].Content)
	if strings.HasPrefix(strings.ToLower(prompt), "/demo fail") {
		// "once" is keyed by the conversation up to this prompt: a retry
		// also carries the failed reply, and must count as the same turn.
		return p.failure(prompt, hashRequest(provider.Request{Messages: req.Messages[:u+1]}))
	}
	if strings.HasPrefix(strings.ToLower(prompt), "/demo call") {
		return callTurn(req, u, prompt)
	}
	w := words(prompt)
	has := func(keys ...string) bool {
		for _, k := range keys {
			if w[k] {
				return true
			}
			for word := range w {
				if len(k) > 3 && strings.HasPrefix(word, k) {
					return true
				}
			}
		}
		return false
	}
	switch {
	case has("parallel"):
		return toolTurn(req, u, true)
	case has("tool", "file", "folder", "directory", "ls", "shell", "readme"):
		return toolTurn(req, u, false)
	case has("math", "latex", "equation", "formula"):
		return answer(mathThought, mathAnswer)
	case has("table"):
		return answer(tableThought, tableAnswer)
	case has("code", "program"):
		return answer(codeThought, codeAnswer)
	case has("long", "essay"):
		return answer(longThought, longAnswer())
	case has("markdown"):
		return answer(markdownThought, markdownAnswer)
	case has("think", "reason"):
		return answer(deepThought, deepAnswer)
	case has("fail", "error", "failure"):
		return answer(failHelpThought, failHelp)
	}
	return answer(greetingThought, greeting)
}

func answer(thought, text string) plan {
	return plan{parts: []part{{kind: provider.ReasoningDelta, text: thought}, {kind: provider.TextDelta, text: text}}, finish: provider.FinishStop}
}

// failure plans "/demo fail CLASS [now|once]".
func (p *Provider) failure(prompt string, h uint64) plan {
	fields := strings.Fields(prompt)
	if len(fields) < 3 {
		return answer(failHelpThought, failHelp)
	}
	class, ok := provider.ParseClass(fields[2])
	if !ok {
		return answer(failHelpThought, fmt.Sprintf("`%s` is not an error class I can simulate.\n\n", fields[2])+failHelp)
	}
	mode := ""
	if len(fields) > 3 {
		mode = strings.ToLower(fields[3])
	}
	e := simulated(p.opts.Name, class)
	switch mode {
	case "now":
		return plan{failNow: e}
	case "once":
		if !p.once(h) {
			return answer("The simulated failure already happened once; this time the reply goes through.",
				fmt.Sprintf("Recovered: the earlier attempt failed on purpose with a `%s` error, and this retry succeeds.", class))
		}
	}
	return plan{
		parts: []part{
			{kind: provider.ReasoningDelta, text: "The user asked for a simulated failure. I will write a little first, so the partial output can be seen, and then fail."},
			{kind: provider.TextDelta, text: fmt.Sprintf("This reply starts normally and then fails on purpose with a `%s` error, to show that folio keeps the partial answer", class)},
		},
		failEnd: e,
	}
}

// simulated builds the error a real provider would return for class.
func simulated(name string, class provider.Class) *provider.Error {
	e := &provider.Error{Class: class, Provider: name, Msg: "simulated " + string(class) + " failure requested with /demo fail"}
	switch class {
	case provider.ClassRateLimit:
		e.Status, e.RetryAfter = http.StatusTooManyRequests, 2*time.Second
	case provider.ClassAuth:
		e.Status = http.StatusUnauthorized
	case provider.ClassAuthz:
		e.Status = http.StatusForbidden
	case provider.ClassContext, provider.ClassPolicy:
		e.Status = http.StatusBadRequest
	case provider.ClassProvider:
		e.Status = http.StatusInternalServerError
	}
	return e
}

// toolTurn plans one step of the tools scenario. Step 1 lists the folder
// with shell; step 2 reads a file the listing showed; step 3 answers from
// both results. With parallel, step 1 makes both calls at once.
func toolTurn(req provider.Request, u int, parallel bool) plan {
	if !offers(req.Tools, "shell") || !offers(req.Tools, "read_file") {
		return answer("The user wants me to look at files, but this session gives me no shell or read_file tool.",
			"I would list this folder and read its README, but this session offers me no `shell` and `read_file` tools, so I cannot look. "+
				"Run folio with its built-in tools enabled and ask again.")
	}
	results := toolResults(req.Messages[u+1:])
	listing, haveListing := results["shell"]
	file, haveFile := results["read_file"]
	switch {
	case !haveListing && !haveFile && parallel:
		return plan{parts: []part{
			{kind: provider.ReasoningDelta, text: "Listing the folder and reading README.md do not depend on each other, so I can run both tools at once."},
			{kind: provider.TextDelta, text: "I'll list the folder and read the README at the same time."},
			{kind: provider.ToolCallStart, name: "shell", args: `{"command":"ls -la"}`},
			{kind: provider.ToolCallStart, name: "read_file", args: `{"path":"README.md"}`},
		}, finish: provider.FinishToolCalls}
	case !haveListing:
		return plan{parts: []part{
			{kind: provider.ReasoningDelta, text: "The user wants to know what is in this folder. The shell tool can list it; `ls -la` shows hidden files and sizes too."},
			{kind: provider.TextDelta, text: "Let me look at the current folder first."},
			{kind: provider.ToolCallStart, name: "shell", args: `{"command":"ls -la"}`},
		}, finish: provider.FinishToolCalls}
	case !haveFile && !listing.IsError:
		entries := parseListing(listing.Content)
		target := pickFile(entries)
		if target != "" {
			args, _ := json.Marshal(map[string]string{"path": target})
			return plan{parts: []part{
				{kind: provider.ReasoningDelta, text: fmt.Sprintf("The listing shows %d entries. %s looks like the best place to learn what this folder is about, so I will read it next.", len(entries), target)},
				{kind: provider.TextDelta, text: fmt.Sprintf("I found %d entries. Now I'll read `%s`.", len(entries), target)},
				{kind: provider.ToolCallStart, name: "read_file", args: string(args)},
			}, finish: provider.FinishToolCalls}
		}
	}
	return plan{parts: []part{
		{kind: provider.ReasoningDelta, text: "I have what the tools returned. I will summarize the folder, quote the start of the file, and lay the entries out as a table."},
		{kind: provider.TextDelta, text: summarize(listing, haveListing, file, haveFile)},
	}, finish: provider.FinishStop}
}

// callTurn plans "/demo call TOOL [JSON]": one call of the named tool with
// the given arguments (default {}), then a reply quoting the first line of
// its result, so any offered tool (an MCP server's, say) can be driven
// without a real model.
func callTurn(req provider.Request, u int, prompt string) plan {
	rest := strings.TrimSpace(prompt[len("/demo call"):])
	name, args, _ := strings.Cut(rest, " ")
	args = strings.TrimSpace(args)
	if args == "" {
		args = "{}"
	}
	if name == "" {
		return answer("The user asked for a tool call but named no tool.", "Say which tool to call: `/demo call TOOL {\"arg\":1}`.")
	}
	if !offers(req.Tools, name) {
		var names []string
		for _, t := range req.Tools {
			names = append(names, "`"+t.Name+"`")
		}
		return answer("The user asked me to call a tool this session does not offer.",
			fmt.Sprintf("This session offers no tool named `%s`. Offered: %s.", name, strings.Join(names, ", ")))
	}
	if !jsontext.Value(args).IsValid() {
		return answer("The arguments are not JSON.", fmt.Sprintf("The arguments for `%s` must be one JSON object.", name))
	}
	if r, ok := toolResults(req.Messages[u+1:])[name]; ok {
		first := strings.TrimSpace(r.Content)
		if i := strings.IndexByte(first, '\n'); i >= 0 {
			first = first[:i]
		}
		if r.IsError {
			return answer("The tool failed; I will say so and go on.", fmt.Sprintf("`%s` failed: %s", name, first))
		}
		return answer("The tool returned; I will quote its result.", fmt.Sprintf("`%s` returned: %s", name, first))
	}
	return plan{parts: []part{
		{kind: provider.ReasoningDelta, text: fmt.Sprintf("The user asked me to call %s.", name)},
		{kind: provider.TextDelta, text: fmt.Sprintf("Calling `%s`.", name)},
		{kind: provider.ToolCallStart, name: name, args: args},
	}, finish: provider.FinishToolCalls}
}

func offers(tools []provider.ToolSpec, name string) bool {
	for _, t := range tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// toolResults maps tool name to its latest result among msgs, pairing each
// result with the call it answers.
func toolResults(msgs []message.Message) map[string]message.Message {
	names := map[string]string{}
	out := map[string]message.Message{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Name
		}
		if m.Role == message.Tool {
			if n, ok := names[m.ToolCallID]; ok {
				out[n] = m
			}
		}
	}
	return out
}

type entry struct {
	name string
	dir  bool
	size string
}

// parseListing reads `ls -la` output. When the output has long-format
// lines, only those count (the tool adds lines such as "exit status 0");
// otherwise each other non-empty line is one name.
func parseListing(out string) []entry {
	lines := strings.Split(out, "\n")
	long := false
	for _, line := range lines {
		if isLongFormat(strings.Fields(line)) {
			long = true
			break
		}
	}
	var es []entry
	for _, line := range lines {
		f := strings.Fields(line)
		switch {
		case len(f) == 0, f[0] == "total", strings.HasPrefix(line, "exit status"), strings.HasPrefix(line, "timed out"):
			continue
		case isLongFormat(f):
			e := entry{name: strings.Join(f[8:], " "), dir: f[0][0] == 'd', size: f[4]}
			if e.name != "." && e.name != ".." {
				es = append(es, e)
			}
		case !long:
			es = append(es, entry{name: strings.TrimSpace(line)})
		}
	}
	return es
}

// isLongFormat reports whether fields look like one `ls -l` line:
// permissions, links, owner, group, size, three date fields, name.
func isLongFormat(f []string) bool {
	return len(f) >= 9 && (len(f[0]) == 10 || len(f[0]) == 11) && strings.ContainsRune("-dlcbps", rune(f[0][0]))
}

func pickFile(es []entry) string {
	for _, want := range []string{"README.md", "README", "readme.md", "README.txt"} {
		for _, e := range es {
			if !e.dir && e.name == want {
				return want
			}
		}
	}
	for _, e := range es {
		if !e.dir && strings.HasSuffix(e.name, ".md") {
			return e.name
		}
	}
	return ""
}

func summarize(listing message.Message, haveListing bool, file message.Message, haveFile bool) string {
	var b strings.Builder
	b.WriteString("Here is what I found.\n\n")
	if haveListing && listing.IsError {
		fmt.Fprintf(&b, "The `shell` tool failed: %s\n\n", firstLine(listing.Content))
	} else if haveListing {
		es := parseListing(listing.Content)
		dirs := 0
		for _, e := range es {
			if e.dir {
				dirs++
			}
		}
		fmt.Fprintf(&b, "The folder has **%s**: %s and %s.\n\n", plural(len(es), "entry", "entries"), plural(dirs, "folder", "folders"), plural(len(es)-dirs, "file", "files"))
		if len(es) > 0 {
			b.WriteString("| name | kind | size |\n|---|---|---:|\n")
			for i, e := range es {
				if i == 8 {
					fmt.Fprintf(&b, "| … %d more | | |\n", len(es)-8)
					break
				}
				kind := "file"
				if e.dir {
					kind = "folder"
				}
				fmt.Fprintf(&b, "| `%s` | %s | %s |\n", e.name, kind, e.size)
			}
			b.WriteString("\n")
		}
	}
	if haveFile && file.IsError {
		fmt.Fprintf(&b, "Reading the file failed: %s\n", firstLine(file.Content))
	} else if haveFile {
		lines := strings.Count(file.Content, "\n")
		if !strings.HasSuffix(file.Content, "\n") && file.Content != "" {
			lines++
		}
		fmt.Fprintf(&b, "The file has %d lines. It opens with:\n\n> %s\n", lines, firstLine(file.Content))
	}
	b.WriteString("\nEverything above came from real tool calls that folio ran on this machine.")
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// firstLine returns the first non-empty line, trimmed and bounded.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if len(l) > 120 {
				l = l[:120] + "…"
			}
			return l
		}
	}
	return "(empty)"
}

const greetingThought = "The user greeted me or asked something I have no script for. I should say plainly that I am the demo model and explain how to switch to a real one."

const greeting = `Hello! You are talking to **folio's built-in demo model**. It runs offline and answers from a fixed script, so nothing here comes from a real language model.

To use a real model, configure a provider and start folio again:

- **OpenAI**: ` + "`export OPENAI_API_KEY=…`" + ` and ` + "`FOLIO_PROVIDER=openai`" + `
- **Anthropic**: ` + "`export ANTHROPIC_API_KEY=…`" + ` and ` + "`FOLIO_PROVIDER=anthropic`" + `
- **A local server** (Ollama, vLLM, llama.cpp, LM Studio): ` + "`FOLIO_BASE_URL=http://localhost:11434/v1 FOLIO_MODEL=llama3.2`" + `

` + "`folio models`" + ` shows what is configured, and docs/providers.md explains every option.

Meanwhile, ask me for **tools** (I list this folder and read its README), **parallel** tools, **math**, a **table**, **code**, a **long** answer, **markdown**, or to **think** hard. ` + "`/demo fail rate-limit`" + ` (or auth, context, transport, …) shows a failure after partial output.`

const failHelpThought = "The user asked about failures. I will explain the /demo fail command."

const failHelp = "To see how folio handles a failed reply, send `/demo fail CLASS`, where CLASS is one of " +
	"`rate-limit`, `auth`, `authz`, `context`, `policy`, `provider`, `transport`, `timeout` or `cancelled`. " +
	"I write a few words and then fail with that class. Add `now` to fail before any output, or `once` to fail only the first attempt, so a retry succeeds."

const mathThought = "The user wants math. I will use every delimiter a model commonly writes: inline \\( \\), display \\[ \\], $$ blocks and single dollars."

const mathAnswer = `Here is some math, written the way models usually write it.

Let \(d_t\) be the distance still to go at step \(t\). The relative progress made by one step is

\[v_t = (d_t - d_{t+1}) / d_t\]

and the mean progress over a run of \(T\) steps is

$$\bar{v} = \frac{1}{T} \sum_{t=0}^{T-1} v_t$$

Single dollars work inline too: $e^{i\pi} + 1 = 0$. A matrix for good measure:

$$A = \begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}, \qquad \det A = -2$$`

const tableThought = "A table is requested. Comparing folio's providers makes a useful one."

const tableAnswer = `Here are the providers folio can talk to:

| provider | kind | needs a key | streams reasoning |
|---|---|:---:|:---:|
| OpenAI | ` + "`openai`" + ` | yes | no |
| Ollama | ` + "`openai`" + ` + base URL | no | yes |
| vLLM | ` + "`openai`" + ` + base URL | optional | yes |
| llama.cpp server | ` + "`openai`" + ` + base URL | no | yes |
| LM Studio | ` + "`openai`" + ` + base URL | no | yes |
| OpenRouter | ` + "`openai`" + ` + base URL | yes | yes |
| Anthropic | ` + "`anthropic`" + ` | yes | yes (thinking) |
| demo | ` + "`demo`" + ` | no | yes |

Set one with ` + "`FOLIO_PROVIDER`" + ` or ` + "`--provider`" + `.`

const codeThought = "The user wants code. A short Go program that streams from a provider shows folio's API, and a shell block shows how to run it."

const codeAnswer = "Here is how a Go program reads a reply from any folio provider:\n\n```go\n" + `package main

import (
	"context"
	"fmt"
	"io"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/provider"
	_ "github.com/foliodev/folio/provider/builtin"
)

func main() {
	_, p, err := provider.Load(provider.Options{})
	if err != nil {
		panic(err)
	}
	s, err := p.Stream(context.Background(), provider.Request{
		Messages: []message.Message{message.Text(message.User, "hello")},
	})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	for {
		ev, err := s.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			panic(err)
		}
		if ev.Kind == provider.TextDelta {
			fmt.Print(ev.Text)
		}
	}
}
` + "```\n\nRun it with:\n\n```sh\ngo run .\n```\n\nWith nothing configured it talks to me, the demo model."

const markdownThought = "The user wants to see markdown rendering. I will use headings, lists, emphasis, a quote, code, a table and math in one answer."

const markdownAnswer = "# Markdown tour\n\n## Text\n\nPlain text, **bold**, *italic*, `inline code` and a [link](https://example.com).\n\n" +
	"> A quoted line, the way a model cites something.\n\n## Lists\n\n- a bullet\n- another, with `code`\n  - a nested one\n\n1. first\n2. second\n3. third\n\n" +
	"## Code\n\n```python\ndef greet(name):\n    return f\"hello, {name}\"\n```\n\n## Table\n\n| left | center | right |\n|:---|:---:|---:|\n| a | b | 1 |\n| cc | dd | 22 |\n\n" +
	"## Math\n\nInline \\(d_t\\) and display:\n\n\\[v_t = (d_t - d_{t+1}) / d_t\\]\n\n---\n\nThat is every block kind folio renders."

const deepThought = `The user asked me to think hard, so this reasoning is long on purpose: it lets you see how folio shows a reasoning block that streams for a while before any answer.

First, what does "thinking" mean for a model like me? Real reasoning models produce a chain of intermediate text before their answer. Some providers send it in the clear, some summarize it, and some only send an opaque signature that must be returned with the next request. folio keeps each block as its own fact, with its signature, so a resumed conversation can send it back unchanged.

Second, how should the answer relate to it? The answer should stand on its own: a reader who folds the reasoning away must still understand it.

Third, timing: the time spent here counts as generation time, so the receipt's tokens per second include these tokens.

That settles it. I will answer briefly.`

const deepAnswer = "I thought it over (you can expand the reasoning above to read it). The short answer: reasoning is kept as its own entry, separate from this reply, and it counts toward the turn's tokens per second."

const longThought = "The user wants a long answer. I will write several sections about how a streamed reply moves through folio, long enough to scroll."

// longAnswer builds a long, deterministic essay: several sections, each with
// paragraphs, a list and a closing line.
func longAnswer() string {
	sections := []struct{ title, body string }{
		{"The provider", "A reply begins at the provider. The client opens one HTTP request and reads the stream as it arrives: small pieces of text, reasoning, or the fragments of a tool call's arguments. Each piece becomes one event, and nothing is buffered longer than it takes to read it. When the connection stalls, a watchdog ends the request, so a silent server cannot hang a turn forever."},
		{"The engine", "The engine pulls events one at a time. Text goes into the reply's source entry, which keeps a single identity from its first token to the end. Reasoning becomes its own entry. Tool-call fragments only feed the live draft that a tool can display; the tool itself runs with the complete arguments once they are known to be valid."},
		{"The store", "The store is the only writer of the conversation. It publishes snapshots, and every view reads them. A view never keeps a transcript of its own, so the terminal, the browser and the history log cannot disagree about what was said."},
		{"The views", "The fullscreen terminal, the classic terminal and the web app are projections of the same document. Pacing decides how much of the accepted text a reader sees, but the text itself already belongs to the document, which is why a stop or a crash never loses what was received."},
		{"The history", "History is an append-only log. New entries are appended; when an earlier fact changes, a new snapshot supersedes the old presentation. Resuming a conversation reads the log back and restarts nothing: an interrupted reply is simply settled history."},
		{"The receipt", "A turn closes with a receipt. It divides the completion tokens by the time spent generating them, leaving out tool runs and the wait for the first token, and it records when the turn finished, so a resumed transcript shows the same numbers."},
	}
	var b strings.Builder
	b.WriteString("# How a streamed reply travels through folio\n\nThis is a long answer, written so you can watch a big reply stream, scroll and settle.\n")
	for i, s := range sections {
		fmt.Fprintf(&b, "\n## %d. %s\n\n%s\n\n", i+1, s.title, s.body)
		fmt.Fprintf(&b, "In short, %s:\n\n- it does one job;\n- it hands facts onward, never formatted output;\n- it can be tested on its own.\n", strings.ToLower(s.title))
		b.WriteString("\nThe same holds when the reply is interrupted: what arrived stays, and what did not arrive is not invented.\n")
	}
	b.WriteString("\n## Summary\n\nOne stream, one document, many views. Each step above keeps the facts and leaves the presentation to whoever reads them.")
	return b.String()
}
