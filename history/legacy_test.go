package history

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/foliodev/folio/transcript"
)

// legacyLog is a version 2 log as Jazz wrote it: rendered UI text, model
// messages, a meta record, and lines folio cannot read.
func legacyLog() []byte {
	return []byte(strings.Join([]string{
		`{"type":"conversation","version":2,"conversationId":"c1","startedAt":"2026-01-01","cwd":"/home/x"}`,
		`{"type":"message","at":"2026-01-01T00:00:01Z","message":{"role":"user","content":"hi"}}`,
		`{"type":"ui-append","at":"2026-01-01","entries":[{"type":"user","message":"hi"},{"type":"streamContent","message":"\u001b[1mhello\u001b[0m there"}]}`,
		`{"type":"message","at":"2026-01-01T00:00:02Z","message":{"role":"assistant","content":"hello there"}}`,
		`{"type":"ui-append","at":"2026-01-01T01:00:00+01:00","entries":[{"type":"warn","message":"\u001b]8;;http://x\u0007link\u001b]8;;\u0007 careful"},{"type":"success","message":"\u001b[32m✓\u001b[39m ls"}]}`,
		`not json at all`,
		`{"type":"ui-append","at":"whenever","entries":[{"type":"info","message":"late"}]}`,
		`{"type":"ui-append","at":"2026-01-02T00:00:00Z","entries":[{"type":"info","message":42}]}`,
		`{"type":"meta","at":"2026-01-02T00:00:00Z","endedAt":"2026-01-02T00:00:00Z"}`,
		`{"type":"checkpoint","at":"2026-01-02T00:00:00Z","data":[1,2,3]}`,
	}, "\n") + "\n")
}

func TestLegacyDecoding(t *testing.T) {
	t.Parallel()
	c := readConv(t, legacyLog())
	if !c.Legacy {
		t.Fatal("not marked legacy")
	}
	type want struct {
		id, kind, text string
		tone           transcript.Tone
		ts             string
	}
	wants := []want{
		{"legacy:2:0", "user", "hi", "", "2026-01-01T00:00:00.000Z"},
		{"legacy:2:1", "notice", "hello there", transcript.ToneLog, "2026-01-01T00:00:00.000Z"},
		{"legacy:4:0", "notice", "link careful", transcript.ToneWarn, "2026-01-01T00:00:00.000Z"},
		{"legacy:4:1", "notice", "✓ ls", transcript.ToneSuccess, "2026-01-01T00:00:00.000Z"},
		{"legacy:6:0", "notice", "late", transcript.ToneInfo, "1970-01-01T00:00:00.000Z"},
	}
	if c.Document.Len() != len(wants) {
		t.Fatalf("entries %v", ids(c.Document))
	}
	for i, w := range wants {
		e := c.Document.At(i)
		var text string
		var tone transcript.Tone
		switch v := e.Content.(type) {
		case transcript.User:
			text = v.Text
		case transcript.Notice:
			text, tone = v.Text, v.Tone
		}
		ts := string(transcript.AppendInstant(nil, e.Timestamp))
		if e.ID != w.id || string(e.Content.Kind()) != w.kind || text != w.text || tone != w.tone || ts != w.ts {
			t.Errorf("entry %d: %s %s %q %s %s, want %+v", i, e.ID, e.Content.Kind(), text, tone, ts, w)
		}
	}
	if len(c.Messages) != 2 {
		t.Errorf("messages %d", len(c.Messages))
	}
	rej := problemsOf(c, ProblemRejected)
	if len(rej) != 1 || rej[0].Line != 8 || rej[0].Pointer != "/entries/0/message" {
		t.Errorf("rejections %v", rej)
	}
	if len(c.Unknown) != 2 || c.UpdatedAt.Format(time.DateOnly) != "2026-01-02" {
		t.Errorf("unknown %d updated %v", len(c.Unknown), c.UpdatedAt)
	}
}

