package transcript

// Kind names a content variant. It is the value of the "kind" member in JSON.
type Kind string

// The content kinds. The first group reads and writes the same JSON shapes as
// Jazz version 3 logs; the second group is folio's own.
const (
	KindUser        Kind = "user"
	KindAgent       Kind = "agent"
	KindReasoning   Kind = "reasoning"
	KindTool        Kind = "tool"
	KindNotice      Kind = "notice"
	KindReport      Kind = "report"
	KindHeader      Kind = "header"
	KindTurnReceipt Kind = "turn-receipt"
	KindStopped     Kind = "stopped"
	KindExpanded    Kind = "expanded"

	KindFailure    Kind = "failure"
	KindSteering   Kind = "steering"
	KindCompaction Kind = "compaction"
)

// Content is the sealed union of entry contents. Only the types in this
// package implement it. Content carries facts: no styling, widths or markup
// produced for a particular view.
type Content interface {
	Kind() Kind
	isContent()
}

// User is a message the person typed.
type User struct {
	Text string `json:"text"`
}

// Agent is the model's answer, as markdown source.
type Agent struct {
	Markdown string `json:"markdown"`
}

// Reasoning is the model's thinking for one model step. Each step keeps its
// own entry; views may fold consecutive steps together.
type Reasoning struct {
	Text       string   `json:"text"`
	Label      string   `json:"label"`
	DurationMs *float64 `json:"durationMs,omitzero"`
	Steps      *int64   `json:"steps,omitzero"`
	Tokens     *int64   `json:"tokens,omitzero"`
}

// Tool is the outcome of one tool invocation. InvocationID ties it to the
// presentation host's invocation; Presentation is the retained checkpoint the
// host recorded at closure, if any.
type Tool struct {
	Receipt      ToolReceipt   `json:"receipt"`
	InvocationID string        `json:"invocationId,omitzero"`
	Presentation *Presentation `json:"presentation,omitzero"`
	// Supplementals are the retained checkpoints of the invocation's
	// explicitly keyed supplemental items, in the order they were first used.
	Supplementals []KeyedPresentation `json:"supplementals,omitzero"`
}

// KeyedPresentation is the retained checkpoint of one supplemental item.
type KeyedPresentation struct {
	Key          string       `json:"key"`
	Presentation Presentation `json:"presentation"`
}

// ToolStatus is the terminal outcome of a tool invocation.
type ToolStatus string

// Tool outcomes.
const (
	ToolOK     ToolStatus = "ok"
	ToolFailed ToolStatus = "failed"
	ToolDenied ToolStatus = "denied"
)

// ToolReceipt is the structured record of what a tool did. Painters decide how
// to lay receipts out; the receipt itself holds no layout.
type ToolReceipt struct {
	App        string     `json:"app"`
	Summary    string     `json:"summary"`
	Status     ToolStatus `json:"status"`
	Args       string     `json:"args,omitzero"`
	DurationMs *float64   `json:"durationMs,omitzero"`
	Reason     string     `json:"reason,omitzero"`
	// NotDone says, in words, what the invocation left undone (Jazz
	// writes text here). Older folio logs wrote true; the codec reads that
	// as notDoneLegacy.
	NotDone        NotDoneText  `json:"notDone,omitzero"`
	RemedyKey      string       `json:"remedyKey,omitzero"`
	Detail         string       `json:"detail,omitzero"`
	OutputPreview  string       `json:"outputPreview,omitzero"`
	ClassifiedRisk string       `json:"classifiedRisk,omitzero"`
	DiffPreview    *DiffPreview `json:"diffPreview,omitzero"`
	DiffText       string       `json:"diffText,omitzero"`
}

// NotDoneText is a receipt's notDone: what the invocation left undone.
type NotDoneText string

// DiffPreview is a bounded head of a diff plus how many lines were left out.
type DiffPreview struct {
	Lines       []string `json:"lines"`
	HiddenLines int64    `json:"hiddenLines"`
}

