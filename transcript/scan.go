package transcript

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
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

// object reads a whole object, calling member for each name; member reads
// the value and reports whether it knew the name and the value was valid.
func (sc *Scanner) object(member func(string) bool) bool {
	return sc.Open('{') && sc.members(true, member)
}

// fields reads the rest of an object whose first member has been read.
func (sc *Scanner) fields(member func(string) bool) bool {
	return sc.members(false, member)
}

func (sc *Scanner) members(first bool, member func(string) bool) bool {
	// A name seen twice is refused; the members of folio's records are
	// few, so a list is cheaper than a set.
	var names [16]string
	seen := names[:0]
	for ; ; first = false {
		name, more, ok := sc.Member(first)
		if !ok {
			return false
		}
		if !more {
			return true
		}
		for _, n := range seen {
			if n == name {
				return false
			}
		}
		seen = append(seen, name)
		if !member(name) {
			return false
		}
	}
}

func (sc *Scanner) array(elem func() bool) bool {
	if !sc.Open('[') {
		return false
	}
	sc.ws()
	if sc.i < len(sc.s) && sc.s[sc.i] == ']' {
		sc.i++
		return true
	}
	for {
		if !elem() {
			return false
		}
		sc.ws()
		if sc.i >= len(sc.s) {
			return false
		}
		switch sc.s[sc.i] {
		case ',':
			sc.i++
		case ']':
			sc.i++
			return true
		default:
			return false
		}
	}
}

func (sc *Scanner) strings(dst *[]string) bool {
	*dst = []string{}
	return sc.array(func() bool {
		s, ok := sc.String()
		*dst = append(*dst, s)
		return ok
	})
}

