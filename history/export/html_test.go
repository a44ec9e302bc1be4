package export

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/transcript"
)

// hostile are texts that would end or change a script element if written
// as they are.
var hostile = []string{
	"</script><script>alert(1)</script>",
	"</SCRIPT >",
	"</script\t/>",
	"<!--<script>x</script>-->",
	"<![CDATA[ ]]> & &amp; > <",
	"\u2028\u2029 line separators",
	"\\u003c/script> already escaped",
}

func entry(id string, c transcript.Content) transcript.Entry {
	return transcript.Entry{ID: id, Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Content: c}
}

func writeHTML(t *testing.T, meta HTMLMeta, es []transcript.Entry) string {
	t.Helper()
	var b bytes.Buffer
	h, err := NewHTML(&b, meta)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if err := h.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// scriptRE finds each script element as an HTML parser does: it ends at the
// first "</script" whatever the case.
var scriptRE = regexp.MustCompile(`(?is)<script([^>]*)>(.*?)</script`)

// pagesOf reads back the entries of each page of an exported file.
func pagesOf(t *testing.T, doc string) [][]transcript.Entry {
	t.Helper()
	var pages [][]transcript.Entry
	for _, m := range scriptRE.FindAllStringSubmatch(doc, -1) {
		if !strings.Contains(m[1], `class="folio-page"`) {
			continue
		}
		var es []transcript.Entry
		if err := json.Unmarshal([]byte(m[2]), &es); err != nil {
			t.Fatalf("a page is not JSON of entries: %v\n%.300s", err, m[2])
		}
		pages = append(pages, es)
	}
	return pages
}

// TestHTMLHostileTextStaysInItsScript: entries whose text holds "</script",
// "<!--" and the like are written so that the file has exactly the script
// elements the writer opened, each page reads back as the entries added,
// and no "<" of an entry reaches the file.
func TestHTMLHostileTextStaysInItsScript(t *testing.T) {
	t.Parallel()
	var es []transcript.Entry
	for i, s := range hostile {
		es = append(es,
			entry("u"+string(rune('a'+i)), transcript.User{Text: s}),
			entry("a"+string(rune('a'+i)), transcript.Agent{Markdown: s}),
		)
	}
	doc := writeHTML(t, HTMLMeta{Title: "</title><script>alert(1)</script>", ConversationID: "c</script>"}, es)
	scripts := scriptRE.FindAllStringSubmatch(doc, -1)
	// One page (the entries are small), the meta, the app.
	if len(scripts) != 3 {
		t.Fatalf("%d script elements, want 3", len(scripts))
	}
	if n := strings.Count(strings.ToLower(doc), "</script"); n != 3 {
		t.Errorf("%d \"</script\" in the file, want 3", n)
	}
	if strings.Contains(doc, "<!--") {
		t.Error("the file holds \"<!--\"")
	}
	if !strings.Contains(doc, "<title>&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;</title>") {
		t.Error("the title is not escaped in <title>")
	}
	got := pagesOf(t, doc)
	if len(got) != 1 || len(got[0]) != len(es) {
		t.Fatalf("pages %v, want one of %d entries", len(got), len(es))
	}
	for i, e := range got[0] {
		want, _ := json.Marshal(es[i])
		have, _ := json.Marshal(e)
		if !bytes.Equal(want, have) {
			t.Errorf("entry %d reads back as %s, want %s", i, have, want)
		}
	}
	for _, m := range scripts[:2] {
		if strings.ContainsAny(m[2], "<>&") {
			t.Errorf("a JSON block holds < > or &: %.200s", m[2])
		}
	}
	var meta struct {
		Title          string `json:"title"`
		ConversationID string `json:"conversationId"`
		Entries        int    `json:"entries"`
		Pages          int    `json:"pages"`
	}
	if err := json.Unmarshal([]byte(scripts[1][2]), &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Title != "</title><script>alert(1)</script>" || meta.ConversationID != "c</script>" || meta.Entries != len(es) || meta.Pages != 1 {
		t.Errorf("meta %+v", meta)
	}
}

// TestHTMLPolicyAllowsOnlyItsScript: the file's policy forbids every load
// and allows exactly the script it holds, by its hash.
func TestHTMLPolicyAllowsOnlyItsScript(t *testing.T) {
	t.Parallel()
	doc := writeHTML(t, HTMLMeta{ConversationID: "c"}, []transcript.Entry{entry("u", transcript.User{Text: "hi"})})
	m := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]+)">`).FindStringSubmatch(doc)
	if m == nil {
		t.Fatal("no Content-Security-Policy meta")
	}
	scripts := scriptRE.FindAllStringSubmatch(doc, -1)
	app := scripts[len(scripts)-1][2]
	sum := sha256.Sum256([]byte(app))
	for _, want := range []string{"default-src 'none'", "script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "';", "connect-src 'none'", "font-src data:", "img-src data:", "base-uri 'none'", "form-action 'none'"} {
		if !strings.Contains(m[1], want) {
			t.Errorf("policy lacks %q: %s", want, m[1])
		}
	}
	if i := strings.Index(doc, m[0]); i < 0 || i > strings.Index(doc, "<style>") || i > strings.Index(doc, "<script") {
		t.Error("the policy does not come before the styles and scripts")
	}
	for _, bad := range []string{"http://", "https://", "//fonts.", "@import"} {
		if strings.Contains(doc[:strings.Index(doc, "</style>")], bad) {
			t.Errorf("the stylesheet names %q", bad)
		}
	}
}

