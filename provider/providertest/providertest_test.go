package providertest

import (
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/provider"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	ev := func(k provider.EventKind) provider.Event { return provider.Event{Kind: k} }
	start := provider.Event{Kind: provider.ToolCallStart, ID: "c", Name: "n"}
	frag := provider.Event{Kind: provider.ToolCallDelta, Text: `{"a":1}`}
	end := provider.Event{Kind: provider.ToolCallEnd, ID: "c", Name: "n", Arguments: jsontext.Value(`{"a":1}`)}
	done := provider.Event{Kind: provider.Done, FinishReason: provider.FinishStop}
	usage := provider.Event{Kind: provider.UsageReport, Usage: &provider.Usage{}}
	tests := []struct {
		name     string
		evs      []provider.Event
		complete bool
		says     string // "" when valid
	}{
		{"valid", []provider.Event{ev(provider.ReasoningDelta), ev(provider.ReasoningDone), ev(provider.TextDelta), start, frag, end, usage, done}, true, ""},
		{"failed midway is fine", []provider.Event{ev(provider.TextDelta), start, frag}, false, ""},
		{"no done", []provider.Event{ev(provider.TextDelta)}, true, "must end with Done"},
		{"done not last", []provider.Event{done, ev(provider.TextDelta)}, true, "not the last"},
		{"text inside reasoning", []provider.Event{ev(provider.ReasoningDelta), ev(provider.TextDelta)}, false, "reasoning block is open"},
		{"wrong index", []provider.Event{{Kind: provider.ToolCallStart, Index: 1, ID: "c", Name: "n"}}, false, "want 0"},
		{"fragment of unknown call", []provider.Event{frag}, false, "not an open tool call"},
		{"arguments differ", []provider.Event{start, {Kind: provider.ToolCallDelta, Text: `{"a":2}`}, end}, false, "differ from their fragments"},
		{"empty arguments are {}", []provider.Event{start, {Kind: provider.ToolCallEnd, ID: "c", Name: "n", Arguments: jsontext.Value(`{}`)}, done}, true, ""},
		{"invalid arguments", []provider.Event{start, {Kind: provider.ToolCallEnd, ID: "c", Name: "n", Arguments: jsontext.Value(`{`)}}, false, "not valid JSON"},
		{"unended call", []provider.Event{start, done}, true, "never ended"},
		{"usage twice", []provider.Event{usage, usage}, false, "usage repeated"},
	}
	for _, tt := range tests {
		err := Check(tt.evs, tt.complete)
		switch {
		case tt.says == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.says != "" && (err == nil || !strings.Contains(err.Error(), tt.says)):
			t.Errorf("%s: %v, want an error saying %q", tt.name, err, tt.says)
		}
	}
}

func TestClock(t *testing.T) {
	t.Parallel()
	c := NewClock()
	fired := make(chan string, 3)
	a := c.AfterFunc(time.Second, func() { fired <- "a" })
	c.AfterFunc(2*time.Second, func() { fired <- "b" })
	c.Advance(999 * time.Millisecond)
	a.Reset(time.Second) // now due at 1.999s
	c.Advance(time.Millisecond)
	select {
	case f := <-fired:
		t.Fatalf("%s fired early", f)
	default:
	}
	c.Advance(time.Second) // 2s: both due
	got := map[string]bool{<-fired: true, <-fired: true}
	if !got["a"] || !got["b"] {
		t.Fatalf("fired %v", got)
	}
	if a.Stop() {
		t.Fatal("Stop of a fired timer reports it was live")
	}
}
