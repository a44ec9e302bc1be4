package transcript

import (
	"unsafe"
)

// Scanner decodes entries straight from the text of a stored record, in one
// pass and without reflection. It reads only the shapes folio writes: each
// entry's content starts with its "kind", members are known and appear once,
// and literals are of the type the schema names. Anything else (and every
// invalid entry) makes it give up, so the caller can decode the same bytes
// with DecodeEntry, which accepts the same documents and explains faults.
// Whatever Scanner accepts, DecodeEntry accepts with an equal result.
//
// Strings without escapes are slices of the scanned text, not copies: an
// entry keeps the text of its record alive.
//
// Numbers behind pointers and presentations are carved from blocks the
// scanner allocates a few dozen at a time, so a log's thousands of optional
// numbers cost few allocations; an entry keeps its block alive.
type Scanner struct {
	s      string
	i      int
	ints   []int64
	floats []float64
	pres   []Presentation
	bytes  []byte
}

// carve returns n bytes of the current block for the caller to fill and
// never change once shared (a string or a payload); the capacity is cut so
// an append to them cannot reach a neighbour's.
func (sc *Scanner) carve(n int) []byte {
	if n > 4096 {
		return make([]byte, n)
	}
	if len(sc.bytes) < n {
		sc.bytes = make([]byte, 32<<10)
	}
	b := sc.bytes[:n:n]
	sc.bytes = sc.bytes[n:]
	return b
}

const blockLen = 64

func (sc *Scanner) newInt() *int64 {
	if len(sc.ints) == 0 {
		sc.ints = make([]int64, blockLen)
	}
	p := &sc.ints[0]
	sc.ints = sc.ints[1:]
	return p
}

func (sc *Scanner) newFloat() *float64 {
	if len(sc.floats) == 0 {
		sc.floats = make([]float64, blockLen)
	}
	p := &sc.floats[0]
	sc.floats = sc.floats[1:]
	return p
}

func (sc *Scanner) newPresentation() *Presentation {
	if len(sc.pres) == 0 {
		sc.pres = make([]Presentation, blockLen/4)
	}
	p := &sc.pres[0]
	sc.pres = sc.pres[1:]
	return p
}

// Reset starts scanning s at offset i.
func (sc *Scanner) Reset(s string, i int) { sc.s, sc.i = s, i }

// ResetCopy starts scanning a copy of b at its start. The copy is carved
// from the scanner's blocks, so scanning many short records costs few
// allocations.
func (sc *Scanner) ResetCopy(b []byte) {
	c := sc.carve(len(b))
	copy(c, b)
	sc.Reset(unsafe.String(unsafe.SliceData(c), len(c)), 0)
}

// Offset is the position of the next unread byte.
func (sc *Scanner) Offset() int { return sc.i }

// Text is the text being scanned.
func (sc *Scanner) Text() string { return sc.s }

// Entry decodes one entry at the current position. ok is false when the
// scanner gives up; the position is then unspecified.
func (sc *Scanner) Entry() (e Entry, ok bool) {
	if !sc.Open('{') {
		return e, false
	}
	var ts string
	var have int
	for first := true; ; first = false {
		name, more, ok := sc.Member(first)
		if !ok {
			return e, false
		}
		if !more {
			break
		}
		bit := 0
		switch name {
		case "id":
			bit = 1
			e.ID, ok = sc.String()
		case "content":
			bit = 2
			e.Content, ok = sc.content()
		case "timestamp":
			bit = 4
			ts, ok = sc.String()
		}
		if !ok || bit == 0 || have&bit != 0 {
			return e, false
		}
		have |= bit
	}
	if have != 7 || e.ID == "" || ts == "" {
		return e, false
	}
	t, err := ParseInstant(ts)
	if err != nil || t.IsZero() {
		return e, false
	}
	e.Timestamp = t
	if validateContent(e.Content) != nil {
		return e, false
	}
	return e, true
}

