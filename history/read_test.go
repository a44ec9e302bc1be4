package history

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

const goodMsg = `{"type":"message","at":"2026-03-04T05:06:08.000Z","message":{"role":"user","content":"hi"}}`

func TestInvalidPersistedFieldsRejectTheWholeBatch(t *testing.T) {
	t.Parallel()
	ok := entryJSON(t, user("ok", "fine"))
	cases := []struct {
		name    string
		record  string
		pointer string
		entry   int
	}{
		{"bad tone", uiRec(TypeUIAppend, ok, `{"id":"n","content":{"kind":"notice","text":"x","tone":"loud"},"timestamp":"2026-03-04T05:06:07.000Z"}`), "/entries/1/content/tone", 1},
		{"negative duration", uiRec(TypeUIAppend, `{"id":"r","content":{"kind":"reasoning","text":"t","label":"l","durationMs":-1},"timestamp":"2026-03-04T05:06:07.000Z"}`, ok), "/entries/0/content/durationMs", 0},
		{"fractional token count", uiRec(TypeUIAppend, ok, `{"id":"r","content":{"kind":"reasoning","text":"t","label":"l","tokens":1.5},"timestamp":"2026-03-04T05:06:07.000Z"}`), "/entries/1/content/tokens", 1},
		{"unknown entry field", uiRec(TypeUIAppend, `{"id":"u","content":{"kind":"user","text":"x"},"timestamp":"2026-03-04T05:06:07.000Z","extra":1}`), "/entries/0/extra", 0},
		{"unknown content field", uiRec(TypeUIAppend, `{"id":"u","content":{"kind":"user","text":"x","color":"red"},"timestamp":"2026-03-04T05:06:07.000Z"}`), "/entries/0/content/color", 0},
		{"timestamp without offset", uiRec(TypeUIAppend, `{"id":"u","content":{"kind":"user","text":"x"},"timestamp":"2026-03-04 05:06"}`), "/entries/0/timestamp", 0},
		{"missing id", uiRec(TypeUIAppend, `{"content":{"kind":"user","text":"x"},"timestamp":"2026-03-04T05:06:07.000Z"}`), "/entries/0/id", 0},
		{"unknown kind", uiRec(TypeUIAppend, `{"id":"u","content":{"kind":"painting"},"timestamp":"2026-03-04T05:06:07.000Z"}`), "/entries/0/content/kind", 0},
		{"bad report row", uiRec(TypeUIAppend, `{"id":"r","content":{"kind":"report","report":{"label":"x","rows":[{"kind":"meter","used":"high","total":1,"caption":"m"}]}},"timestamp":"2026-03-04T05:06:07.000Z"}`), "/entries/0/content/report/rows/0/used", 0},
		{"bad tool status", uiRec(TypeUIAppend, `{"id":"t","content":{"kind":"tool","receipt":{"app":"a","summary":"s","status":"maybe"}},"timestamp":"2026-03-04T05:06:07.000Z"}`), "/entries/0/content/receipt/status", 0},
		{"repeated id in batch", uiRec(TypeUIAppend, ok, ok), "/entries/1/id", 1},
		{"append id already present", uiRec(TypeUIAppend, entryJSON(t, user("first", "again"))), "/entries/0/id", 0},
		{"unknown record field", `{"type":"ui-append","at":"2026-03-04T05:06:08.000Z","entries":[],"colour":1}`, "/colour", -1},
		{"entries not an array", `{"type":"ui-append","at":"2026-03-04T05:06:08.000Z","entries":{}}`, "/entries", -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			data := logOf(v3Header,
				uiRec(TypeUIAppend, entryJSON(t, user("first", "one"))),
				goodMsg,
				tc.record,
				uiRec(TypeUIAppend, entryJSON(t, agent("later", "still applies"))),
				goodMsg)
			c := readConv(t, data)
			if got := strings.Join(ids(c.Document), ","); got != "first,later" {
				t.Errorf("document %s, want first,later (previous kept, later applied, batch dropped whole)", got)
			}
			if len(c.Messages) != 2 {
				t.Errorf("messages %d, want 2", len(c.Messages))
			}
			rej := problemsOf(c, ProblemRejected)
			if len(rej) != 1 {
				t.Fatalf("problems %v, want one rejection", c.Problems)
			}
			p := rej[0]
			if p.Line != 4 || p.Type != TypeUIAppend || p.Pointer != tc.pointer || p.Entry != tc.entry {
				t.Errorf("problem %+v, want line 4 ui-append entry %d pointer %s", p, tc.entry, tc.pointer)
			}
			if !strings.Contains(p.Error(), "line 4") || !strings.Contains(p.Error(), tc.pointer) {
				t.Errorf("error text %q lacks line or pointer", p.Error())
			}
		})
	}
}

