package transcript

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// RawJSON is a JSON value kept as its encoded bytes.
type RawJSON = jsontext.Value

// strict is the decoding policy at every storage boundary: members the schema
// does not name are errors, and duplicate names are errors.
var strict = json.JoinOptions(json.RejectUnknownMembers(true), jsontext.AllowDuplicateNames(false))

// DecodeEntry parses one entry in its strict JSON form. Any failure is a
// *FieldError naming the JSON pointer of the offending member.
func DecodeEntry(data []byte) (Entry, error) {
	var e Entry
	err := e.decode(data)
	return e, err
}

// EncodeEntry returns the canonical JSON of a valid entry. The encoding is
// deterministic, so equal facts have equal bytes and equal fingerprints.
func EncodeEntry(e Entry) ([]byte, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return e.appendJSON(nil)
}

// MarshalJSONTo writes the entry's canonical form, so entries nest inside
// larger records encoded with the json v2 API.
func (e Entry) MarshalJSONTo(enc *jsontext.Encoder) error {
	b, err := EncodeEntry(e)
	if err != nil {
		return err
	}
	return enc.WriteValue(b)
}

// UnmarshalJSONFrom decodes an entry strictly; see DecodeEntry.
func (e *Entry) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	return e.decode(v)
}

type entryWire struct {
	ID        string         `json:"id"`
	Content   jsontext.Value `json:"content"`
	Timestamp string         `json:"timestamp"`
}

func (e *Entry) decode(data []byte) error {
	var w entryWire
	if err := json.Unmarshal(data, &w, strict); err != nil {
		return asFieldError("", err)
	}
	if w.ID == "" {
		return fieldErr("/id", "id is missing or empty")
	}
	if w.Timestamp == "" {
		return fieldErr("/timestamp", "timestamp is missing")
	}
	ts, err := ParseInstant(w.Timestamp)
	if err != nil {
		return fieldErr("/timestamp", "%v", err)
	}
	if ts.IsZero() {
		// Validate refuses the zero time as "not set"; accepting it here
		// would let a decoded entry fail to encode again.
		return fieldErr("/timestamp", "timestamp is the zero time (0001-01-01T00:00:00Z)")
	}
	if len(w.Content) == 0 {
		return fieldErr("/content", "content is missing")
	}
	c, err := DecodeContent(w.Content)
	if err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			return &FieldError{Pointer: "/content" + fe.Pointer, Msg: fe.Msg}
		}
		return err
	}
	*e = Entry{ID: w.ID, Content: c, Timestamp: ts}
	return nil
}

