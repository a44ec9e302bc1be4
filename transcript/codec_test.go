package transcript

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 8_000_000, time.UTC)

func ptr[T any](v T) *T { return &v }

// oneOfEachKind holds a fully populated value of every content kind, so a
// kind or member that does not round-trip shows up by name.
func oneOfEachKind() map[string]Content {
	return map[string]Content{
		"user":      User{Text: "hello"},
		"agent":     Agent{Markdown: "**hi** there"},
		"reasoning": Reasoning{Text: "hmm", Label: "Thinking", DurationMs: ptr(12.5), Steps: ptr[int64](2), Tokens: ptr[int64](40)},
		"tool": Tool{
			Receipt: ToolReceipt{
				App: "shell", Summary: "ran ls", Status: ToolFailed, Args: "ls -la", DurationMs: ptr(3.25),
				Reason: "exit 2", NotDone: "ls was not run again", RemedyKey: "retry", Detail: "no such dir",
				OutputPreview: "ls: x", ClassifiedRisk: "low",
				DiffPreview: &DiffPreview{Lines: []string{"-a", "+b"}, HiddenLines: 7}, DiffText: "@@ -1 +1 @@",
			},
			InvocationID: "inv-1",
			Presentation: &Presentation{
				Schema: "shell.terminal", Version: 1, Revision: 9, Payload: RawJSON(`{"cols":80}`),
				Artifact: &Artifact{Ref: "art/1", ContentType: "text/plain", CommittedBytes: 120, Revision: 3, Final: true, Available: true},
			},
			Supplementals: []KeyedPresentation{{Key: "stats", Presentation: Presentation{Schema: "shell.stats", Version: 1, Revision: 2, Payload: RawJSON(`{"lines":3}`)}}},
		},
		"notice": Notice{Text: "saved", Tone: ToneSuccess, Audience: "classic"},
		"report": ReportContent{Report: Report{Label: "Usage", Note: "today", Rows: []ReportRow{
			{Kind: RowField, Key: "model", Value: "gpt", Tone: ReportAccent, Detail: "default"},
			{Kind: RowItem, Name: "agent", Detail: "idle", Marker: MarkerCurrent, Tone: ReportMuted},
			{Kind: RowMeter, Used: 1, Total: 2, Caption: "half"},
			{Kind: RowText, Text: "line", Tone: ReportText},
			{Kind: RowGroup, Label: "Agents", Count: "2"},
			{Kind: RowGap},
		}}},
		"header": Header{Name: "folio", Provider: "demo", Model: "demo-1"},
		"turn-receipt": TurnReceipt{FinishedAt: ptr[int64](1_772_000_000_000), Steps: []Step{{
			DurationMs: 1200, PromptTokens: ptr[int64](900), CompletionTokens: ptr[int64](12), TotalTokens: ptr[int64](912),
			CacheReadTokens: ptr[int64](100), CostUSD: ptr(0.0042), TokensPerSecond: ptr(35.5), GenerationDurationMs: ptr(338.0),
		}, {DurationMs: 0}}},
		"stopped":    Stopped{Summary: StopSummary{ElapsedMs: 5000, Done: []string{"read"}, NotDone: []string{"write"}}},
		"expanded":   Expanded{Text: "more"},
		"failure":    Failure{Reason: "rate_limit", Headline: "Slow down", Detail: "429", Retryable: true, RetryAfterMs: ptr(1500.0)},
		"steering":   Steering{Text: "use tabs", CommandID: "cmd-1"},
		"compaction": Compaction{Summary: "earlier", Covers: CompactionRange{FromID: "a", ToID: "b"}},
	}
}

func TestEveryKindRoundTrips(t *testing.T) {
	t.Parallel()
	kinds := oneOfEachKind()
	if len(kinds) != 13 {
		t.Fatalf("test covers %d kinds, want all 13", len(kinds))
	}
	for name, c := range kinds {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if string(c.Kind()) != name {
				t.Fatalf("Kind() = %q, want %q", c.Kind(), name)
			}
			e := Entry{ID: "e-" + name, Content: c, Timestamp: t0}
			b, err := EncodeEntry(e)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			got, err := DecodeEntry(b)
			if err != nil {
				t.Fatalf("decode %s: %v", b, err)
			}
			if !reflect.DeepEqual(got.Content, e.Content) || got.ID != e.ID || !got.Timestamp.Equal(e.Timestamp) {
				t.Fatalf("round trip changed the entry:\n got %#v\nwant %#v", got, e)
			}
			b2, err := EncodeEntry(got)
			if err != nil || !bytes.Equal(b, b2) {
				t.Fatalf("re-encoding differs (%v):\n%s\n%s", err, b, b2)
			}
			if FingerprintOf(got) != FingerprintOf(e) || FingerprintOf(e) == (Fingerprint{}) {
				t.Fatal("fingerprint is not stable across a round trip")
			}
			cb, err := encodeContent(c)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(cb, []byte(`{"kind":"`+name+`"`)) {
				t.Fatalf("content does not start with its kind: %s", cb)
			}
			if c2, err := DecodeContent(cb); err != nil || !reflect.DeepEqual(c2, c) {
				t.Fatalf("content round trip: %v %#v", err, c2)
			}
		})
	}
}

