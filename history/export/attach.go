package export

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/history"
)

// Limits on the attachments an exported HTML file embeds. A file over
// HTMLAttachmentMax, or one that would take the export's attachments past
// htmlAttachmentsMax, is listed by name, size and type with a line saying
// it was left out and why, and its bytes are not written.
const (
	HTMLAttachmentMax  = 8 << 20  // one attachment
	htmlAttachmentsMax = 24 << 20 // all of one export's attachments
)

// Why an attachment was left out of the file.
const (
	omittedFile  = "file"  // over HTMLAttachmentMax
	omittedTotal = "total" // the export's attachments would pass htmlAttachmentsMax
)

// HTMLAttachment is a file sent with a message of the conversation.
type HTMLAttachment struct {
	ID          string
	Name        string
	ContentType string
	Size        int64
	// Data is the file's bytes; nil for one over a limit (Size says how
	// large it is).
	Data []byte
}

// embedded is how an attachment is written into the file, as the export
// app reads it (web/src/export/attachments.ts).
type embedded struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Type    string `json:"type"`
	Size    int64  `json:"size"`
	Data    string `json:"data,omitempty"` // base64
	Omitted string `json:"omitted,omitempty"`
	Limit   int64  `json:"limit,omitempty"`
}

// Attach writes one attachment into the file, as its own
// <script type="application/json" class="folio-attachment">: its bytes as
// base64 when they fit the limits, else only its name, size and type with
// the limit it is over. Attachments come after every entry (Add), before
// Close. Nothing of an attachment is markup: its name and type are JSON
// strings escaped as the entries are, and the export app shows an image
// only for a raster image type and offers anything else as a download.
func (h *HTMLWriter) Attach(a HTMLAttachment) error {
	if h.err != nil {
		return h.err
	}
	if h.inPage >= 0 {
		h.w.WriteString("]</script>\n")
		h.inPage = -1
	}
	e := embedded{ID: a.ID, Name: a.Name, Type: a.ContentType, Size: a.Size}
	if e.Size == 0 {
		e.Size = int64(len(a.Data))
	}
	switch {
	case e.Size > HTMLAttachmentMax || a.Data == nil && e.Size > 0:
		e.Omitted, e.Limit = omittedFile, HTMLAttachmentMax
	case h.attached+e.Size > htmlAttachmentsMax:
		e.Omitted, e.Limit = omittedTotal, htmlAttachmentsMax
	default:
		e.Data = base64.StdEncoding.EncodeToString(a.Data)
		h.attached += e.Size
	}
	h.attachments++
	h.buf.Reset()
	if err := json.MarshalWrite(&h.buf, e); err != nil {
		return fmt.Errorf("export html: attachment %s: %w", a.Name, err)
	}
	h.w.WriteString("<script type=\"application/json\" class=\"folio-attachment\">")
	writeScriptJSON(h.w, h.buf.Bytes())
	h.w.WriteString("</script>\n")
	return nil
}

// attachmentMeta is the description the server keeps beside an uploaded
// attachment (server.Attachment's JSON).
type attachmentMeta struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	ContentType string `json:"contentType"`
	Size        int64  `json:"size"`
}

// Attachments reads conv's attachments from blobs, in the store's order,
// each with its bytes unless it is over HTMLAttachmentMax (those are read
// only to learn their size, then let go). A store without the
// conversation's attachments has none.
func Attachments(blobs history.Blobs, conv string) ([]HTMLAttachment, error) {
	names, err := attachmentNames(blobs, conv)
	if err != nil {
		return nil, fmt.Errorf("export html: the attachments of %s: %w", conv, err)
	}
	var out []HTMLAttachment
	for _, name := range names {
		b := history.Blob{Kind: history.BlobAttachment, Name: name}
		got, data, err := blobs.GetBlob(conv, b.Kind, b.Name)
		if err != nil {
			return nil, fmt.Errorf("export html: attachment %s of %s: %w", b.Name, conv, err)
		}
		var m attachmentMeta
		_ = json.Unmarshal(got.Meta, &m) // a damaged description still exports the bytes, by ID
		a := HTMLAttachment{ID: b.Name, Name: strings.TrimSpace(m.Name), ContentType: m.ContentType, Size: int64(len(data)), Data: data}
		if a.Name == "" {
			a.Name = b.Name
		}
		if a.Size > HTMLAttachmentMax {
			a.Data = nil
		}
		out = append(out, a)
	}
	return out, nil
}

// attachmentNames lists conv's attachments. A data folder's are the
// descriptions in its attachment folder, read directly: Files.ListBlobs
// also reads the whole log for the artifacts it refers to, which a
// streamed export of a long conversation must not.
func attachmentNames(blobs history.Blobs, conv string) ([]string, error) {
	if f, ok := blobs.(history.Files); ok {
		des, err := os.ReadDir(history.AttachmentDir(f.Dir, conv))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		var out []string
		for _, de := range des {
			if name, ok := strings.CutSuffix(de.Name(), ".json"); ok && de.Type().IsRegular() && history.CheckBlobName(history.BlobAttachment, name) == nil {
				out = append(out, name)
			}
		}
		return out, nil
	}
	list, err := blobs.ListBlobs(conv)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, b := range list {
		if b.Kind == history.BlobAttachment {
			out = append(out, b.Name)
		}
	}
	return out, nil
}
