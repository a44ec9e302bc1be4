package transcript

import (
	"bytes"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// sameEntry reports whether two entries hold the same facts, with the
// instant compared by its written form (offset included).
func sameEntry(a, b Entry) bool {
	return a.ID == b.ID &&
		string(AppendInstant(nil, a.Timestamp)) == string(AppendInstant(nil, b.Timestamp)) &&
		reflect.DeepEqual(a.Content, b.Content)
}

// TestScannerReadsCanonical: the scanner takes every kind folio writes but
// reports (which go the careful way), so hydration really is one pass.
func TestScannerReadsCanonical(t *testing.T) {
	t.Parallel()
	for name, c := range oneOfEachKind() {
		for _, ts := range []time.Time{t0, t0.In(time.FixedZone("", 3600)).Add(123)} {
			e := Entry{ID: "e-" + name, Content: c, Timestamp: ts}
			b, err := EncodeEntry(e)
			if err != nil {
				t.Fatal(err)
			}
			var sc Scanner
			sc.Reset(string(b), 0)
			got, ok := sc.Entry()
			if name == "report" {
				if ok {
					t.Fatalf("the scanner does not read reports, yet took %s", b)
				}
				continue
			}
			if !ok || !sc.End() {
				t.Fatalf("%s: the scanner gave up on %s", name, b)
			}
			want, err := DecodeEntry(b)
			if err != nil {
				t.Fatal(err)
			}
			if !sameEntry(got, want) {
				t.Fatalf("%s: scanner %+v, DecodeEntry %+v", name, got, want)
			}
		}
	}
}

// TestScannerGivesUp: documents the strict decoder refuses, or that the
// scanner cannot read exactly, are left to the strict decoder.
func TestScannerGivesUp(t *testing.T) {
	t.Parallel()
	const ts = `"timestamp":"2026-03-04T05:06:07.000Z"`
	for _, doc := range []string{
		`{"id":"a","content":{"kind":"user","text":"x","text":"y"},` + ts + `}`,
		`{"id":"a","id":"a","content":{"kind":"user","text":"x"},` + ts + `}`,
		`{"id":"a","content":{"kind":"user","text":"x","extra":1},` + ts + `}`,
		`{"id":"a","content":{"text":"x","kind":"user"},` + ts + `}`,
		`{"id":"","content":{"kind":"user","text":"x"},` + ts + `}`,
		`{"id":"a","content":{"kind":"user","text":"\xff"},` + ts + `}`,
		`{"id":"a","content":{"kind":"user","text":"\ud800"},` + ts + `}`,
		`{"id":"a","content":{"kind":"user","text":null},` + ts + `}`,
		`{"id":"a","content":{"kind":"reasoning","text":"x","label":"l","tokens":1.0},` + ts + `}`,
		`{"id":"a","content":{"kind":"reasoning","text":"x","label":"l","tokens":-1},` + ts + `}`,
		`{"id":"a","content":{"kind":"notice","text":"x","tone":"loud"},` + ts + `}`,
		`{"id":"a","content":{"kind":"tool","receipt":{"app":"a","summary":"s","status":"ok"},"presentation":{"schema":"s","version":1,"revision":1,"payload":{"a":1,"a":2}}},` + ts + `}`,
		`{"id":"a","content":{"kind":"user","text":"x"},"timestamp":"yesterday"}`,
		`{"id":"a","content":{"kind":"user","text":"x"}}`,
		`{"id":"a","content":{"kind":"user","text":"x"},` + ts,
	} {
		var sc Scanner
		sc.Reset(doc, 0)
		if _, ok := sc.Entry(); ok && sc.End() {
			t.Errorf("the scanner took %s", doc)
		}
	}
}

// FuzzScannerAgrees is the differential test of the one-pass scanner
// against DecodeEntry: whatever the scanner accepts, DecodeEntry accepts,
// with the same facts.
func FuzzScannerAgrees(f *testing.F) {
	for _, c := range oneOfEachKind() {
		b, err := EncodeEntry(Entry{ID: "seed", Content: c, Timestamp: t0})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add([]byte(strings.ReplaceAll(string(b), ",", " ,\n ")))
		f.Add([]byte(strings.ReplaceAll(string(b), `":"`, `":"\u00e9\"`)))
	}
	f.Add([]byte(`{"timestamp":"2026-03-04T05:06:07+01:00","content":{"kind":"user","text":"\u0041\n"},"id":"\u0061"}`))
	f.Add([]byte(`{"id":"a","content":{"kind":"tool","receipt":{"app":"a","summary":"s","status":"ok","durationMs":1e3},"presentation":{"schema":"s","version":1,"revision":1,"payload":[1, {"b":"\"}"}]}},"timestamp":"2026-03-04T05:06:07Z"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var sc Scanner
		sc.Reset(string(data), 0)
		got, ok := sc.Entry()
		if !ok || !sc.End() {
			return
		}
		want, err := DecodeEntry(data)
		if err != nil {
			t.Fatalf("the scanner took what DecodeEntry refuses (%v):\n%s", err, data)
		}
		if !sameEntry(got, want) {
			t.Fatalf("facts differ:\nscanner     %+v\nDecodeEntry %+v\n%s", got, want, data)
		}
	})
}

// FuzzCanonicalInstant: the quick reading of folio's own instants gives
// what time.Parse gives.
func FuzzCanonicalInstant(f *testing.F) {
	for _, s := range []string{"2026-03-04T05:06:07.008Z", "2024-02-29T23:59:59.999Z", "2023-02-29T00:00:00.000Z",
		"0000-01-01T00:00:00.000Z", "2026-13-01T00:00:00.000Z", "2026-01-01T24:00:00.000Z", "2026-01-01T00:00:60.000Z", "2026-04-31T00:00:00.000Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseCanonicalInstant(s)
		if !ok {
			return
		}
		want, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || got != want {
			t.Fatalf("%q: quick %v, time.Parse %v (%v)", s, got, want, err)
		}
	})
}

// TestScannerStrings compares String with json's own unquoting on strings
// whose escapes sit where a quick scan could be fooled.
func TestScannerStrings(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		``, `a`, `a\"`, `\"`, `\\`, `a\\`, `a\\\"b`, `\"\"\"`, `x\\\\`, `\n\t\r\b\f\/`,
		`\u00e9`, `é`, `\"é`, "a\tb", "a\x01", `\q`, `\ud800`, "\xff", `long plain ASCII text beyond eight bytes`,
		`long text with an escaped quote \" beyond eight bytes and \\ more`,
	} {
		doc := `"` + body + `"` + `,"next":"z"`
		var sc Scanner
		sc.Reset(doc, 0)
		got, ok := sc.String()
		want, err := jsontext.AppendUnquote(nil, `"`+body+`"`)
		if ok != (err == nil) || ok && got != string(want) {
			t.Errorf("%q: String %q %v; json %q %v", body, got, ok, want, err)
		}
		if ok && doc[sc.Offset():] != `,"next":"z"` {
			t.Errorf("%q: stopped at %q", body, doc[sc.Offset():])
		}
	}
}

// TestPlainRun checks the eight-bytes-at-a-time search for the end of a
// plain run against the byte rule, for every byte value at every position
// of bodies of several lengths, read from several starts so the words fall
// differently.
func TestPlainRun(t *testing.T) {
	t.Parallel()
	slow := func(s string, i int) int {
		for ; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
				break
			}
		}
		return i
	}
	if plainRun("", 0) != 0 || plainRun("abc", 3) != 3 {
		t.Fatal("an empty run ends where it starts")
	}
	for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 23} {
		for _, start := range []int{0, 1, 3, 8} {
			for c := range 256 {
				for pos := range n {
					for _, fill := range []byte{'a', ' ', '~', '!', 0x7f, '"', '\\', 0x1f, 0x80, 0x21, 0x5b, 0x5d} {
						b := bytes.Repeat([]byte{fill}, start+n)
						b[start+pos] = byte(c)
						for _, tail := range []string{``, `"`, `","next":"z"}]}`} {
							s := string(b) + tail
							if got, want := plainRun(s, start), slow(s, start); got != want {
								t.Fatalf("%q from %d: plainRun %d, want %d", s, start, got, want)
							}
						}
					}
				}
			}
		}
	}
}