// DecodeContent parses a content object strictly, dispatching on its "kind".
// Errors are *FieldError with pointers relative to the content object.
func DecodeContent(data []byte) (Content, error) {
	var head struct {
		Kind Kind `json:"kind"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, asFieldError("", err)
	}
	if head.Kind == "" {
		return nil, fieldErr("/kind", "kind is missing")
	}
	var c Content
	var err error
	switch head.Kind {
	case KindUser:
		c, err = decodeAs[User](data)
	case KindAgent:
		c, err = decodeAs[Agent](data)
	case KindReasoning:
		c, err = decodeAs[Reasoning](data)
	case KindTool:
		c, err = decodeAs[Tool](data)
	case KindNotice:
		c, err = decodeAs[Notice](data)
	case KindReport:
		c, err = decodeAs[ReportContent](data)
	case KindHeader:
		c, err = decodeAs[Header](data)
	case KindTurnReceipt:
		c, err = decodeAs[TurnReceipt](data)
	case KindStopped:
		c, err = decodeAs[Stopped](data)
	case KindExpanded:
		c, err = decodeAs[Expanded](data)
	case KindFailure:
		c, err = decodeAs[Failure](data)
	case KindSteering:
		c, err = decodeAs[Steering](data)
	case KindCompaction:
		c, err = decodeAs[Compaction](data)
	default:
		return nil, fieldErr("/kind", "unknown kind %q", head.Kind)
	}
	if err != nil {
		return nil, err
	}
	if err := validateContent(c); err != nil {
		return nil, err
	}
	return c, nil
}

// decodeAs decodes data into T with a "kind" member allowed beside T's own.
func decodeAs[T Content](data []byte) (Content, error) {
	var w struct {
		Kind Kind `json:"kind"`
		V    T    `json:",inline"`
	}
	if err := json.Unmarshal(data, &w, strict); err != nil {
		return nil, asFieldError("", err)
	}
	return w.V, nil
}

// encodeContent returns the canonical JSON of a content value, "kind" first.
func encodeContent(c Content) ([]byte, error) {
	if err := validateContent(c); err != nil {
		return nil, err
	}
	return appendContent(nil, c)
}

func appendContent(dst []byte, c Content) ([]byte, error) {
	body, err := json.Marshal(c, json.Deterministic(true))
	if err != nil {
		return nil, fmt.Errorf("encode %s content: %w", c.Kind(), err)
	}
	dst = append(dst, `{"kind":`...)
	dst = strconv.AppendQuote(dst, string(c.Kind()))
	if len(body) > 2 {
		dst = append(dst, ',')
		dst = append(dst, body[1:]...)
	} else {
		dst = append(dst, '}')
	}
	return dst, nil
}

func (e Entry) appendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"id":`...)
	dst, _ = jsontext.AppendQuote(dst, e.ID)
	dst = append(dst, `,"content":`...)
	dst, err := appendContent(dst, e.Content)
	if err != nil {
		return nil, err
	}
	dst = append(dst, `,"timestamp":"`...)
	dst = AppendInstant(dst, e.Timestamp)
	dst = append(dst, `"}`...)
	return dst, nil
}

// ParseInstant parses an ISO-8601 instant that names its offset
// ("2026-01-01T00:00:00.000Z", "2026-01-01T01:00:00+01:00").
func ParseInstant(s string) (time.Time, error) {
	if t, ok := parseCanonicalInstant(s); ok {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an ISO-8601 instant with an offset", s)
	}
	return t, nil
}

// parseCanonicalInstant reads the form folio writes, UTC with milliseconds
// ("2026-01-01T00:00:00.000Z"), without time.Parse's generality. It gives
// the same time as time.Parse, and false for anything else.
func parseCanonicalInstant(s string) (time.Time, bool) {
	if len(s) != 24 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
		s[16] != ':' || s[19] != '.' || s[23] != 'Z' {
		return time.Time{}, false
	}
	n := func(i, j int) int {
		v := 0
		for ; i < j; i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	y, mo, d, h, mi, sec, ms := n(0, 4), n(5, 7), n(8, 10), n(11, 13), n(14, 16), n(17, 19), n(20, 23)
	if y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 || ms < 0 {
		return time.Time{}, false
	}
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[mo-1]
	if mo == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 29
	}
	if d > days {
		return time.Time{}, false
	}
	unix := daysFromCivil(y, mo, d)*86400 + int64(h*3600+mi*60+sec)
	return time.Unix(unix, int64(ms)*int64(time.Millisecond)).UTC(), true
}

// daysFromCivil is the number of days from 1970-01-01 to a valid date of
// the proleptic Gregorian calendar, counted in 400-year eras of 146,097
// days from a year that starts in March, so the leap day comes last
// (Howard Hinnant's days_from_civil). It spares time.Date's
// normalisation, which a checked date does not need.
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400                     // [0, 399]
	doy := (153*((m+9)%12)+2)/5 + d - 1    // [0, 365]
	doe := yoe*365 + yoe/4 - yoe/100 + doy // [0, 146096]
	return int64(era)*146097 + int64(doe) - 719468
}

// AppendInstant appends t in folio's canonical instant form: RFC 3339 in t's
// own offset, with milliseconds, or with nanoseconds when t has sub-millisecond
// precision, so no precision is lost in a round trip.
func AppendInstant(dst []byte, t time.Time) []byte {
	if t.Nanosecond()%int(time.Millisecond) == 0 {
		return t.AppendFormat(dst, "2006-01-02T15:04:05.000Z07:00")
	}
	return t.AppendFormat(dst, time.RFC3339Nano)
}

// asFieldError turns a json v2 error into a FieldError that keeps the JSON
// pointer, prefixed by base.
func asFieldError(base string, err error) error {
	var se *json.SemanticError
	if errors.As(err, &se) {
		var inner *FieldError
		if errors.As(se.Err, &inner) {
			return &FieldError{Pointer: base + string(se.JSONPointer) + inner.Pointer, Msg: inner.Msg}
		}
		msg := "invalid value"
		switch {
		case se.GoType != nil && se.JSONKind == '0' && isInt(se.GoType.Kind()):
			msg = "must be a whole number"
		case se.Err != nil && strings.Contains(se.Err.Error(), "unknown object member"):
			msg = "unknown field"
		case se.Err != nil:
			msg = se.Err.Error()
		case se.JSONKind != 0 && se.GoType != nil:
			msg = fmt.Sprintf("cannot use JSON %s as %s", se.JSONKind, se.GoType)
		}
		return &FieldError{Pointer: base + string(se.JSONPointer), Msg: msg}
	}
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) {
		return &FieldError{Pointer: base + string(syn.JSONPointer), Msg: syn.Err.Error()}
	}
	return &FieldError{Pointer: base, Msg: err.Error()}
}

