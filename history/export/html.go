package export

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
	"github.com/foliodev/folio/web"
)

// htmlPageBytes is how many bytes of entries' JSON an exported file's page
// holds before the next turn starts a new one: the web app's page budget.
// The file shows a window of a few pages, so this bounds what the browser
// parses and lays out at once.
const htmlPageBytes = 64 << 10

// HTMLMeta is what an exported file says of the conversation beside its
// entries.
type HTMLMeta struct {
	Title          string
	ConversationID string
	StartedAt      time.Time
	// Problems is how many lines of the log were not readable.
	Problems int
}

// HTMLWriter writes one conversation as a self-contained HTML file: the web
// app's rows (its own bundle, web/src/export, inlined with KaTeX's fonts),
// the entries as JSON in pages of <script type="application/json">, and a
// Content-Security-Policy that allows only the file's own script and no
// load from anywhere. Entries are added in order and written as they come,
// so a caller reading a log forwards holds one entry at a time.
//
// An HTMLWriter is not safe for concurrent use.
type HTMLWriter struct {
	w       *bufio.Writer
	meta    HTMLMeta
	entries int
	pages   int
	inPage  int // bytes of the open page; -1 none open
	prevUsr bool
	// attached is the bytes of attachments embedded so far, attachments
	// how many were written (embedded or not).
	attached    int64
	attachments int
	buf         bytes.Buffer
	err         error
}

// NewHTML starts an exported file on w: its head, styles and the opening of
// the body. The entries follow with Add, and Close finishes the file.
func NewHTML(w io.Writer, meta HTMLMeta) (*HTMLWriter, error) {
	b, err := loadBundle()
	if err != nil {
		return nil, err
	}
	h := &HTMLWriter{w: bufio.NewWriterSize(w, 64<<10), meta: meta, inPage: -1, prevUsr: true}
	title := meta.Title
	if title == "" {
		title = "Conversation " + meta.ConversationID
	}
	fmt.Fprintf(h.w, "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"+
		"<meta http-equiv=\"Content-Security-Policy\" content=\"%s\">\n"+
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"+
		"<meta name=\"color-scheme\" content=\"dark light\">\n"+
		"<meta name=\"generator\" content=\"folio log export\">\n"+
		"<title>%s</title>\n<style>", b.csp, htmlText(oneLine(title)))
	h.w.Write(b.css)
	h.w.WriteString("</style>\n</head>\n<body>\n<div id=\"root\"></div>\n")
	return h, nil
}

// Add writes e into the file: into the current page, or into a new one
// when e starts a turn (a user entry, or the reply after one) and the page
// is past htmlPageBytes, so a page never splits a turn.
func (h *HTMLWriter) Add(e transcript.Entry) error {
	if h.err != nil {
		return h.err
	}
	// The entry's canonical JSON, as the log and the server's pages hold it.
	data, err := transcript.EncodeEntry(e)
	if err != nil {
		return fmt.Errorf("export html: entry %s: %w", e.ID, err)
	}
	user := e.Content.Kind() == transcript.KindUser
	starts := user || h.prevUsr
	h.prevUsr = user
	switch {
	case h.inPage < 0:
		h.openPage()
	case starts && h.inPage >= htmlPageBytes:
		h.w.WriteString("]</script>\n")
		h.openPage()
	default:
		h.w.WriteByte(',')
	}
	h.inPage += len(data)
	h.entries++
	writeScriptJSON(h.w, data)
	return nil
}

func (h *HTMLWriter) openPage() {
	h.w.WriteString("<script type=\"application/json\" class=\"folio-page\">[")
	h.pages++
	h.inPage = 0
}

// Close writes the meta block and the app's script and flushes. It does
// not close the underlying writer.
func (h *HTMLWriter) Close() error {
	if h.err != nil {
		return h.err
	}
	b, err := loadBundle()
	if err != nil {
		return err
	}
	if h.inPage >= 0 {
		h.w.WriteString("]</script>\n")
	}
	meta := struct {
		Title          string `json:"title"`
		ConversationID string `json:"conversationId"`
		StartedAt      string `json:"startedAt,omitempty"`
		Entries        int    `json:"entries"`
		Pages          int    `json:"pages"`
		Problems       int    `json:"problems"`
		Attachments    int    `json:"attachments"`
	}{Title: h.meta.Title, ConversationID: h.meta.ConversationID, Entries: h.entries, Pages: h.pages, Problems: h.meta.Problems, Attachments: h.attachments}
	if !h.meta.StartedAt.IsZero() {
		meta.StartedAt = h.meta.StartedAt.UTC().Format(time.RFC3339Nano)
	}
	h.buf.Reset()
	if err := json.MarshalWrite(&h.buf, meta); err != nil {
		return err
	}
	h.w.WriteString("<script type=\"application/json\" id=\"folio-meta\">")
	writeScriptJSON(h.w, h.buf.Bytes())
	h.w.WriteString("</script>\n<script>")
	h.w.Write(b.js)
	h.w.WriteString("</script>\n</body>\n</html>\n")
	if err := h.w.Flush(); err != nil {
		h.err = err
	}
	return h.err
}

