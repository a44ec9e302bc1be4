package transcript

import (
	"errors"
	"math"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

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