func isInt(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Uint64
}

// Report rows have a hand-written codec that allows only each kind's
// members.

type rowField struct {
	Kind   RowKind    `json:"kind"`
	Key    string     `json:"key"`
	Value  string     `json:"value"`
	Tone   ReportTone `json:"tone,omitzero"`
	Detail string     `json:"detail,omitzero"`
}
type rowItem struct {
	Kind   RowKind    `json:"kind"`
	Name   string     `json:"name"`
	Detail string     `json:"detail,omitzero"`
	Marker Marker     `json:"marker,omitzero"`
	Tone   ReportTone `json:"tone,omitzero"`
}
type rowMeter struct {
	Kind    RowKind `json:"kind"`
	Used    float64 `json:"used"`
	Total   float64 `json:"total"`
	Caption string  `json:"caption"`
}
type rowText struct {
	Kind RowKind    `json:"kind"`
	Text string     `json:"text"`
	Tone ReportTone `json:"tone,omitzero"`
}
type rowGroup struct {
	Kind  RowKind `json:"kind"`
	Label string  `json:"label"`
	Count string  `json:"count,omitzero"`
}
type rowGap struct {
	Kind RowKind `json:"kind"`
}

// MarshalJSONTo writes only the members the row's kind allows.
func (r ReportRow) MarshalJSONTo(enc *jsontext.Encoder) error {
	var v any
	switch r.Kind {
	case RowField:
		v = rowField{r.Kind, r.Key, r.Value, r.Tone, r.Detail}
	case RowItem:
		v = rowItem{r.Kind, r.Name, r.Detail, r.Marker, r.Tone}
	case RowMeter:
		v = rowMeter{r.Kind, r.Used, r.Total, r.Caption}
	case RowText:
		v = rowText{r.Kind, r.Text, r.Tone}
	case RowGroup:
		v = rowGroup{r.Kind, r.Label, r.Count}
	case RowGap:
		v = rowGap{r.Kind}
	default:
		return fmt.Errorf("unknown report row kind %q", r.Kind)
	}
	return json.MarshalEncode(enc, v, json.Deterministic(true))
}