func TestLegacyOnlyUnderAVersion2Header(t *testing.T) {
	t.Parallel()
	legacyRec := `{"type":"ui-append","at":"2026-01-01T00:00:00Z","entries":[{"type":"info","message":"hello"}]}`
	// Under a version 3 header a legacy-shaped entry is an invalid entry,
	// never rendered text.
	c := readConv(t, logOf(v3Header, legacyRec))
	if c.Document.Len() != 0 || len(problemsOf(c, ProblemRejected)) != 1 {
		t.Fatalf("v3 header: entries %v problems %v", ids(c.Document), c.Problems)
	}
	if p := problemsOf(c, ProblemRejected)[0]; !strings.HasPrefix(p.Pointer, "/entries/0/") {
		t.Fatalf("pointer %q", p.Pointer)
	}
	// A standalone line is strict version 3.
	if _, err := transcript.DecodeEntry([]byte(`{"type":"info","message":"hello"}`)); err == nil {
		t.Fatal("DecodeEntry accepted a legacy entry")
	}
	// A malformed version 3 entry under a version 3 header is rejected, not
	// reinterpreted, even when it also carries legacy members.
	mixed := uiRec(TypeUIAppend, `{"id":"x","content":{"kind":"notice","text":"t","tone":"loud"},"timestamp":"2026-01-01T00:00:00Z","type":"info","message":"t"}`)
	if c := readConv(t, logOf(v3Header, mixed)); c.Document.Len() != 0 {
		t.Fatal("mixed entry applied")
	}
	// Under a version 2 header, a valid version 3 entry is taken as it is
	// (Jazz reads it so), beside legacy text.
	v2 := `{"type":"conversation","version":2}`
	c = readConv(t, logOf(v2, uiRec(TypeUIAppend, entryJSON(t, user("u", "x"))), legacyRec))
	if got := strings.Join(ids(c.Document), ","); got != "u,legacy:2:0" || len(c.Problems) != 0 {
		t.Fatalf("v2 header: %s %v", got, c.Problems)
	}
}

func TestLegacyTimestamps(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"2026-01-01":                    "2026-01-01T00:00:00.000Z",
		"2026-01-01T01:00:00+01:00":     "2026-01-01T00:00:00.000Z",
		"2026-01-01T00:00:00.250Z":      "2026-01-01T00:00:00.250Z",
		"2026-01-01 12:30:00":           "2026-01-01T12:30:00.000Z",
		"1767225600000":                 "1970-01-01T00:00:00.000Z",
		"Thu, 01 Jan 2026 00:00:00 GMT": "2026-01-01T00:00:00.000Z",
		"last tuesday":                  "1970-01-01T00:00:00.000Z",
		"":                              "1970-01-01T00:00:00.000Z",
	}
	for in, want := range cases {
		if got := string(transcript.AppendInstant(nil, looseInstant(in))); got != want {
			t.Errorf("%q → %s, want %s", in, got, want)
		}
	}
}

