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

// The JSON grammar under Scanner: objects, arrays, strings, numbers and
// literals, read in place from the scanned text.

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