// UnmarshalJSONFrom reads a row strictly for its kind.
func (r *ReportRow) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	var head struct {
		Kind RowKind `json:"kind"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return err
	}
	switch head.Kind {
	case RowField:
		var w rowField
		err = json.Unmarshal(raw, &w, strict)
		*r = ReportRow{Kind: w.Kind, Key: w.Key, Value: w.Value, Tone: w.Tone, Detail: w.Detail}
	case RowItem:
		var w rowItem
		err = json.Unmarshal(raw, &w, strict)
		*r = ReportRow{Kind: w.Kind, Name: w.Name, Detail: w.Detail, Marker: w.Marker, Tone: w.Tone}
	case RowText:
		var w rowText
		err = json.Unmarshal(raw, &w, strict)
		*r = ReportRow{Kind: w.Kind, Text: w.Text, Tone: w.Tone}
	case RowMeter:
		var w rowMeter
		err = json.Unmarshal(raw, &w, strict)
		*r = ReportRow{Kind: w.Kind, Used: w.Used, Total: w.Total, Caption: w.Caption}
	case RowGroup:
		var w rowGroup
		err = json.Unmarshal(raw, &w, strict)
		*r = ReportRow{Kind: w.Kind, Label: w.Label, Count: w.Count}
	case RowGap:
		var w rowGap
		err = json.Unmarshal(raw, &w, strict)
		*r = ReportRow{Kind: w.Kind}
	case "":
		return fieldErr("/kind", "report row kind is missing")
	default:
		return fieldErr("/kind", "unknown report row kind %q", head.Kind)
	}
	if err != nil {
		return asFieldError("", err)
	}
	return nil
}

type reportWire struct {
	Tag   string      `json:"_tag"`
	Label string      `json:"label"`
	Rows  []ReportRow `json:"rows"`
	Note  string      `json:"note,omitzero"`
}

// MarshalJSONTo writes the report with Jazz's "_tag":"report" first.
func (r Report) MarshalJSONTo(enc *jsontext.Encoder) error {
	rows := r.Rows
	if rows == nil {
		rows = []ReportRow{}
	}
	return json.MarshalEncode(enc, reportWire{"report", r.Label, rows, r.Note}, json.Deterministic(true))
}

// UnmarshalJSONFrom reads a report strictly; "_tag" may be absent (older
// folio logs) but otherwise must be "report".
func (r *Report) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	var w reportWire
	if err := json.Unmarshal(raw, &w, strict); err != nil {
		return asFieldError("", err)
	}
	if w.Tag != "" && w.Tag != "report" {
		return fieldErr("/_tag", "_tag %q is not \"report\"", w.Tag)
	}
	*r = Report{Label: w.Label, Rows: w.Rows, Note: w.Note}
	return nil
}

// notDoneLegacy is the text a receipt's notDone gets when an older folio
// log wrote it as true.
const notDoneLegacy = "not done"

// UnmarshalJSONFrom reads notDone as Jazz writes it (text) or as older
// folio logs did (a boolean: true is notDoneLegacy, false is absent).
func (n *NotDoneText) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	switch tok.Kind() {
	case '"':
		*n = NotDoneText(tok.String())
	case 't':
		*n = notDoneLegacy
	case 'f':
		*n = ""
	default:
		return fieldErr("", "notDone must be text")
	}
	return nil
}

// Validate checks the facts json cannot: enumerations, required identities,
// and that every number is finite and not negative.
func (e Entry) Validate() error {
	if e.ID == "" {
		return fieldErr("/id", "id is empty")
	}
	if e.Timestamp.IsZero() {
		return fieldErr("/timestamp", "timestamp is not set")
	}
	if e.Content == nil {
		return fieldErr("/content", "content is nil")
	}
	if err := validateContent(e.Content); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			return &FieldError{Pointer: "/content" + fe.Pointer, Msg: fe.Msg}
		}
		return err
	}
	return nil
}

func validateContent(c Content) error {
	switch c := c.(type) {
	case User, Agent, Header, Expanded:
		return nil
	case Reasoning:
		return firstErr(
			num("/durationMs", c.DurationMs),
			count("/steps", c.Steps),
			count("/tokens", c.Tokens))
	case Tool:
		return validateTool(c)
	case Notice:
		if !validTone(c.Tone) {
			return fieldErr("/tone", "tone %q is not one of info, success, warn, error, debug, log", c.Tone)
		}
		if c.Audience != "" && c.Audience != "classic" {
			return fieldErr("/audience", "audience %q is not \"classic\"", c.Audience)
		}
		return nil
	case ReportContent:
		return validateRows("/report/rows", c.Report.Rows)
	case TurnReceipt:
		for i := range c.Steps {
			if err := validateStep(&c.Steps[i]); err != nil {
				return under("/steps/"+strconv.Itoa(i), err)
			}
		}
		return count("/finishedAt", c.FinishedAt)
	case Stopped:
		return num("/summary/elapsedMs", &c.Summary.ElapsedMs)
	case Failure:
		if c.Reason == "" {
			return fieldErr("/reason", "reason is empty")
		}
		return num("/retryAfterMs", c.RetryAfterMs)
	case Steering:
		if c.CommandID == "" {
			return fieldErr("/commandId", "commandId is empty")
		}
		return nil
	case Compaction:
		if c.Covers.FromID == "" || c.Covers.ToID == "" {
			return fieldErr("/covers", "covers needs fromId and toId")
		}
		return nil
	case nil:
		return fieldErr("", "content is nil")
	default:
		return fieldErr("/kind", "unsupported content %T", c)
	}
}

func validateTool(c Tool) error {
	r := c.Receipt
	switch r.Status {
	case ToolOK, ToolFailed, ToolDenied:
	default:
		return fieldErr("/receipt/status", "status %q is not one of ok, failed, denied", r.Status)
	}
	if err := num("/receipt/durationMs", r.DurationMs); err != nil {
		return err
	}
	if r.DiffPreview != nil && r.DiffPreview.HiddenLines < 0 {
		return fieldErr("/receipt/diffPreview/hiddenLines", "must not be negative, got %d", r.DiffPreview.HiddenLines)
	}
	if p := c.Presentation; p != nil {
		if err := validatePresentation("/presentation", p); err != nil {
			return err
		}
	}
	if len(c.Supplementals) == 0 {
		return nil
	}
	seen := make(map[string]bool, len(c.Supplementals))
	for i := range c.Supplementals {
		kp := &c.Supplementals[i]
		base := "/supplementals/" + strconv.Itoa(i)
		if kp.Key == "" {
			return fieldErr(base+"/key", "key is empty")
		}
		if seen[kp.Key] {
			return fieldErr(base+"/key", "key %q appears twice", kp.Key)
		}
		seen[kp.Key] = true
		if err := validatePresentation(base+"/presentation", &kp.Presentation); err != nil {
			return err
		}
	}
	return nil
}

// validatePresentation checks one retained checkpoint at JSON pointer base.
func validatePresentation(base string, p *Presentation) error {
	if err := checkPresentation(p); err != nil {
		return under(base, err)
	}
	return nil
}

// checkPresentation checks a checkpoint with pointers relative to it; they
// are only built when something is wrong, since reading a log validates
// every stored checkpoint.
func checkPresentation(p *Presentation) error {
	if p.Schema == "" {
		return fieldErr("/schema", "schema is empty")
	}
	if err := firstErr(
		count("/version", &p.Version),
		count("/revision", &p.Revision)); err != nil {
		return err
	}
	if a := p.Artifact; a != nil {
		if a.Ref == "" {
			return fieldErr("/artifact/ref", "ref is empty")
		}
		if err := firstErr(
			count("/artifact/committedBytes", &a.CommittedBytes),
			count("/artifact/revision", &a.Revision)); err != nil {
			return err
		}
	}
	if len(p.Payload) > 0 && !jsontext.Value(p.Payload).IsValid() {
		return fieldErr("/payload", "payload is not valid JSON")
	}
	return nil
}

func validateStep(s *Step) error {
	return firstErr(
		num("/durationMs", &s.DurationMs),
		count("/promptTokens", s.PromptTokens),
		count("/completionTokens", s.CompletionTokens),
		count("/totalTokens", s.TotalTokens),
		count("/cacheReadTokens", s.CacheReadTokens),
		num("/costUSD", s.CostUSD),
		num("/tokensPerSecond", s.TokensPerSecond),
		num("/generationDurationMs", s.GenerationDurationMs),
		num("/timeToFirstTokenMs", s.TimeToFirstTokenMs))
}

// under prefixes a FieldError's pointer with base.
func under(base string, err error) error {
	var fe *FieldError
	if errors.As(err, &fe) {
		return &FieldError{Pointer: base + fe.Pointer, Msg: fe.Msg}
	}
	return err
}

func validateRows(base string, rows []ReportRow) error {
	for i, r := range rows {
		p := base + "/" + strconv.Itoa(i)
		if r.Tone != "" && !validReportTone(r.Tone) {
			return fieldErr(p+"/tone", "tone %q is not one of text, muted, accent, success, warning, error", r.Tone)
		}
		switch r.Kind {
		case RowField, RowGap, RowText, RowGroup:
		case RowItem:
			switch r.Marker {
			case "", MarkerCurrent, MarkerActive, MarkerInactive, MarkerAttention, MarkerDisabled:
			default:
				return fieldErr(p+"/marker", "marker %q is not one of current, active, inactive, attention, disabled", r.Marker)
			}
		case RowMeter:
			if err := firstErr(num(p+"/used", &r.Used), num(p+"/total", &r.Total)); err != nil {
				return err
			}
		default:
			return fieldErr(p+"/kind", "unknown report row kind %q", r.Kind)
		}
	}
	return nil
}

func validReportTone(t ReportTone) bool {
	switch t {
	case ReportText, ReportMuted, ReportAccent, ReportSuccess, ReportWarning, ReportError:
		return true
	}
	return false
}

func validTone(t Tone) bool {
	switch t {
	case ToneInfo, ToneSuccess, ToneWarn, ToneError, ToneDebug, ToneLog:
		return true
	}
	return false
}

func num(ptr string, v *float64) error {
	if v == nil {
		return nil
	}
	if math.IsNaN(*v) || math.IsInf(*v, 0) {
		return fieldErr(ptr, "must be a finite number")
	}
	if *v < 0 {
		return fieldErr(ptr, "must not be negative, got %v", *v)
	}
	return nil
}

func count(ptr string, v *int64) error {
	if v != nil && *v < 0 {
		return fieldErr(ptr, "must not be negative, got %d", *v)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