// FuzzScannerString compares String with json's own unquoting on any
// string body, found the way the grammar finds it (a backslash always
// takes the next byte): escapes, \u0000, invalid UTF-8, control bytes and
// quotes after backslashes, at every place an eight-byte word can put
// them.
func FuzzScannerString(f *testing.F) {
	for _, s := range []string{``, `a`, `abcdefg"`, `abcdefgh"`, `abcdefghi"`, `a\"`, `\\"`, `abcdefg\\\"x"`,
		`\u0000"`, "\x00\"", "abcdefghijklmno\xff\"", `\ud800"`, `\u00e9é"`, "abcdefgh\x1f\"", "abcdefg\x7f\"",
		`long plain ASCII text beyond eight bytes","next":"z"`, `0123456\"89abcdef\\"tail`, `\/\b\f\n\r\t"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		doc := `"` + body
		end := -1
		for i := 1; i < len(doc); i++ {
			if doc[i] == '\\' {
				i++
			} else if doc[i] == '"' {
				end = i
				break
			}
		}
		var sc Scanner
		sc.Reset(doc, 0)
		got, ok := sc.String()
		if end < 0 {
			if ok {
				t.Fatalf("%q: String took an unterminated string: %q", doc, got)
			}
			return
		}
		want, err := jsontext.AppendUnquote(nil, doc[:end+1])
		if ok != (err == nil) || ok && got != string(want) {
			t.Fatalf("%q: String %q %v; json %q %v", doc, got, ok, want, err)
		}
		if ok && sc.Offset() != end+1 {
			t.Fatalf("%q: String stopped at %d, the string ends at %d", doc, sc.Offset(), end+1)
		}
	})
}