// TestDecodeRejects pins the JSON pointer and message of every class of bad
// input the storage boundary must refuse.
func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	const ts = `"2026-01-01T00:00:00Z"`
	wrap := func(content string) string {
		return `{"id":"a","content":` + content + `,"timestamp":` + ts + `}`
	}
	cases := []struct {
		name, in, ptr, msg string
	}{
		{"unknown entry field", `{"id":"a","content":{"kind":"user","text":"x"},"timestamp":` + ts + `,"extra":1}`, "/extra", "unknown field"},
		{"unknown content field", wrap(`{"kind":"user","text":"x","color":"red"}`), "/content/color", "unknown field"},
		{"unknown nested field", wrap(`{"kind":"tool","receipt":{"app":"a","summary":"s","status":"ok","ansi":"\u001b[1m"}}`), "/content/receipt/ansi", "unknown field"},
		{"unknown report row field", wrap(`{"kind":"report","report":{"label":"l","rows":[{"kind":"gap","width":3}]}}`), "/content/report/rows/0/width", "unknown field"},
		{"unknown kind", wrap(`{"kind":"banner","text":"x"}`), "/content/kind", `unknown kind "banner"`},
		{"missing kind", wrap(`{"text":"x"}`), "/content/kind", "kind is missing"},
		{"unknown row kind", wrap(`{"kind":"report","report":{"label":"l","rows":[{"kind":"chart"}]}}`), "/content/report/rows/0/kind", "unknown report row kind"},
		{"negative duration", wrap(`{"kind":"turn-receipt","steps":[{"durationMs":-1}]}`), "/content/steps/0/durationMs", "must not be negative"},
		{"negative token count", wrap(`{"kind":"turn-receipt","steps":[{"durationMs":1,"completionTokens":-3}]}`), "/content/steps/0/completionTokens", "must not be negative"},
		{"fractional token count", wrap(`{"kind":"turn-receipt","steps":[{"durationMs":1,"promptTokens":1.5}]}`), "/content/steps/0/promptTokens", "whole number"},
		{"fractional reasoning tokens", wrap(`{"kind":"reasoning","text":"t","label":"l","tokens":2.5}`), "/content/tokens", "whole number"},
		{"token count as string", wrap(`{"kind":"reasoning","text":"t","label":"l","tokens":"3"}`), "/content/tokens", "string"},
		{"overflowing number", wrap(`{"kind":"stopped","summary":{"elapsedMs":1e999,"done":[],"notDone":[]}}`), "/content/summary/elapsedMs", ""},
		{"negative meter", wrap(`{"kind":"report","report":{"label":"l","rows":[{"kind":"group","label":"g"},{"kind":"meter","used":-1,"total":2,"caption":"bad"}]}}`), "/content/report/rows/1/used", "must not be negative"},
		{"negative finishedAt", wrap(`{"kind":"turn-receipt","steps":[],"finishedAt":-5}`), "/content/finishedAt", "must not be negative"},
		{"negative hidden lines", wrap(`{"kind":"tool","receipt":{"app":"a","summary":"s","status":"ok","diffPreview":{"lines":[],"hiddenLines":-1}}}`), "/content/receipt/diffPreview/hiddenLines", "must not be negative"},
		{"bad tool status", wrap(`{"kind":"tool","receipt":{"app":"a","summary":"s","status":"maybe"}}`), "/content/receipt/status", `"maybe"`},
		{"bad tone", wrap(`{"kind":"notice","text":"x","tone":"loud"}`), "/content/tone", `"loud"`},
		{"bad audience", wrap(`{"kind":"notice","text":"x","tone":"info","audience":"web"}`), "/content/audience", `"web"`},
		{"empty failure reason", wrap(`{"kind":"failure","reason":"","retryable":false}`), "/content/reason", "empty"},
		{"missing id", `{"content":{"kind":"user","text":"x"},"timestamp":` + ts + `}`, "/id", "missing"},
		{"empty id", `{"id":"","content":{"kind":"user","text":"x"},"timestamp":` + ts + `}`, "/id", "missing"},
		{"duplicate id member", `{"id":"a","id":"b","content":{"kind":"user","text":"x"},"timestamp":` + ts + `}`, "/id", "duplicate"},
		{"missing content", `{"id":"a","timestamp":` + ts + `}`, "/content", "missing"},
		{"missing timestamp", `{"id":"a","content":{"kind":"user","text":"x"}}`, "/timestamp", "missing"},
		{"timestamp without offset", `{"id":"a","content":{"kind":"user","text":"x"},"timestamp":"2026-01-01T00:00:00"}`, "/timestamp", "offset"},
		{"timestamp with space", `{"id":"a","content":{"kind":"user","text":"x"},"timestamp":"2026-01-01 00:00:00Z"}`, "/timestamp", "ISO-8601"},
		{"timestamp out of range", `{"id":"a","content":{"kind":"user","text":"x"},"timestamp":"2026-13-40T00:00:00Z"}`, "/timestamp", "ISO-8601"},
		{"timestamp as number", `{"id":"a","content":{"kind":"user","text":"x"},"timestamp":1767225600000}`, "/timestamp", "number"},
		{"zero timestamp", `{"id":"a","content":{"kind":"user","text":"x"},"timestamp":"0001-01-01T00:00:00Z"}`, "/timestamp", "zero"},
		{"not an object", `[1,2]`, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, err := DecodeEntry([]byte(tc.in))
			if err == nil {
				t.Fatalf("accepted %s as %#v", tc.in, e)
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is %T, want *FieldError", err, err)
			}
			if fe.Pointer != tc.ptr {
				t.Errorf("pointer = %q, want %q (%v)", fe.Pointer, tc.ptr, err)
			}
			if !strings.Contains(fe.Msg, tc.msg) {
				t.Errorf("message %q does not mention %q", fe.Msg, tc.msg)
			}
		})
	}
}

