package toolview

import (
	"time"

	"github.com/foliodev/folio/transcript"
)

// Outcome is how an invocation ended.
type Outcome struct {
	Status transcript.ToolStatus
	// Reason is a short fixed classification ("error", "canceled",
	// "panicked", "invalid_arguments", "host_shutdown", "plugin_exited"),
	// never free text from the tool.
	Reason string
}

// Result is the canonical result the model sees for the invocation.
type Result struct {
	Text    string
	IsError bool
	// Summary is an optional one-line description for the tool receipt.
	Summary string
}

// Record is what closure fixes for good: everything the engine needs to
// write the invocation's tool entry. Timing never changes after closure.
type Record struct {
	Invocation string
	Tool       string
	Producer   string
	Generation Generation
	Outcome    Outcome
	Start      time.Time
	End        time.Time
	Duration   time.Duration
	Result     Result
	// Presentation is the primary item's retained checkpoint; nil when the
	// item is ephemeral or never got a value.
	Presentation  *transcript.Presentation
	Supplementals []transcript.KeyedPresentation
	// Diagnostics summarizes rejected updates, one line per reason, without
	// payload contents.
	Diagnostics []Diagnostic
}

// DurationMs is the fixed duration in (fractional) milliseconds, as the
// transcript stores it.
func (r Record) DurationMs() float64 {
	return float64(r.Duration.Nanoseconds()) / 1e6
}

// ToolContent turns the record into the transcript's tool content: the
// receipt with outcome and fixed duration, the invocation ID and the retained
// checkpoints.
func (r Record) ToolContent() transcript.Tool {
	d := r.DurationMs()
	summary := r.Result.Summary
	if summary == "" {
		summary = r.Tool
	}
	t := transcript.Tool{
		Receipt: transcript.ToolReceipt{
			App:        r.Tool,
			Summary:    summary,
			Status:     r.Outcome.Status,
			DurationMs: &d,
			Reason:     r.Outcome.Reason,
		},
		InvocationID:  r.Invocation,
		Presentation:  clonePresentation(r.Presentation),
		Supplementals: append([]transcript.KeyedPresentation(nil), r.Supplementals...),
	}
	return t
}

// Entry wraps ToolContent in an entry stamped with the closure time.
func (r Record) Entry(id string) transcript.Entry {
	return transcript.Entry{ID: id, Content: r.ToolContent(), Timestamp: r.End}
}

func clonePresentation(p *transcript.Presentation) *transcript.Presentation {
	if p == nil {
		return nil
	}
	c := *p
	if p.Artifact != nil {
		a := *p.Artifact
		c.Artifact = &a
	}
	return &c
}

// Terminal is the semantic content of a closed invocation: what the live
// view, an immediate reconnect and a replay from history must all agree on.
type Terminal struct {
	Tool          string
	Status        transcript.ToolStatus
	Reason        string
	DurationMs    float64
	Primary       *transcript.Presentation
	Supplementals []transcript.KeyedPresentation
}

// Terminal returns the record's semantic item.
func (r Record) Terminal() Terminal {
	return Terminal{
		Tool:          r.Tool,
		Status:        r.Outcome.Status,
		Reason:        r.Outcome.Reason,
		DurationMs:    r.DurationMs(),
		Primary:       clonePresentation(r.Presentation),
		Supplementals: append([]transcript.KeyedPresentation(nil), r.Supplementals...),
	}
}

// clone copies the record so a caller cannot change the one the host keeps. Payload bytes are shared: they are immutable by contract.
func (r *Record) clone() Record {
	c := *r
	c.Presentation = clonePresentation(r.Presentation)
	c.Supplementals = append([]transcript.KeyedPresentation(nil), r.Supplementals...)
	for i := range c.Supplementals {
		if a := c.Supplementals[i].Presentation.Artifact; a != nil {
			cp := *a
			c.Supplementals[i].Presentation.Artifact = &cp
		}
	}
	c.Diagnostics = append([]Diagnostic(nil), r.Diagnostics...)
	return c
}