// HTML writes c as a self-contained HTML file (NewHTML) from its document
// in memory, with atts embedded (Attach). A log with a page index is
// better streamed (folio log export does), which holds one entry at a time.
func HTML(w io.Writer, c *history.Conversation, atts ...HTMLAttachment) error {
	h, err := NewHTML(w, htmlMetaOf(c))
	if err != nil {
		return err
	}
	for _, e := range c.Document.All() {
		if err := h.Add(e); err != nil {
			return err
		}
	}
	for _, a := range atts {
		if err := h.Attach(a); err != nil {
			return err
		}
	}
	return h.Close()
}

// htmlMetaOf is the meta of a conversation read whole.
func htmlMetaOf(c *history.Conversation) HTMLMeta {
	return HTMLMeta{
		Title:          history.DisplayTitle(c.Title, c.Messages),
		ConversationID: c.Header.ConversationID,
		StartedAt:      c.Header.StartedAt,
		Problems:       len(c.Problems),
	}
}

// writeScriptJSON writes valid JSON so that no text of it can end or
// change the script element it is in: every '<', '>' and '&' becomes a
// \u escape. In valid JSON those bytes occur only inside strings, where
// the escape means the same character, so JSON.parse reads the same value.
func writeScriptJSON(w *bufio.Writer, data []byte) {
	for len(data) > 0 {
		i := bytes.IndexAny(data, "<>&")
		if i < 0 {
			w.Write(data)
			return
		}
		w.Write(data[:i])
		fmt.Fprintf(w, `\u%04x`, data[i])
		data = data[i+1:]
	}
}

// htmlText escapes s for an element's text or an attribute's value.
func htmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

// bundle is the export app, as web/dist/export holds it, checked to be
// safe between <script> and </script> (<style> and </style>), with the
// policy that allows exactly that script.
type bundle struct {
	js, css []byte
	csp     string
}

var loadBundle = sync.OnceValues(func() (bundle, error) { return readBundle(web.Dist()) })

// readBundle reads the export app from a built web/dist.
func readBundle(dist fs.FS) (bundle, error) {
	js, err := fs.ReadFile(dist, "export/export.js")
	if err != nil {
		return bundle{}, fmt.Errorf("%w: the HTML export's script is missing from web/dist (make web-build): %v", ErrBundle, err)
	}
	css, err := fs.ReadFile(dist, "export/export.css")
	if err != nil {
		return bundle{}, fmt.Errorf("%w: the HTML export's stylesheet is missing from web/dist (make web-build): %v", ErrBundle, err)
	}
	if err := inlineSafe(js, "<script", "</script", "<!--"); err != nil {
		return bundle{}, fmt.Errorf("%w: export/export.js %v", ErrBundle, err)
	}
	if err := inlineSafe(css, "</style", "<!--"); err != nil {
		return bundle{}, fmt.Errorf("%w: export/export.css %v", ErrBundle, err)
	}
	sum := sha256.Sum256(js)
	csp := "default-src 'none'; script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; " +
		"style-src 'unsafe-inline'; font-src data:; img-src data:; " +
		"connect-src 'none'; media-src 'none'; object-src 'none'; frame-src 'none'; worker-src 'none'; " +
		"manifest-src 'none'; base-uri 'none'; form-action 'none'"
	return bundle{js: js, css: css, csp: csp}, nil
}

// inlineSafe reports the first of bad (matched without regard to case)
// that data holds.
func inlineSafe(data []byte, bad ...string) error {
	low := bytes.ToLower(data)
	for _, b := range bad {
		if i := bytes.Index(low, []byte(b)); i >= 0 {
			return fmt.Errorf("holds %q at byte %d, which would end or change its element", b, i)
		}
	}
	return nil
}
