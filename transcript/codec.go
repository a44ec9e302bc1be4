package transcript

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

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