// content decodes a content object whose first member is "kind".
func (sc *Scanner) content() (Content, bool) {
	if !sc.Open('{') {
		return nil, false
	}
	name, more, ok := sc.Member(true)
	if !ok || !more || name != "kind" {
		return nil, false
	}
	kind, ok := sc.String()
	if !ok {
		return nil, false
	}
	var c Content
	switch Kind(kind) {
	case KindUser:
		var v User
		ok = sc.fields(func(n string) bool {
			return n == "text" && sc.str(&v.Text)
		})
		c = v
	case KindAgent:
		var v Agent
		ok = sc.fields(func(n string) bool {
			return n == "markdown" && sc.str(&v.Markdown)
		})
		c = v
	case KindExpanded:
		var v Expanded
		ok = sc.fields(func(n string) bool {
			return n == "text" && sc.str(&v.Text)
		})
		c = v
	case KindReasoning:
		var v Reasoning
		ok = sc.fields(func(n string) bool {
			switch n {
			case "text":
				return sc.str(&v.Text)
			case "label":
				return sc.str(&v.Label)
			case "durationMs":
				return sc.floatPtr(&v.DurationMs)
			case "steps":
				return sc.intPtr(&v.Steps)
			case "tokens":
				return sc.intPtr(&v.Tokens)
			}
			return false
		})
		c = v
	case KindTool:
		var v Tool
		ok = sc.fields(func(n string) bool {
			switch n {
			case "receipt":
				return sc.receipt(&v.Receipt)
			case "invocationId":
				return sc.str(&v.InvocationID)
			case "presentation":
				v.Presentation = sc.newPresentation()
				return sc.presentation(v.Presentation)
			case "supplementals":
				v.Supplementals = []KeyedPresentation{}
				return sc.array(func() bool {
					var kp KeyedPresentation
					ok := sc.object(func(n string) bool {
						switch n {
						case "key":
							return sc.str(&kp.Key)
						case "presentation":
							return sc.presentation(&kp.Presentation)
						}
						return false
					})
					v.Supplementals = append(v.Supplementals, kp)
					return ok
				})
			}
			return false
		})
		c = v
	case KindNotice:
		var v Notice
		ok = sc.fields(func(n string) bool {
			switch n {
			case "text":
				return sc.str(&v.Text)
			case "tone":
				return sc.str((*string)(&v.Tone))
			case "audience":
				return sc.str(&v.Audience)
			}
			return false
		})
		c = v
	case KindHeader:
		var v Header
		ok = sc.fields(func(n string) bool {
			switch n {
			case "name":
				return sc.str(&v.Name)
			case "provider":
				return sc.str(&v.Provider)
			case "model":
				return sc.str(&v.Model)
			}
			return false
		})
		c = v
	case KindTurnReceipt:
		var v TurnReceipt
		ok = sc.fields(func(n string) bool {
			switch n {
			case "steps":
				v.Steps = []Step{}
				return sc.array(func() bool {
					var s Step
					ok := sc.step(&s)
					v.Steps = append(v.Steps, s)
					return ok
				})
			case "finishedAt":
				return sc.intPtr(&v.FinishedAt)
			}
			return false
		})
		c = v
	case KindStopped:
		var v Stopped
		ok = sc.fields(func(n string) bool {
			return n == "summary" && sc.object(func(n string) bool {
				switch n {
				case "elapsedMs":
					return sc.float(&v.Summary.ElapsedMs)
				case "done":
					return sc.strings(&v.Summary.Done)
				case "notDone":
					return sc.strings(&v.Summary.NotDone)
				}
				return false
			})
		})
		c = v
	case KindFailure:
		var v Failure
		ok = sc.fields(func(n string) bool {
			switch n {
			case "reason":
				return sc.str(&v.Reason)
			case "headline":
				return sc.str(&v.Headline)
			case "detail":
				return sc.str(&v.Detail)
			case "retryable":
				return sc.bool(&v.Retryable)
			case "retryAfterMs":
				return sc.floatPtr(&v.RetryAfterMs)
			}
			return false
		})
		c = v
	case KindSteering:
		var v Steering
		ok = sc.fields(func(n string) bool {
			switch n {
			case "text":
				return sc.str(&v.Text)
			case "commandId":
				return sc.str(&v.CommandID)
			}
			return false
		})
		c = v
	case KindCompaction:
		var v Compaction
		ok = sc.fields(func(n string) bool {
			switch n {
			case "summary":
				return sc.str(&v.Summary)
			case "covers":
				return sc.object(func(n string) bool {
					switch n {
					case "fromId":
						return sc.str(&v.Covers.FromID)
					case "toId":
						return sc.str(&v.Covers.ToID)
					}
					return false
				})
			}
			return false
		})
		c = v
	default:
		// Reports and kinds this scanner does not know go the careful way.
		return nil, false
	}
	return c, ok
}