// Presentation is a tool's retained presentation checkpoint: an opaque,
// bounded payload tagged with the schema that knows how to show it. Generic
// code never looks inside Payload.
type Presentation struct {
	Schema   string    `json:"schema"`
	Version  int64     `json:"version"`
	Revision int64     `json:"revision"`
	Payload  RawJSON   `json:"payload,omitzero"`
	Artifact *Artifact `json:"artifact,omitzero"`
	// Ephemeral marks a value that may be shown while its invocation is
	// open but never kept: an argument draft, or the value of an item
	// whose retention is ephemeral. The mark itself is never encoded;
	// Entry.Durable leaves such values out of what is persisted.
	Ephemeral bool `json:"-"`
}

// Durable returns the tool without its ephemeral presentation values, as
// it may be persisted. changed is false when it had none; t is then
// returned as is. The supplementals are copied, never changed in place.
func (t Tool) Durable() (d Tool, changed bool) {
	if t.Presentation != nil && t.Presentation.Ephemeral {
		t.Presentation, changed = nil, true
	}
	keep := -1 // supplementals before it are all kept
	for i := range t.Supplementals {
		if t.Supplementals[i].Presentation.Ephemeral {
			keep = i
			break
		}
	}
	if keep >= 0 {
		sup := append([]KeyedPresentation(nil), t.Supplementals[:keep]...)
		for _, kp := range t.Supplementals[keep+1:] {
			if !kp.Presentation.Ephemeral {
				sup = append(sup, kp)
			}
		}
		if len(sup) == 0 {
			sup = nil
		}
		t.Supplementals, changed = sup, true
	}
	return t, changed
}

// Artifact references bounded, incrementally produced output stored beside the
// log instead of inline.
type Artifact struct {
	Ref            string `json:"ref"`
	ContentType    string `json:"contentType"`
	CommittedBytes int64  `json:"committedBytes"`
	Revision       int64  `json:"revision"`
	Final          bool   `json:"final,omitzero"`
	Available      bool   `json:"available"`
}

// Tone classifies a notice.
type Tone string

// Notice tones.
const (
	ToneInfo    Tone = "info"
	ToneSuccess Tone = "success"
	ToneWarn    Tone = "warn"
	ToneError   Tone = "error"
	ToneDebug   Tone = "debug"
	ToneLog     Tone = "log"
)

// Notice is a line of status from folio itself. Audience "classic" limits it
// to the classic view.
type Notice struct {
	Text     string `json:"text"`
	Tone     Tone   `json:"tone"`
	Audience string `json:"audience,omitzero"`
}

// ReportContent wraps a structured report.
type ReportContent struct {
	Report Report `json:"report"`
}

// Report is a labelled set of rows: fields, items, meters, text and groups.
// Its JSON carries "_tag":"report", as Jazz writes it; reports of older
// folio logs without it still read.
type Report struct {
	Label string
	Rows  []ReportRow
	Note  string
}

// RowKind names a report row variant.
type RowKind string

// Report row kinds.
const (
	RowField RowKind = "field"
	RowItem  RowKind = "item"
	RowMeter RowKind = "meter"
	RowText  RowKind = "text"
	RowGroup RowKind = "group"
	RowGap   RowKind = "gap"
)

// ReportTone colours a report row. Report tones are not notice tones.
type ReportTone string

// Report row tones.
const (
	ReportText    ReportTone = "text"
	ReportMuted   ReportTone = "muted"
	ReportAccent  ReportTone = "accent"
	ReportSuccess ReportTone = "success"
	ReportWarning ReportTone = "warning"
	ReportError   ReportTone = "error"
)

// Marker is the state glyph of an item row.
type Marker string

// Item markers.
const (
	MarkerCurrent   Marker = "current"
	MarkerActive    Marker = "active"
	MarkerInactive  Marker = "inactive"
	MarkerAttention Marker = "attention"
	MarkerDisabled  Marker = "disabled"
)

// ReportRow is one row of a report, in the shapes Jazz writes. Which
// members a row may carry depends on its Kind, and the codec rejects the
// others:
//
//	field: key, value, tone?, detail?
//	item:  name, detail?, marker?, tone?
//	meter: used, total, caption
//	text:  text, tone?
//	group: label, count? (a heading over the rows that follow it)
//	gap:   nothing
type ReportRow struct {
	Kind    RowKind
	Key     string     // field
	Value   string     // field
	Name    string     // item
	Detail  string     // field, item
	Marker  Marker     // item
	Tone    ReportTone // field, item, text
	Used    float64    // meter
	Total   float64    // meter
	Caption string     // meter
	Text    string     // text
	Label   string     // group
	Count   string     // group
}

