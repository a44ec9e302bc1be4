package tui

import (
	"fmt"
	"time"

	"github.com/foliodev/folio/transcript"
)

var t0 = time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)

func ent(id string, c transcript.Content) transcript.Entry {
	return transcript.Entry{ID: id, Content: c, Timestamp: t0}
}

func f64(v float64) *float64 { return &v }
func i64(v int64) *int64     { return &v }
func intp(v int) *int        { return &v }

func okTool(id, app, summary string, ms float64) transcript.Entry {
	return ent(id, transcript.Tool{Receipt: transcript.ToolReceipt{App: app, Summary: summary, Status: transcript.ToolOK, DurationMs: f64(ms)}})
}

func reasoning(id, text string, ms float64) transcript.Entry {
	return ent(id, transcript.Reasoning{Text: text, Label: "Thought", DurationMs: f64(ms)})
}

const sampleAnswer = "## Plan\n\nThe **decay** \\(d_t\\) shrinks: \\(v_t = (d_t - d_{t+1}) / d_t\\), and $\\alpha \\le 1$.\n\n" +
	"```go\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n```\n\n" +
	"| step | cost |\n|------|------|\n| one  | $5   |\n| two  | $10  |\n\n" +
	"- first\n- second\n"

// doc builds a settled document from entries, failing loudly on bad input.
func doc(entries ...transcript.Entry) transcript.Document {
	d, err := transcript.NewDocument("doc", entries)
	if err != nil {
		panic(err)
	}
	return d
}

// mixed returns n entries of a realistic mix: user, reasoning, tools, answer,
// receipt, repeating.
func mixed(n int) []transcript.Entry {
	out := make([]transcript.Entry, 0, n)
	for i := 0; len(out) < n; i++ {
		id := func(k string) string { return fmt.Sprintf("e%d-%s", i, k) }
		turn := []transcript.Entry{
			ent(id("u"), transcript.User{Text: fmt.Sprintf("question %d: what does the function do?", i)}),
			reasoning(id("r"), "Look at the code first.", 800),
			okTool(id("t1"), "read", "main.go", 12),
			okTool(id("t2"), "grep", "TODO", 30),
			ent(id("a"), transcript.Agent{Markdown: fmt.Sprintf("Answer %d: it prints a greeting.\n\nThen it returns **nil**.\n", i)}),
			ent(id("rc"), transcript.TurnReceipt{Steps: []transcript.Step{{DurationMs: 1500, PromptTokens: i64(1200), CompletionTokens: i64(80)}}}),
		}
		for _, e := range turn {
			if len(out) < n {
				out = append(out, e)
			}
		}
	}
	return out
}