func TestRejectedSnapshotKeepsPreviousDocument(t *testing.T) {
	t.Parallel()
	data := logOf(v3Header,
		uiRec(TypeUIAppend, entryJSON(t, user("a", "1")), entryJSON(t, agent("b", "2"))),
		uiRec(TypeUITranscript, entryJSON(t, user("c", "3")), `{"id":"d","content":{"kind":"agent"},"timestamp":"x"}`),
		uiRec(TypeUIAppend, entryJSON(t, user("e", "4"))))
	c := readConv(t, data)
	if got := strings.Join(ids(c.Document), ","); got != "a,b,e" {
		t.Fatalf("document %s", got)
	}
}

func TestRejectedBatchReservesNoIDs(t *testing.T) {
	t.Parallel()
	bad := `{"id":"b","content":{"kind":"notice","text":"x","tone":"loud"},"timestamp":"2026-03-04T05:06:07.000Z"}`
	data := logOf(v3Header,
		uiRec(TypeUIAppend, entryJSON(t, user("a", "1"))),
		uiRec(TypeUIAppend, entryJSON(t, user("r", "rejected")), bad), // rejected whole
		uiRec(TypeUIAppend, entryJSON(t, user("r", "reuse"))),         // accepted: r is free
		uiRec(TypeUIAppend, entryJSON(t, user("b", "reuse"))),         // accepted: so is b
		uiRec(TypeUIAppend, entryJSON(t, user("c", "fresh"))))
	c := readConv(t, data)
	if got := strings.Join(ids(c.Document), ","); got != "a,r,b,c" {
		t.Fatalf("document %s, want a,r,b,c", got)
	}
	if got := c.Document.At(1).Content.(transcript.User).Text; got != "reuse" {
		t.Fatalf("entry r says %q, want the accepted batch's text", got)
	}
	rej := problemsOf(c, ProblemRejected)
	if len(rej) != 1 || rej[0].Line != 3 || rej[0].Pointer != "/entries/1/content/tone" {
		t.Fatalf("problems %v", c.Problems)
	}
}

// TestRecordAtIsReadLikeJazz: a record without at, or with one no date
// parser reads, is kept at the Unix epoch rather than rejected.
func TestRecordAtIsReadLikeJazz(t *testing.T) {
	t.Parallel()
	ok := entryJSON(t, user("u", "x"))
	data := logOf(v3Header,
		`{"type":"ui-append","entries":[`+ok+`]}`,
		`{"type":"ui-append","at":"yesterday","entries":[`+entryJSON(t, agent("v", "y"))+`]}`,
		`{"type":"message","message":{"role":"user","content":"x"}}`)
	c := readConv(t, data)
	if got := strings.Join(ids(c.Document), ","); got != "u,v" || len(c.Problems) != 0 || len(c.Messages) != 1 {
		t.Fatalf("document %s messages %d problems %v", got, len(c.Messages), c.Problems)
	}
}