// TestHTMLPagesStartAtTurns: a conversation larger than a page is cut into
// pages, each at a turn's first entry (a user entry, or the first entry
// after one), so grouping a page alone groups as the whole.
func TestHTMLPagesStartAtTurns(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("word ", htmlPageBytes/40)
	var es []transcript.Entry
	for i := range 60 {
		id := func(k string) string {
			return k + strings.Repeat("x", i%3) + string(rune('A'+i%26)) + string(rune('a'+i/26))
		}
		es = append(es, entry(id("u"), transcript.User{Text: "question"}))
		for j := range 3 {
			es = append(es, entry(id("a"+string(rune('0'+j))), transcript.Agent{Markdown: big}))
		}
	}
	pages := pagesOf(t, writeHTML(t, HTMLMeta{}, es))
	if len(pages) < 10 {
		t.Fatalf("%d pages, want many", len(pages))
	}
	n := 0
	for i, p := range pages {
		if len(p) == 0 {
			t.Fatalf("page %d is empty", i)
		}
		if i > 0 {
			prev := pages[i-1][len(pages[i-1])-1]
			if p[0].Content.Kind() != transcript.KindUser && prev.Content.Kind() != transcript.KindUser {
				t.Errorf("page %d starts inside a turn, at %s", i, p[0].ID)
			}
		}
		n += len(p)
	}
	if n != len(es) {
		t.Errorf("%d entries in the pages, want %d", n, len(es))
	}
}

// TestHTMLRefusesAnUnsafeBundle: a bundle that could end its own element,
// or a missing one, is refused with ErrBundle, not written.
func TestHTMLRefusesAnUnsafeBundle(t *testing.T) {
	t.Parallel()
	ok := []byte("console.log(1)")
	for name, fsys := range map[string]fstest.MapFS{
		"script end":   {"export/export.js": {Data: []byte("a='</SCRIPT>'")}, "export/export.css": {Data: []byte("")}},
		"comment":      {"export/export.js": {Data: []byte("a='<!--'")}, "export/export.css": {Data: []byte("")}},
		"style end":    {"export/export.js": {Data: ok}, "export/export.css": {Data: []byte("a{}</style>")}},
		"missing js":   {"export/export.css": {Data: []byte("")}},
		"missing css":  {"export/export.js": {Data: ok}},
		"script start": {"export/export.js": {Data: []byte("a='<script>'")}, "export/export.css": {Data: []byte("")}},
	} {
		if _, err := readBundle(fsys); !errors.Is(err, ErrBundle) {
			t.Errorf("%s: %v, want ErrBundle", name, err)
		}
	}
	if _, err := readBundle(fstest.MapFS{"export/export.js": {Data: ok}, "export/export.css": {Data: []byte("a{}")}}); err != nil {
		t.Errorf("a safe bundle: %v", err)
	}
	// The bundle in this binary is the one make web-build wrote.
	if _, err := loadBundle(); err != nil {
		t.Fatal(err)
	}
}

// FuzzScriptJSON: whatever a text holds, its JSON as written into a script
// has no '<', '>' or '&' and reads back as the text.
func FuzzScriptJSON(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data, err := json.Marshal(s)
		if err != nil {
			t.Skip()
		}
		var b bytes.Buffer
		w := bufio.NewWriter(&b)
		writeScriptJSON(w, data)
		w.Flush()
		if bytes.ContainsAny(b.Bytes(), "<>&") {
			t.Fatalf("%q written as %q", s, b.Bytes())
		}
		var back string
		if err := json.Unmarshal(b.Bytes(), &back); err != nil || back != s {
			t.Fatalf("%q reads back as %q (%v)", s, back, err)
		}
	})
}