func (sc *Scanner) ws() {
	for sc.i < len(sc.s) {
		switch sc.s[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

// Open consumes optional whitespace and the delimiter c.
func (sc *Scanner) Open(c byte) bool {
	sc.ws()
	if sc.i < len(sc.s) && sc.s[sc.i] == c {
		sc.i++
		return true
	}
	return false
}

// Member reads the next member name of an object and its colon, or the
// object's closing brace (more is false). first says no member has been
// read yet, so no comma comes before the name.
func (sc *Scanner) Member(first bool) (name string, more, ok bool) {
	sc.ws()
	if sc.i >= len(sc.s) {
		return "", false, false
	}
	if sc.s[sc.i] == '}' {
		sc.i++
		return "", false, true
	}
	if !first {
		if sc.s[sc.i] != ',' {
			return "", false, false
		}
		sc.i++
	}
	name, ok = sc.String()
	if !ok || !sc.Open(':') {
		return "", false, false
	}
	return name, true, true
}

func (sc *Scanner) str(dst *string) bool {
	var ok bool
	*dst, ok = sc.String()
	return ok
}

// String reads a JSON string. Escaped strings are unquoted into a copy;
// others are slices of the text.
func (sc *Scanner) String() (string, bool) {
	sc.ws()
	s := sc.s
	if sc.i >= len(s) || s[sc.i] != '"' {
		return "", false
	}
	start := sc.i + 1
	// Most strings are plain ASCII: one pass finds the closing quote and
	// checks what lies before it.
	end := plainRun(s, start)
	if end < len(s) && s[end] == '"' {
		sc.i = end + 1
		return s[start:end], true
	}
	// Otherwise find the end, a quote after a backslash not ending the
	// string, and see whether the body has only one-letter escapes in
	// ASCII text, which unescape resolves here.
	simple := true
	for i := end; ; i = plainRun(s, i) {
		if i >= len(s) {
			return "", false
		}
		c := s[i]
		if c == '"' {
			end = i
			break
		}
		switch {
		case c == '\\':
			if i+1 >= len(s) {
				return "", false
			}
			if escaped[s[i+1]] == 0 {
				simple = false
			}
			i += 2
		case c < 0x20:
			return "", false
		default: // text beyond ASCII
			simple = false
			i++
		}
	}
	sc.i = end + 1
	v := s[start:end]
	if simple {
		return sc.unescape(v), true
	}
	if strings.IndexByte(v, '\\') < 0 {
		return v, utf8.ValidString(v)
	}
	return unquoteAll(v)
}

// escaped maps the letter of each one-letter escape to the byte it stands
// for.
var escaped = [256]byte{'"': '"', '\\': '\\', '/': '/', 'n': '\n', 't': '\t', 'r': '\r', 'b': '\b', 'f': '\f'}

// plainRun returns the position of the first byte of s from i on that is
// not printable ASCII or is a quote or a backslash, or len(s). A string
// body of such bytes needs no unquoting or UTF-8 check.
func plainRun(s string, i int) int {
	// Eight bytes at a time: a byte of 0x80 or more sets its top bit, and
	// then so does one below 0x20 once 0x20 is taken from every byte; a
	// quote or a backslash is a zero byte after xor with quotes or
	// backslashes. The flags may be wrong above a flagged byte (a borrow
	// runs on), never below one, so the lowest flag is the byte sought.
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // read only
	flags := func(x uint64) uint64 {
		q, bs := x^(lo*'"'), x^(lo*'\\')
		return (x | (x - lo*0x20) | (q-lo)&^q | (bs-lo)&^bs) & hi
	}
	for ; i+16 <= len(b); i += 16 {
		m0, m1 := flags(binary.LittleEndian.Uint64(b[i:])), flags(binary.LittleEndian.Uint64(b[i+8:]))
		if m0|m1 != 0 {
			if m0 != 0 {
				return i + bits.TrailingZeros64(m0)/8
			}
			return i + 8 + bits.TrailingZeros64(m1)/8
		}
	}
	if i+8 <= len(b) {
		if m := flags(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
		i += 8
	}
	for ; i < len(b); i++ {
		if c := b[i]; c-0x20 >= 0x60 || c == '"' || c == '\\' {
			return i
		}
	}
	return i
}

// unescape resolves the one-letter escapes of a string body of printable
// ASCII into a copy.
func (sc *Scanner) unescape(v string) string {
	b := sc.carve(len(v))[:0]
	for i := 0; i < len(v); i += 2 {
		j := plainRun(v, i)
		b = append(b, v[i:j]...)
		if j == len(v) {
			break
		}
		// String saw to it that an escape is never the body's last byte.
		b = append(b, escaped[v[j+1]])
		i = j
	}
	// b is never changed again, so the string can share it.
	return unsafe.String(unsafe.SliceData(b), len(b))
}

func unquoteAll(v string) (string, bool) {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 {
			return "", false
		}
	}
	b, err := jsontext.AppendUnquote(make([]byte, 0, len(v)+2), `"`+v+`"`)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// number reads a JSON number's text.
func (sc *Scanner) number() (string, bool) {
	sc.ws()
	s, i := sc.s, sc.i
	start := i
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() bool {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i > j
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case !digits():
		return "", false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return "", false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return "", false
		}
	}
	sc.i = i
	return s[start:i], true
}

func (sc *Scanner) float(dst *float64) bool {
	n, ok := sc.number()
	if !ok {
		return false
	}
	// Numbers of up to 15 digits without an exponent, which folio's
	// durations are, read as whole numbers divided by a power of ten:
	// both are exact as float64, so the quotient is the correctly rounded
	// value ParseFloat gives (its own first attempt is the same).
	neg := n[0] == '-'
	d := n[b2i(neg):]
	if len(d) <= 16 {
		var v uint64
		digits, point := 0, -1
		for i := 0; i < len(d); i++ {
			switch c := d[i]; {
			case c >= '0' && c <= '9':
				v = v*10 + uint64(c-'0')
				digits++
			case c == '.':
				point = i
			default:
				digits = 16 // an exponent: go the general way
			}
		}
		if digits <= 15 {
			f := float64(v)
			if point >= 0 {
				f /= pow10[len(d)-point-1]
			}
			if neg {
				f = -f // -0 too: negating 0.0 gives -0.0
			}
			*dst = f
			return true
		}
	}
	f, err := strconv.ParseFloat(n, 64)
	*dst = f
	return err == nil
}

var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (sc *Scanner) floatPtr(dst **float64) bool {
	*dst = sc.newFloat()
	return sc.float(*dst)
}

// int reads a whole number written as digits alone (no fraction, no
// exponent, no "-0"); other spellings go the careful way.
func (sc *Scanner) int(dst *int64) bool {
	n, ok := sc.number()
	if !ok || n == "-0" {
		return false
	}
	for i := 0; i < len(n); i++ {
		if c := n[i]; c != '-' && (c < '0' || c > '9') {
			return false
		}
	}
	v, err := strconv.ParseInt(n, 10, 64)
	*dst = v
	return err == nil
}

func (sc *Scanner) intPtr(dst **int64) bool {
	*dst = sc.newInt()
	return sc.int(*dst)
}

func (sc *Scanner) bool(dst *bool) bool {
	sc.ws()
	switch {
	case len(sc.s)-sc.i >= 4 && sc.s[sc.i:sc.i+4] == "true":
		sc.i += 4
		*dst = true
	case len(sc.s)-sc.i >= 5 && sc.s[sc.i:sc.i+5] == "false":
		sc.i += 5
		*dst = false
	default:
		return false
	}
	return true
}

// value reads any JSON value and returns a copy of its bytes. It only finds
// where the value ends: the caller must check the copy (validateContent
// checks payloads with the strict rules: no duplicate names, valid UTF-8).
func (sc *Scanner) value() ([]byte, bool) {
	sc.ws()
	s, start := sc.s, sc.i
	if start >= len(s) {
		return nil, false
	}
	end := -1
	switch s[start] {
	case '{', '[', '"':
		depth := 0
	scan:
		for i := start; i < len(s); i++ {
			switch s[i] {
			case '"':
				for i++; i < len(s) && s[i] != '"'; i++ {
					if s[i] == '\\' {
						i++
					}
				}
				if i >= len(s) {
					return nil, false
				}
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			if depth == 0 {
				end = i + 1
				break scan
			}
		}
	default:
		// A literal ends at the next delimiter.
		end = start
		for end < len(s) && !isDelim(s[end]) {
			end++
		}
	}
	if end <= start || s[start] == 'n' {
		return nil, false
	}
	sc.i = end
	b := sc.carve(end - start)
	copy(b, s[start:end])
	return b, true
}

func isDelim(c byte) bool {
	switch c {
	case ',', '}', ']', ':', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// Bool reads true or false.
func (sc *Scanner) Bool(dst *bool) bool { return sc.bool(dst) }

// Array reads a JSON array, calling elem to read each element.
func (sc *Scanner) Array(elem func() bool) bool { return sc.array(elem) }

// End reports whether only whitespace is left.
func (sc *Scanner) End() bool {
	sc.ws()
	return sc.i == len(sc.s)
}
