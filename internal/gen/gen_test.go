package gen

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

func TestDeterministicForASeed(t *testing.T) {
	var a, b, c bytes.Buffer
	if _, err := Write(&a, Options{Messages: 3000, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	Write(&b, Options{Messages: 3000, Seed: 7})
	Write(&c, Options{Messages: 3000, Seed: 8})
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("same seed gave different logs")
	}
	if bytes.Equal(a.Bytes(), c.Bytes()) {
		t.Fatal("different seeds gave the same log")
	}
}

// TestLogIsStrictVersion3 reads every line back with the strict entry codec
// and checks the mix of kinds a realistic conversation has.
func TestLogIsStrictVersion3(t *testing.T) {
	var buf bytes.Buffer
	st, err := Write(&buf, Options{Messages: 20000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if st.Entries != 20000 {
		t.Fatalf("wrote %d entries, want 20000", st.Entries)
	}
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 16<<20)
	kinds := map[transcript.Kind]int{}
	ids := map[string]bool{}
	largest := 0
	line := 0
	for sc.Scan() {
		line++
		var rec struct {
			Type    string           `json:"type"`
			Version int              `json:"version"`
			Entries []jsontext.Value `json:"entries"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec, json.RejectUnknownMembers(false)); err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		if line == 1 {
			if rec.Type != "conversation" || rec.Version != 3 {
				t.Fatalf("header %s", sc.Bytes())
			}
			continue
		}
		for _, raw := range rec.Entries {
			e, err := transcript.DecodeEntry(raw)
			if err != nil {
				t.Fatalf("line %d: %v", line, err)
			}
			if ids[e.ID] {
				t.Fatalf("line %d: repeated id %s", line, e.ID)
			}
			ids[e.ID] = true
			kinds[e.Content.Kind()]++
			if a, ok := e.Content.(transcript.Agent); ok && strings.Contains(a.Markdown, "$") {
				kinds["math"]++
			}
			largest = max(largest, len(raw))
		}
	}
	for _, k := range []transcript.Kind{"user", "agent", "reasoning", "tool", "failure", "compaction", "turn-receipt", "steering", "math"} {
		if kinds[k] == 0 {
			t.Errorf("no %s entries in 20,000", k)
		}
	}
	if largest < 256<<10 {
		t.Errorf("largest entry is %d bytes; want a turn bigger than a 256 KiB page", largest)
	}
}

// TestHistoryReaderAcceptsIt: the generated log is a valid version 3 log to
// folio's own reader, with no problems reported.
func TestHistoryReaderAcceptsIt(t *testing.T) {
	var buf bytes.Buffer
	st, err := Write(&buf, Options{Messages: 12000, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	conv, err := history.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(conv.Problems) != 0 || len(conv.Unknown) != 0 {
		t.Fatalf("reader reported %d problems (first: %v) and %d unknown lines", len(conv.Problems), conv.Problems, len(conv.Unknown))
	}
	if conv.Document.Len() != st.Entries || len(conv.Messages) == 0 {
		t.Fatalf("reader has %d entries and %d messages; wrote %d entries", conv.Document.Len(), len(conv.Messages), st.Entries)
	}
}

// TestMixAddsEveryKind: across a few seeds, Mix adds each kind of record it
// promises, and an even seed ends the log in a provisional tail.
func TestMixAddsEveryKind(t *testing.T) {
	want := []string{`"type":"ui-open"`, `"type":"ui-transcript"`, `"type":"branch"`, `"type":"on-branch"`, `"type":"head"`, `"type":"later-kind"`}
	var all strings.Builder
	for seed := range uint64(6) {
		var buf bytes.Buffer
		if _, err := Write(&buf, Options{Messages: 200, Seed: seed}); err != nil {
			t.Fatal(err)
		}
		mixed := Mix(buf.Bytes(), seed)
		all.Write(mixed)
		last := mixed[bytes.LastIndexByte(mixed[:len(mixed)-1], '\n')+1:]
		if seed%2 == 0 && !bytes.HasPrefix(last, []byte(`{"type":"ui-open"`)) {
			t.Errorf("seed %d: ends in %.40s", seed, last)
		}
	}
	for _, w := range want {
		if !strings.Contains(all.String(), w) {
			t.Errorf("no %s record mixed in", w)
		}
	}
}