func (sc *Scanner) receipt(r *ToolReceipt) bool {
	return sc.object(func(n string) bool {
		switch n {
		case "app":
			return sc.str(&r.App)
		case "summary":
			return sc.str(&r.Summary)
		case "status":
			return sc.str((*string)(&r.Status))
		case "args":
			return sc.str(&r.Args)
		case "durationMs":
			return sc.floatPtr(&r.DurationMs)
		case "reason":
			return sc.str(&r.Reason)
		case "notDone":
			// Older logs wrote a boolean; DecodeEntry reads those.
			return sc.str((*string)(&r.NotDone))
		case "remedyKey":
			return sc.str(&r.RemedyKey)
		case "detail":
			return sc.str(&r.Detail)
		case "outputPreview":
			return sc.str(&r.OutputPreview)
		case "classifiedRisk":
			return sc.str(&r.ClassifiedRisk)
		case "diffText":
			return sc.str(&r.DiffText)
		case "diffPreview":
			r.DiffPreview = new(DiffPreview)
			return sc.object(func(n string) bool {
				switch n {
				case "lines":
					return sc.strings(&r.DiffPreview.Lines)
				case "hiddenLines":
					return sc.int(&r.DiffPreview.HiddenLines)
				}
				return false
			})
		}
		return false
	})
}

func (sc *Scanner) presentation(p *Presentation) bool {
	return sc.object(func(n string) bool {
		switch n {
		case "schema":
			return sc.str(&p.Schema)
		case "version":
			return sc.int(&p.Version)
		case "revision":
			return sc.int(&p.Revision)
		case "payload":
			// validateContent checks the payload.
			v, ok := sc.value()
			p.Payload = RawJSON(v)
			return ok
		case "artifact":
			a := new(Artifact)
			p.Artifact = a
			return sc.object(func(n string) bool {
				switch n {
				case "ref":
					return sc.str(&a.Ref)
				case "contentType":
					return sc.str(&a.ContentType)
				case "committedBytes":
					return sc.int(&a.CommittedBytes)
				case "revision":
					return sc.int(&a.Revision)
				case "final":
					return sc.bool(&a.Final)
				case "available":
					return sc.bool(&a.Available)
				}
				return false
			})
		}
		return false
	})
}

func (sc *Scanner) step(s *Step) bool {
	return sc.object(func(n string) bool {
		switch n {
		case "durationMs":
			return sc.float(&s.DurationMs)
		case "promptTokens":
			return sc.intPtr(&s.PromptTokens)
		case "completionTokens":
			return sc.intPtr(&s.CompletionTokens)
		case "totalTokens":
			return sc.intPtr(&s.TotalTokens)
		case "cacheReadTokens":
			return sc.intPtr(&s.CacheReadTokens)
		case "costUSD":
			return sc.floatPtr(&s.CostUSD)
		case "tokensPerSecond":
			return sc.floatPtr(&s.TokensPerSecond)
		case "generationDurationMs":
			return sc.floatPtr(&s.GenerationDurationMs)
		case "timeToFirstTokenMs":
			return sc.floatPtr(&s.TimeToFirstTokenMs)
		}
		return false
	})
}