// Header opens a conversation: the agent's name and the model it talks to.
type Header struct {
	Name     string `json:"name"`
	Provider string `json:"provider,omitzero"`
	Model    string `json:"model,omitzero"`
}

// TurnReceipt closes a turn with the measured statistics of each model step.
// FinishedAt is epoch milliseconds of the last step's completion; receipts
// written before it existed leave it nil.
type TurnReceipt struct {
	Steps      []Step `json:"steps"`
	FinishedAt *int64 `json:"finishedAt,omitzero"`
}

// Step is one model request within a turn. Every field but DurationMs is
// optional: what the provider did not report and the engine did not measure
// stays nil rather than being guessed.
type Step struct {
	DurationMs           float64  `json:"durationMs"`
	PromptTokens         *int64   `json:"promptTokens,omitzero"`
	CompletionTokens     *int64   `json:"completionTokens,omitzero"`
	TotalTokens          *int64   `json:"totalTokens,omitzero"`
	CacheReadTokens      *int64   `json:"cacheReadTokens,omitzero"`
	CostUSD              *float64 `json:"costUSD,omitzero"`
	TokensPerSecond      *float64 `json:"tokensPerSecond,omitzero"`
	GenerationDurationMs *float64 `json:"generationDurationMs,omitzero"`
	// TimeToFirstTokenMs is how long the engine waited from sending the
	// step's request (retries of it included) to the stream's first output
	// event: text, reasoning or a tool call. Nil for a step that produced
	// no output.
	TimeToFirstTokenMs *float64 `json:"timeToFirstTokenMs,omitzero"`
}

// Stopped records a turn the person stopped, with what was and was not done.
type Stopped struct {
	Summary StopSummary `json:"summary"`
}

// StopSummary is the body of a Stopped entry.
type StopSummary struct {
	ElapsedMs float64  `json:"elapsedMs"`
	Done      []string `json:"done"`
	NotDone   []string `json:"notDone"`
}

// Expanded is detail text the person asked to see.
type Expanded struct {
	Text string `json:"text"`
}

// Failure ends a reply that failed. The partial answer and trace before it
// stay in the document; this entry says why, once.
type Failure struct {
	Reason       string   `json:"reason"`
	Headline     string   `json:"headline,omitzero"`
	Detail       string   `json:"detail,omitzero"`
	Retryable    bool     `json:"retryable"`
	RetryAfterMs *float64 `json:"retryAfterMs,omitzero"`
}

// Steering is input the person gave a running turn, placed where the model
// consumed it.
type Steering struct {
	Text      string `json:"text"`
	CommandID string `json:"commandId"`
}

// Compaction records that older model messages were summarized, and which
// entries the summary covers.
type Compaction struct {
	Summary string          `json:"summary"`
	Covers  CompactionRange `json:"covers"`
}

// CompactionRange names the first and last entry a compaction covers.
type CompactionRange struct {
	FromID string `json:"fromId"`
	ToID   string `json:"toId"`
}

func (User) Kind() Kind          { return KindUser }
func (Agent) Kind() Kind         { return KindAgent }
func (Reasoning) Kind() Kind     { return KindReasoning }
func (Tool) Kind() Kind          { return KindTool }
func (Notice) Kind() Kind        { return KindNotice }
func (ReportContent) Kind() Kind { return KindReport }
func (Header) Kind() Kind        { return KindHeader }
func (TurnReceipt) Kind() Kind   { return KindTurnReceipt }
func (Stopped) Kind() Kind       { return KindStopped }
func (Expanded) Kind() Kind      { return KindExpanded }
func (Failure) Kind() Kind       { return KindFailure }
func (Steering) Kind() Kind      { return KindSteering }
func (Compaction) Kind() Kind    { return KindCompaction }

func (User) isContent()          {}
func (Agent) isContent()         {}
func (Reasoning) isContent()     {}
func (Tool) isContent()          {}
func (Notice) isContent()        {}
func (ReportContent) isContent() {}
func (Header) isContent()        {}
func (TurnReceipt) isContent()   {}
func (Stopped) isContent()       {}
func (Expanded) isContent()      {}
func (Failure) isContent()       {}
func (Steering) isContent()      {}
func (Compaction) isContent()    {}