func TestStripANSI(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"plain":                           "plain",
		"\x1b[1;31mred\x1b[0m":            "red",
		"a\x1b]0;title\x07b":              "ab",
		"a\x1b]8;;http://x\x1b\\link":     "alink",
		"\x1b(Bascii":                     "ascii",
		"tab\tand\nnewline":               "tab\tand\nnewline",
		"\u009b32mgreen\u009b0m":          "green",
		"a\u009d0;title\u0007b":           "ab",
		"a\u009d8;;http://x\u009clink":    "alink",
		"\u0090dcs\u009cafter":            "after",
		"cut\x1b[":                        "cut",
		"trailing\x1b":                    "trailing",
		"\x1bPdcs payload\x1b\\after":     "after",
		"\x1b[38;5;208morange\x1b[39m ok": "orange ok",
	}
	for in, want := range cases {
		if got := stripANSI(in); got != want {
			t.Errorf("stripANSI(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUpgrade(t *testing.T) {
	t.Parallel()
	path := logPath(t)
	v2 := legacyLog()
	writeLog(t, path, v2)
	before := readConv(t, v2)
	l := open(t, path)
	res, err := l.Upgrade()
	if err != nil {
		t.Fatal(err)
	}
	if !res.Upgraded || res.From != 2 || res.Records != 3 {
		t.Fatalf("result %+v", res)
	}
	up := readFile(t, path)
	after := readConv(t, up)
	if after.Legacy || after.Header.Version != 3 || after.Header.ConversationID != "c1" {
		t.Fatalf("header %+v", after.Header)
	}
	if len(after.Header.Extra) != 1 || after.Header.Extra[0].Name != "cwd" {
		t.Fatalf("header extras lost: %+v", after.Header.Extra)
	}
	sameConv(t, after, before, "after upgrade")
	// Model-facing and unreadable lines are byte for byte the same, at the
	// same line numbers.
	ol, nl := lines(v2), lines(up)
	if len(ol) != len(nl) {
		t.Fatalf("line count %d → %d", len(ol), len(nl))
	}
	for _, i := range []int{1, 3, 5, 7, 8, 9} {
		if ol[i] != nl[i] {
			t.Errorf("line %d changed:\n%s\n%s", i, ol[i], nl[i])
		}
	}
	// Upgrading again is a no-op.
	res, err = l.Upgrade()
	if err != nil || res.Upgraded {
		t.Fatalf("second upgrade: %+v %v", res, err)
	}
	if !bytes.Equal(readFile(t, path), up) {
		t.Fatal("second upgrade changed the file")
	}
	// Migration IDs survive compaction of superseded snapshots.
	c, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Document.Replace(transcript.Entry{ID: "legacy:2:0", Content: transcript.User{Text: "hi (edited)"}, Timestamp: c.Document.At(0).Timestamp})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Save(d, c.Messages); err != nil {
		t.Fatal(err)
	}
	cres, err := l.Compact()
	if err != nil || cres.Dropped != 3 {
		t.Fatalf("compact: %+v %v", cres, err)
	}
	final := readConv(t, readFile(t, path))
	sameDoc(t, final.Document, d)
	if got := strings.Join(ids(final.Document), ","); !strings.HasPrefix(got, "legacy:2:0,legacy:2:1,legacy:4:0") {
		t.Fatalf("ids after compaction %s", got)
	}
}

func TestSaveUpgradesAVersion2LogFirst(t *testing.T) {
	t.Parallel()
	path := logPath(t)
	writeLog(t, path, legacyLog())
	l := open(t, path)
	c, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	d := appendAll(t, c.Document, user("new", "after upgrade"))
	if err := l.Save(d, c.Messages); err != nil {
		t.Fatal(err)
	}
	data := readFile(t, path)
	got := readConv(t, data)
	if got.Header.Version != 3 {
		t.Fatalf("version %d", got.Header.Version)
	}
	sameDoc(t, got.Document, d)
	if types := recordTypes(data); types[len(types)-1] != TypeUIAppend {
		t.Fatalf("records %v: the new entry should be appended after the upgrade", types)
	}
}

func TestCompact(t *testing.T) {
	t.Parallel()
	path := logPath(t)
	l := open(t, path)
	d := doc(t, entries(3, "a")...)
	if err := l.Save(d, msgs("1", "2")); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		var err error
		d, err = d.Replace(agent("a0", "rev "+itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		d = appendAll(t, d, user("u"+itoa(i), "more"))
		if err := l.Save(d, msgs("1", "2", "3")[:2]); err != nil {
			t.Fatal(err)
		}
	}
	// Unknown and unreadable lines ride along.
	f, err := openAppend(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"child","at":"2026-03-04T05:06:08.000Z","conversationId":"c2"}` + "\nnot json\n")
	f.Close()
	l.Close()
	l = open(t, path)
	c0, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	d = appendAll(t, c0.Document, user("tail", "after snapshot"))
	if err := l.Save(d, c0.Messages); err != nil {
		t.Fatal(err)
	}
	before := readConv(t, readFile(t, path))
	res, err := l.Compact()
	if err != nil {
		t.Fatal(err)
	}
	if res.Dropped != 3 || res.After >= res.Before {
		t.Fatalf("result %+v", res)
	}
	data := readFile(t, path)
	after := readConv(t, data)
	sameConv(t, after, before, "after compaction")
	if got := strings.Join(recordTypes(data), ","); got != "message,message,ui-transcript,child,?,ui-append" {
		t.Fatalf("records after compaction: %s", got)
	}
	if fi, _ := statMode(path); fi != 0o600 {
		t.Fatalf("mode %v", fi)
	}
	res, err = l.Compact()
	if err != nil || res.Dropped != 0 || !bytes.Equal(readFile(t, path), data) {
		t.Fatalf("second compaction: %+v %v", res, err)
	}
	// The writer continues appending after a compaction.
	d = appendAll(t, d, user("post", "x"))
	if err := l.Save(d, c0.Messages); err != nil {
		t.Fatal(err)
	}
	sameDoc(t, readConv(t, readFile(t, path)).Document, d)
}

func TestCompactDropsSupersededOpenTails(t *testing.T) {
	t.Parallel()
	path := logPath(t)
	writeLog(t, path, logOf(v3Header,
		uiRec(TypeUIAppend, entryJSON(t, user("a", "1"))),
		uiRec(TypeUIOpen, entryJSON(t, agent("s", "p"))),
		uiRec(TypeUIOpen, entryJSON(t, agent("s", "pa"))),
		uiRec(TypeUIAppend, entryJSON(t, agent("s", "pa"))),
		uiRec(TypeUIOpen, entryJSON(t, agent("t", "x")))))
	before := readConv(t, readFile(t, path))
	l := open(t, path)
	res, err := l.Compact()
	if err != nil || res.Dropped != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	data := readFile(t, path)
	if got := strings.Join(recordTypes(data), ","); got != "ui-append,ui-append,ui-open" {
		t.Fatalf("records %s", got)
	}
	sameConv(t, readConv(t, data), before, "compacted")
}
