package receipt_test

import (
	"fmt"

	"github.com/foliodev/folio/receipt"
	"github.com/foliodev/folio/transcript"
)

// Session totals: a program sums each turn's steps (a parent turn and the
// child agents it ran) and adds the sums, so the session's decode rate is
// total output over total decode time, never a mean of per-turn rates.
func ExampleSum() {
	step := func(prompt, completion int64, genMs float64) transcript.Step {
		return transcript.Step{PromptTokens: &prompt, CompletionTokens: &completion, GenerationDurationMs: &genMs}
	}
	parent := receipt.Sum([]transcript.Step{step(1200, 300, 3000), step(1600, 100, 1000)})
	child := receipt.Sum([]transcript.Step{step(800, 400, 2000)})
	session := parent.Add(child)
	rate, ok := session.TokPerSec()
	fmt.Println(session.Steps, receipt.Count(session.PromptTokens), "in →", receipt.Count(session.CompletionTokens), "out")
	fmt.Printf("%.0f tok/s %v\n", rate, ok)
	// Output:
	// 3 3.6k in → 800 out
	// 133 tok/s true
}
