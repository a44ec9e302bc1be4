package tools

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/tools/toolschema"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func feedOf(t testing.TB, settled []transcript.Content, open ...transcript.Content) transcript.Document {
	t.Helper()
	d, err := transcript.NewDocument("child", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range settled {
		if d, err = d.Append(transcript.Entry{ID: fmt.Sprintf("s%d", i), Content: c, Timestamp: t0}); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range open {
		if d, err = d.Open(transcript.Entry{ID: fmt.Sprintf("o%d", i), Content: c, Timestamp: t0}); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// Each kind of feed entry becomes its step, in feed order; an open entry is
// running whatever its placeholder receipt says; entries that are not the
// child's work are skipped.
func TestTaskStepsFromFeed(t *testing.T) {
	ms := 12.0
	d := feedOf(t, []transcript.Content{
		transcript.Reasoning{Text: "first\nthen", Label: "Thinking"},
		transcript.Tool{Receipt: transcript.ToolReceipt{App: "shell", Summary: "ls", Status: transcript.ToolOK, DurationMs: &ms}},
		transcript.Tool{Receipt: transcript.ToolReceipt{App: "write_file", Summary: "a.go", Status: transcript.ToolDenied}},
		transcript.Expanded{Text: "not a step"},
		transcript.Notice{Text: "loop", Tone: transcript.ToneWarn},
		transcript.Failure{Reason: "provider_error", Headline: "The provider failed."},
	}, transcript.Tool{Receipt: transcript.ToolReceipt{App: "shell", Summary: "shell", Status: transcript.ToolFailed, Reason: "running", NotDone: "not done"}})
	steps, omitted := taskSteps(d)
	var got []string
	for _, s := range steps {
		got = append(got, s.Kind+"/"+s.Name+"/"+s.Status+"/"+s.Summary)
	}
	want := "reasoning//ok/first then|tool/shell/ok/ls|tool/write_file/denied/a.go|notice//ok/loop|notice//failed/The provider failed.|tool/shell/running/shell"
	if strings.Join(got, "|") != want || omitted != 0 {
		t.Errorf("steps\n got %s\nwant %s (omitted %d)", strings.Join(got, "|"), want, omitted)
	}
	if steps[1].DurationMs == nil || *steps[1].DurationMs != 12 {
		t.Error("the tool's duration was lost")
	}
}

// Hostile text (control bytes that need six-byte escapes, multi-byte runes
// at the cut, invented tool names) still gives a payload under the host's
// bound, with valid UTF-8 summaries of at most the step bound.
func TestTaskViewWorstCaseIsBounded(t *testing.T) {
	nasty := strings.Repeat("\x01é", 400)
	var cs []transcript.Content
	for range 200 {
		cs = append(cs, transcript.Tool{Receipt: transcript.ToolReceipt{App: strings.Repeat("n", 500), Summary: nasty, Status: transcript.ToolOK}})
	}
	steps, omitted := taskSteps(feedOf(t, cs))
	if len(steps) != toolschema.TaskMaxSteps || omitted != 200-toolschema.TaskMaxSteps {
		t.Fatalf("%d steps, omitted %d", len(steps), omitted)
	}
	for _, s := range steps {
		if len(s.Summary) > toolschema.TaskSummaryBytes || !utf8.ValidString(s.Summary) || len(s.Name) > toolschema.TaskNameBytes {
			t.Fatalf("step %d/%d bytes, valid %v", len(s.Name), len(s.Summary), utf8.ValidString(s.Summary))
		}
	}
	b, err := json.Marshal(toolschema.TaskView{Label: strings.Repeat("\x01", 60), Status: "done", Steps: steps, Omitted: omitted, Answer: strings.Repeat("\x01", toolschema.TaskAnswerPreview)})
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 100<<10 || len(b) > toolview.DefaultPayloadLimit {
		t.Errorf("worst-case payload is %d bytes", len(b))
	}
}

// BenchmarkTaskSteps measures one observer report for a long child feed
// (500 entries), which the task tool maps on every store publication.
func BenchmarkTaskSteps(b *testing.B) {
	var cs []transcript.Content
	for i := range 500 {
		cs = append(cs, transcript.Tool{Receipt: transcript.ToolReceipt{App: "shell", Summary: fmt.Sprintf("go test ./pkg%d/... -run TestSomething", i), Status: transcript.ToolOK}})
	}
	d := feedOf(b, cs)
	b.ReportAllocs()
	for b.Loop() {
		steps, _ := taskSteps(d)
		if _, err := json.Marshal(toolschema.TaskView{Label: "x", Status: "running", Steps: steps}); err != nil {
			b.Fatal(err)
		}
	}
}