// TestValidateRejectsGoValues covers values JSON cannot carry (NaN,
// infinities) but a Go producer can build.
func TestValidateRejectsGoValues(t *testing.T) {
	t.Parallel()
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		name string
		e    Entry
		ptr  string
	}{
		{"NaN step duration", Entry{ID: "a", Timestamp: t0, Content: TurnReceipt{Steps: []Step{{DurationMs: nan}}}}, "/content/steps/0/durationMs"},
		{"infinite cost", Entry{ID: "a", Timestamp: t0, Content: TurnReceipt{Steps: []Step{{DurationMs: 1, CostUSD: &inf}}}}, "/content/steps/0/costUSD"},
		{"negative infinite tok/s", Entry{ID: "a", Timestamp: t0, Content: TurnReceipt{Steps: []Step{{TokensPerSecond: ptr(math.Inf(-1))}}}}, "/content/steps/0/tokensPerSecond"},
		{"NaN reasoning duration", Entry{ID: "a", Timestamp: t0, Content: Reasoning{DurationMs: &nan}}, "/content/durationMs"},
		{"NaN meter", Entry{ID: "a", Timestamp: t0, Content: ReportContent{Report: Report{Rows: []ReportRow{{Kind: RowMeter, Used: 1, Total: nan}}}}}, "/content/report/rows/0/total"},
		{"infinite elapsed", Entry{ID: "a", Timestamp: t0, Content: Stopped{Summary: StopSummary{ElapsedMs: inf}}}, "/content/summary/elapsedMs"},
		{"NaN retry delay", Entry{ID: "a", Timestamp: t0, Content: Failure{Reason: "x", RetryAfterMs: &nan}}, "/content/retryAfterMs"},
		{"negative tool duration", Entry{ID: "a", Timestamp: t0, Content: Tool{Receipt: ToolReceipt{Status: ToolOK, DurationMs: ptr(-0.5)}}}, "/content/receipt/durationMs"},
		{"negative presentation revision", Entry{ID: "a", Timestamp: t0, Content: Tool{Receipt: ToolReceipt{Status: ToolOK}, Presentation: &Presentation{Schema: "s", Revision: -1}}}, "/content/presentation/revision"},
		{"invalid payload", Entry{ID: "a", Timestamp: t0, Content: Tool{Receipt: ToolReceipt{Status: ToolOK}, Presentation: &Presentation{Schema: "s", Payload: RawJSON(`{"a":`)}}}, "/content/presentation/payload"},
		{"empty id", Entry{Timestamp: t0, Content: User{}}, "/id"},
		{"zero timestamp", Entry{ID: "a", Content: User{}}, "/timestamp"},
		{"nil content", Entry{ID: "a", Timestamp: t0}, "/content"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := EncodeEntry(tc.e)
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("EncodeEntry error = %v, want a *FieldError", err)
			}
			if fe.Pointer != tc.ptr {
				t.Fatalf("pointer = %q, want %q", fe.Pointer, tc.ptr)
			}
			if FingerprintOf(tc.e) != (Fingerprint{}) {
				t.Fatal("an invalid entry got a fingerprint")
			}
			if _, err := NewDocument("d", []Entry{tc.e}); err == nil {
				t.Fatal("NewDocument accepted an invalid entry")
			}
		})
	}
}

func TestInstantKeepsOffsetAndPrecision(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"2026-01-01T00:00:00.000Z",
		"2026-01-01T01:00:00.000+01:00",
		"2026-01-01T00:00:00.123456789-07:30",
	} {
		ts, err := ParseInstant(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(AppendInstant(nil, ts)); got != in {
			t.Errorf("AppendInstant(ParseInstant(%q)) = %q", in, got)
		}
	}
}

func TestFieldErrorText(t *testing.T) {
	t.Parallel()
	if got := (&FieldError{Pointer: "/content/tone", Msg: "bad"}).Error(); got != "entry /content/tone: bad" {
		t.Fatalf("got %q", got)
	}
	if got := (&FieldError{Msg: "bad"}).Error(); got != "entry: bad" {
		t.Fatalf("got %q", got)
	}
}
