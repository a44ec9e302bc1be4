package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/history/export"
	"github.com/foliodev/folio/transcript"
)

// htmlPart is how many entries the HTML export decodes at a time from a
// log's page index.
const htmlPart = 512

// logExportHTML writes the conversation arg names as one self-contained
// HTML file to out (or standard output): streamed through the log's page
// index when it has one, else from the log read whole.
func logExportHTML(cmd *cobra.Command, arg, store, dataDir, out string, stdio IO) error {
	path := arg
	if storeURL(store) == "" {
		p, err := resolveLogArg(cmd, arg, dataDir)
		if err != nil {
			return err
		}
		path = p
	}
	atts, err := exportAttachments(cmd, path, store)
	if err != nil {
		return failure(cmd, err)
	}
	w, commit, err := exportTarget(out, stdio)
	if err != nil {
		return failure(cmd, err)
	}
	defer commit(false)
	done, problems, err := streamHTML(path, w, atts)
	if err != nil {
		return failure(cmd, err)
	}
	if problems > 0 {
		fmt.Fprint(stdio.Err, problemsLine(path, problems))
	}
	if !done {
		c, _, _, err := readConversation(cmd, path, store, dataDir)
		if err != nil {
			return err
		}
		if err := export.HTML(w, c, atts...); err != nil {
			return failure(cmd, err)
		}
		if n := len(c.Problems); n > 0 {
			fmt.Fprint(stdio.Err, problemsLine(path, n))
		}
	}
	if err := commit(true); err != nil {
		return failure(cmd, err)
	}
	if out != "" {
		fmt.Fprintf(stdio.Err, "folio: wrote %s\n", out)
	}
	for _, a := range atts {
		if a.Data == nil && a.Size > 0 {
			fmt.Fprintf(stdio.Err, "folio: attachment %s (%d bytes) is over the HTML export's %d MiB limit per file; the file lists it without its bytes\n", a.Name, a.Size, export.HTMLAttachmentMax>>20)
		}
	}
	return nil
}

// exportAttachments reads the attachments of the conversation a log
// export names: from the data folder a log of conversations/ is in, or
// from --store's database (arg is then the conversation's ID). A log file
// kept anywhere else has none.
func exportAttachments(cmd *cobra.Command, path, store string) ([]export.HTMLAttachment, error) {
	if url := storeURL(store); url != "" {
		if _, err := os.Stat(path); err != nil {
			s, err := openStore(cmd, url)
			if err != nil {
				return nil, err
			}
			defer s.Close()
			return export.Attachments(s, path)
		}
	}
	dir := filepath.Dir(path)
	if filepath.Base(dir) != "conversations" {
		return nil, nil
	}
	return export.Attachments(history.Files{Dir: filepath.Dir(dir)}, strings.TrimSuffix(filepath.Base(path), ".jsonl"))
}

// exportTarget is where an export goes: standard output, or a temporary
// file beside out that commit(true) renames to out (commit(false) removes
// it), so a failed export never leaves half a file under out's name.
func exportTarget(out string, stdio IO) (io.Writer, func(ok bool) error, error) {
	if out == "" {
		return stdio.Out, func(bool) error { return nil }, nil
	}
	f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*")
	if err != nil {
		return nil, nil, err
	}
	finished := false
	return f, func(ok bool) error {
		if finished {
			return nil
		}
		finished = true
		if !ok {
			f.Close()
			os.Remove(f.Name())
			return nil
		}
		err := errors.Join(f.Chmod(0o644), f.Sync(), f.Close())
		if err == nil {
			err = os.Rename(f.Name(), out)
		}
		if err != nil {
			os.Remove(f.Name())
		}
		return err
	}, nil
}

// streamHTML writes the log at path as HTML through its page index, a part
// of entries at a time, so memory holds a part, never the conversation.
// It reports done false, having written nothing, when the log has no
// usable index (as streamShow does); the caller then reads it whole.
// problems is how many problems the index counts in the log.
func streamHTML(path string, w io.Writer, atts []export.HTMLAttachment) (done bool, problems int, err error) {
	if filepath.Base(filepath.Dir(path)) != "conversations" {
		if _, err := os.Stat(history.IndexPath(path)); err != nil {
			return false, 0, nil
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return false, 0, nil
	}
	defer f.Close()
	ix, err := history.OpenIndex(path, f, 0)
	if err != nil {
		return false, 0, nil
	}
	defer ix.Close()
	d, err := ix.Document(ix.Head())
	if err != nil {
		return false, 0, nil
	}
	cur, err := d.Forward(0)
	if err != nil {
		return false, 0, nil
	}
	// The first part is read before anything is written, so a log whose
	// index cannot be read is still exported whole.
	first, err := cur.Entries(f, htmlPart)
	if err != nil {
		return false, 0, nil
	}
	sum := history.Summarize(path)
	meta := export.HTMLMeta{Title: sum.Title, ConversationID: sum.ID, StartedAt: sum.StartedAt, Problems: ix.Problems()}
	if meta.ConversationID == "" {
		meta.ConversationID = strings.TrimSuffix(filepath.Base(path), ".jsonl")
	}
	h, err := export.NewHTML(w, meta)
	if err != nil {
		return true, 0, err
	}
	for part := first; len(part) > 0; {
		for _, e := range part {
			if err := h.Add(e); err != nil {
				return true, 0, err
			}
		}
		if cur.Pos() >= d.Len() {
			break
		}
		if part, err = cur.Entries(f, htmlPart); err != nil {
			return true, 0, err
		}
	}
	for _, a := range atts {
		if err := h.Attach(a); err != nil {
			return true, 0, err
		}
	}
	return true, meta.Problems, h.Close()
}

// exportHTML is the chat's /export html: folio-<id>.html in the tools'
// folder, from the saved log when there is one (streamed through its page
// index, else read whole), else from doc, the conversation not saved yet.
func (s *chatSession) exportHTML(id string, doc transcript.Document) (string, error) {
	path := filepath.Join(s.work, "folio-"+id+".html")
	w, commit, err := exportTarget(path, IO{})
	if err != nil {
		return "", err
	}
	defer commit(false)
	done := false
	atts, err := export.Attachments(history.Files{Dir: s.dataDir}, id)
	if err != nil {
		return "", err
	}
	if _, saved := s.saved(); saved {
		logPath, err := history.Locate(s.dataDir, id)
		if err != nil {
			return "", err
		}
		if done, _, err = streamHTML(logPath, w, atts); err != nil {
			return "", err
		}
		if !done {
			c, err := history.ReadFile(logPath)
			if err != nil {
				return "", err
			}
			if err := export.HTML(w, c, atts...); err != nil {
				return "", err
			}
			done = true
		}
	}
	if !done {
		h, err := export.NewHTML(w, export.HTMLMeta{ConversationID: id})
		if err != nil {
			return "", err
		}
		for _, e := range doc.All() {
			if err := h.Add(e); err != nil {
				return "", err
			}
		}
		for _, a := range atts {
			if err := h.Attach(a); err != nil {
				return "", err
			}
		}
		if err := h.Close(); err != nil {
			return "", err
		}
	}
	return path, commit(true)
}
