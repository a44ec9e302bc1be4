package export

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// scripts splits an exported file into its script elements' opening tags
// and contents, each ending at the first "</script" in any case, as an
// HTML parser ends it (scriptRE's rule, without a regular expression's cost
// over the tens of megabytes this file's test writes).
func scripts(doc string) (tags, bodies []string) {
	low := strings.ToLower(doc)
	for i := 0; ; {
		j := strings.Index(low[i:], "<script")
		if j < 0 {
			return tags, bodies
		}
		j += i
		k := strings.IndexByte(doc[j:], '>') + j
		end := strings.Index(low[k:], "</script") + k
		tags, bodies = append(tags, doc[j:k]), append(bodies, doc[k+1:end])
		i = end + 1
	}
}

// attachmentsOf reads back the attachment blocks of an exported file.
func attachmentsOf(t *testing.T, doc string) []embedded {
	t.Helper()
	var out []embedded
	tags, bodies := scripts(doc)
	for i, tag := range tags {
		if !strings.Contains(tag, `class="folio-attachment"`) {
			continue
		}
		var e embedded
		if err := json.Unmarshal([]byte(bodies[i]), &e); err != nil {
			t.Fatalf("an attachment block is not JSON: %v\n%.300s", err, bodies[i])
		}
		out = append(out, e)
	}
	return out
}

// TestHTMLAttachmentsEmbedWithinTheLimits: attachments are written after
// the entries, each in its own JSON block: within the limits with their
// bytes (base64), over the per-file limit or past the total without them
// and with the limit they are over. A hostile name stays inside its block,
// and the pages still read back as the entries added.
func TestHTMLAttachmentsEmbedWithinTheLimits(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\n fake image bytes")
	big := bytes.Repeat([]byte{'x'}, HTMLAttachmentMax+1)
	chunk := bytes.Repeat([]byte{'y'}, HTMLAttachmentMax)
	atts := []HTMLAttachment{
		{ID: "a-1", Name: "shot.png", ContentType: "image/png", Data: png},
		{ID: "a-2", Name: hostile[0], ContentType: "text/html</script>", Data: []byte("<script>alert(1)</script>")},
		{ID: "a-3", Name: "big.bin", Size: int64(len(big)), Data: big},
		{ID: "a-4", Name: "one.bin", Data: chunk},
		{ID: "a-5", Name: "two.bin", Data: chunk},
		{ID: "a-6", Name: "three.bin", Data: chunk}, // past 24 MiB with the others
		{ID: "a-7", Name: "small.txt", ContentType: "text/plain", Data: []byte("still fits")},
	}
	es := []transcript.Entry{entry("u1", transcript.User{Text: "see the files"}), entry("a1", transcript.Agent{Markdown: "seen"})}
	var b bytes.Buffer
	h, err := NewHTML(&b, HTMLMeta{ConversationID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if err := h.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range atts {
		if err := h.Attach(a); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	doc := b.String()
	tags, bodies := scripts(doc)
	if len(tags) == 0 || !strings.Contains(tags[0], `class="folio-page"`) {
		t.Fatalf("the first script is not the page: %v", tags)
	}
	var page []transcript.Entry
	if err := json.Unmarshal([]byte(bodies[0]), &page); err != nil || len(page) != 2 {
		t.Fatalf("the page holds %d entries: %v", len(page), err)
	}
	got := attachmentsOf(t, doc)
	if len(got) != len(atts) {
		t.Fatalf("%d attachment blocks, want %d", len(got), len(atts))
	}
	want := []struct {
		name, omitted string
		data          []byte
	}{
		{"shot.png", "", png},
		{hostile[0], "", []byte("<script>alert(1)</script>")},
		{"big.bin", omittedFile, nil},
		{"one.bin", "", chunk},
		{"two.bin", "", chunk},
		{"three.bin", omittedTotal, nil},
		{"small.txt", "", []byte("still fits")},
	}
	for i, w := range want {
		g := got[i]
		data, err := base64.StdEncoding.DecodeString(g.Data)
		if g.Name != w.name || g.Omitted != w.omitted || err != nil || !bytes.Equal(data, w.data) && w.data != nil || w.data == nil && g.Data != "" {
			t.Errorf("attachment %d: %q omitted %q, %d bytes (%v); want %q omitted %q, %d bytes", i, g.Name, g.Omitted, len(data), err, w.name, w.omitted, len(w.data))
		}
	}
	if got[2].Size != int64(len(big)) || got[2].Limit != HTMLAttachmentMax || got[5].Limit != htmlAttachmentsMax {
		t.Errorf("sizes and limits: %+v %+v", got[2], got[5])
	}
	// Only the writer's own elements: the pages, the attachments, the meta and the app.
	if n := len(tags); n != 1+len(atts)+2 {
		t.Errorf("%d script elements, want %d", n, 1+len(atts)+2)
	}
	if strings.Contains(doc, "<script>alert") {
		t.Error("an attachment's bytes or name reached the file as markup")
	}
	var meta struct {
		Attachments int `json:"attachments"`
	}
	m := strings.SplitN(strings.SplitN(doc, `id="folio-meta">`, 2)[1], "</script>", 2)[0]
	if err := json.Unmarshal([]byte(m), &meta); err != nil || meta.Attachments != len(atts) {
		t.Errorf("meta %s: %v", m, err)
	}
}

// TestAttachmentsFromADataFolder reads a conversation's attachments where
// the server keeps them (attachments/<conversation>/<id> with its
// description), with their names and types; one over the per-file limit
// comes without its bytes; a conversation with none has none.
func TestAttachmentsFromADataFolder(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	dir := history.AttachmentDir(data, "c1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	put := func(id, name, typ string, body []byte) {
		meta, _ := json.Marshal(attachmentMeta{ID: id, Name: name, ContentType: typ, Size: int64(len(body))})
		os.WriteFile(filepath.Join(dir, id), body, 0o644)
		os.WriteFile(filepath.Join(dir, id+".json"), meta, 0o644)
	}
	put("a-1", "photo.png", "image/png", []byte("png bytes"))
	put("a-2", "huge.bin", "application/octet-stream", bytes.Repeat([]byte{1}, HTMLAttachmentMax+10))
	os.WriteFile(filepath.Join(dir, "a-3"), []byte("no description: never completely stored"), 0o644)
	got, err := Attachments(history.Files{Dir: data}, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "photo.png" || got[0].ContentType != "image/png" || string(got[0].Data) != "png bytes" ||
		got[1].Name != "huge.bin" || got[1].Data != nil || got[1].Size != HTMLAttachmentMax+10 {
		t.Errorf("got %+v", got)
	}
	if none, err := Attachments(history.Files{Dir: data}, "c2"); err != nil || len(none) != 0 {
		t.Errorf("a conversation with no attachments: %v %v", none, err)
	}
}