// TestCanonicalInstantDays reads back days across the whole range of
// four-digit years, every day around the century and leap-year edges and
// every 13th elsewhere, at a time of day that changes with the day.
func TestCanonicalInstantDays(t *testing.T) {
	t.Parallel()
	end := time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	step := 0
	for d := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC); !d.After(end); step++ {
		at := d.Add(time.Duration(step%86400)*time.Second + time.Duration(step%1000)*time.Millisecond)
		s := at.Format("2006-01-02T15:04:05.000Z07:00")
		if got, ok := parseCanonicalInstant(s); !ok || got != at {
			t.Fatalf("%s: read %v %v", s, got, ok)
		}
		if y := d.Year() % 100; y == 99 || y == 0 || y == 1 || d.Year() >= 1969 && d.Year() <= 1971 {
			d = d.AddDate(0, 0, 1)
		} else {
			d = d.AddDate(0, 0, 13)
		}
	}
}

// TestScannerFloats compares the quick reading of short numbers with
// strconv.ParseFloat, sign of zero included, and FuzzScannerFloat on any
// digits.
func TestScannerFloats(t *testing.T) {
	t.Parallel()
	for _, n := range []string{"0", "-0", "7", "-7", "5339", "999999999999999", "-999999999999999", "1000000000000000",
		"9007199254740993", "123456789012345678901", "1.5", "-0.0", "1e3", "1E-2", "0.1", "12.000",
		"1234.5", "0.000000000000001", "999999999999.999", "0.1234567890123456", "-5339.25", "3.14159265358979", "100000000000000.0"} {
		var sc Scanner
		sc.Reset(n+",", 0)
		var got float64
		ok := sc.float(&got)
		want, err := strconv.ParseFloat(n, 64)
		if !ok || err != nil || got != want || math.Signbit(got) != math.Signbit(want) {
			t.Errorf("%s: scanner %v %v, ParseFloat %v %v", n, got, ok, want, err)
		}
	}
}

func FuzzScannerFloat(f *testing.F) {
	for _, n := range []string{"0", "-0", "5339", "1234.5", "0.1", "-0.000", "999999999999999", "9999999999999.99", "1e3"} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, n string) {
		var sc Scanner
		sc.Reset(n+",", 0)
		var got float64
		if !sc.float(&got) || sc.Offset() != len(n) {
			return
		}
		want, err := strconv.ParseFloat(strings.TrimLeft(n, " \t\n\r"), 64) // the scanner skips whitespace
		if err != nil || got != want || math.Signbit(got) != math.Signbit(want) {
			t.Fatalf("%s: scanner %v, ParseFloat %v %v", n, got, want, err)
		}
	})
}