func TestHeaderProblems(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"empty":           "",
		"not json":        "hello\n",
		"wrong type":      `{"type":"message","version":3}` + "\n",
		"no version":      `{"type":"conversation","conversationId":"c","startedAt":"2026-03-04T05:06:07.000Z"}` + "\n",
		"version 1":       `{"type":"conversation","version":1}` + "\n",
		"bad startedAt":   `{"type":"conversation","version":3,"conversationId":"c","startedAt":"soon"}` + "\n",
		"string version":  `{"type":"conversation","version":"3","conversationId":"c","startedAt":"2026-03-04T05:06:07.000Z"}` + "\n",
		"duplicate names": `{"type":"conversation","version":3,"version":3,"conversationId":"c","startedAt":"2026-03-04T05:06:07.000Z"}` + "\n",
	}
	for name, data := range cases {
		if _, err := Read(strings.NewReader(data)); !errors.Is(err, ErrNoHeader) {
			t.Errorf("%s: got %v, want ErrNoHeader", name, err)
		}
	}
	// Unknown header members are kept, as Jazz keeps titleFormat; they are
	// not problems, because Jazz opens such logs.
	c := readConv(t, logOf(`{"type":"conversation","version":3,"conversationId":"c","startedAt":"2026-03-04T05:06:07.000Z","theme":"dark"}`, goodMsg))
	if len(c.Header.Extra) != 1 || c.Header.Extra[0].Name != "theme" || len(c.Problems) != 0 {
		t.Fatalf("extra %v problems %v", c.Header.Extra, c.Problems)
	}
	// A header without the IDs Jazz needs is read anyway, saying what is missing.
	c = readConv(t, logOf(`{"type":"conversation","version":3,"startedAt":"2026-03-04T05:06:07.000Z"}`, goodMsg))
	if got := strings.Join(c.Header.Missing, ","); got != "agentId,conversationId" || len(c.Messages) != 1 {
		t.Fatalf("missing %q messages %d", got, len(c.Messages))
	}
}

func TestMessageRecordsAreStrict(t *testing.T) {
	t.Parallel()
	data := logOf(v3Header,
		goodMsg,
		`{"type":"message","at":"2026-03-04T05:06:08.000Z","message":{"role":"ghost","content":"x"}}`,
		`{"type":"message","at":"2026-03-04T05:06:08.000Z","message":{"role":"user"}}`,
		`{"type":"message","at":"2026-03-04T05:06:08.000Z"}`,
		`{"type":"message","at":"2026-03-04T05:06:08.000Z","message":{"role":"assistant","content":"fine"}}`)
	c := readConv(t, data)
	if len(c.Messages) != 2 || c.Messages[1].Content != "fine" {
		t.Fatalf("messages %+v", c.Messages)
	}
	rej := problemsOf(c, ProblemRejected)
	want := []string{"/message/role", "/message/content", "/message"}
	if len(rej) != 3 {
		t.Fatalf("problems %v", c.Problems)
	}
	for i, p := range rej {
		if p.Pointer != want[i] || p.Line != i+3 {
			t.Errorf("problem %d: %+v, want pointer %s line %d", i, p, want[i], i+3)
		}
	}
}

func TestMessageOnlyHistoryDerivesEntries(t *testing.T) {
	t.Parallel()
	rec := func(m string) string {
		return `{"type":"message","at":"2026-03-04T05:06:08.000Z","message":` + m + `}`
	}
	data := logOf(v3Header,
		rec(`{"role":"user","content":"hello"}`),
		rec(`{"role":"assistant","content":"","toolCalls":[{"id":"1","name":"ls","arguments":{}}]}`),
		rec(`{"role":"tool","content":"a b","toolCallId":"1"}`),
		rec(`{"role":"assistant","content":"here you go"}`),
		rec(`{"role":"assistant","content":"and more","continuation":true}`),
		rec(`{"role":"user","content":"   "}`),
		rec(`{"role":"user","content":"thanks"}`))
	c1, c2 := readConv(t, data), readConv(t, data)
	if !c1.Derived {
		t.Fatal("not marked derived")
	}
	if got := strings.Join(ids(c1.Document), ","); got != "message:0,message:3,message:6" {
		t.Fatalf("derived %s", got)
	}
	sameDoc(t, c2.Document, c1.Document)
	if a, ok := c1.Document.At(1).Content.(transcript.Agent); !ok || a.Markdown != "here you go" {
		t.Fatalf("entry 1: %+v", c1.Document.At(1))
	}

	// Saving the derived document unchanged writes nothing; adding to it
	// writes every entry, since the derived ones were never on disk.
	path := logPath(t)
	writeLog(t, path, data)
	l := open(t, path)
	c, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Save(c.Document, c.Messages); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readFile(t, path), data) {
		t.Fatal("unchanged derived save wrote")
	}
	d := appendAll(t, c.Document, user("u", "next"))
	msgs := append(c.Messages, message.Text(message.User, "next"))
	if err := l.Save(d, msgs); err != nil {
		t.Fatal(err)
	}
	got := readConv(t, readFile(t, path))
	if got.Derived {
		t.Fatal("still derived after a UI record was written")
	}
	sameDoc(t, got.Document, d)
}
