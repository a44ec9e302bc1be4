package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/foliodev/folio/tools/toolschema"
	"github.com/foliodev/folio/toolview"
)

// File tool limits.
const (
	maxReadBytes = 256 << 10
	maxListItems = 500
)

// ReadFile returns a file's text, optionally a range of lines.
type ReadFile struct{ Root string }

type readArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset,omitzero"` // first line, from 1
	Limit  int    `json:"limit,omitzero"`  // number of lines
}

// Decl declares read_file.
func (ReadFile) Decl() toolview.ToolDecl {
	return toolview.ToolDecl{
		Name:        "read_file",
		Description: "Read a text file from the workspace. offset (from 1) and limit select lines.",
		InputSchema: schema(`{"type":"object","properties":{"path":{"type":"string","minLength":1},"offset":{"type":"integer","minimum":1},"limit":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}`),
	}
}

// NeedsApproval is false: reading changes nothing.
func (ReadFile) NeedsApproval() bool { return false }

// Run reads the file.
func (t ReadFile) Run(ctx context.Context, inv *toolview.Invocation, raw []byte) (toolview.Result, error) {
	var a readArgs
	if err := decode(raw, &a); err != nil {
		return toolview.Result{}, err
	}
	p, err := resolve(t.Root, a.Path)
	if err != nil {
		return toolview.Result{}, err
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return toolview.Result{}, fmt.Errorf("read %s: %w", a.Path, unwrapPath(err))
	}
	text := string(data)
	if a.Offset > 0 || a.Limit > 0 {
		lines := splitLines(text)
		from := max(a.Offset, 1) - 1
		from = min(from, len(lines))
		to := len(lines)
		if a.Limit > 0 {
			to = min(to, from+a.Limit)
		}
		text = strings.Join(lines[from:to], "")
	}
	// No presentation: the receipt ("read README.md") says it all, and
	// the file's text is the model's, not the transcript's.
	shown, cut := clip(text, maxReadBytes)
	if cut {
		shown += fmt.Sprintf("\n… cut at %d of %d bytes; read on with offset and limit …\n", len(shown), len(text))
	}
	return toolview.Result{Text: shown, Summary: "read " + a.Path}, nil
}

// WriteFile creates or overwrites a file and shows the change as a diff.
type WriteFile struct{ Root string }

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// Decl declares write_file.
func (WriteFile) Decl() toolview.ToolDecl {
	return toolview.ToolDecl{
		Name:        "write_file",
		Description: "Create or overwrite a text file in the workspace with the given content.",
		InputSchema: schema(`{"type":"object","properties":{"path":{"type":"string","minLength":1},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}`),
	}
}

// NeedsApproval is true: it changes files.
func (WriteFile) NeedsApproval() bool { return true }

// Preview is the change the write would make, as the diff the call shows
// once it ran: against the file as it is now, or an empty one.
func (t WriteFile) Preview(raw []byte) (toolview.Payload, bool) {
	var a writeArgs
	if decode(raw, &a) != nil {
		return toolview.Payload{}, false
	}
	p, err := resolve(t.Root, a.Path)
	if err != nil {
		return toolview.Payload{}, false
	}
	old, _ := readBounded(p)
	v, _, _ := diffPayload(a.Path, old, a.Content)
	return v, true
}

// Run writes the file.
func (t WriteFile) Run(ctx context.Context, inv *toolview.Invocation, raw []byte) (toolview.Result, error) {
	var a writeArgs
	if err := decode(raw, &a); err != nil {
		return toolview.Result{}, err
	}
	p, err := resolve(t.Root, a.Path)
	if err != nil {
		return toolview.Result{}, err
	}
	old, err := os.ReadFile(p)
	created := errors.Is(err, fs.ErrNotExist)
	if err != nil && !created {
		return toolview.Result{}, fmt.Errorf("read %s: %w", a.Path, unwrapPath(err))
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return toolview.Result{}, fmt.Errorf("create folder for %s: %w", a.Path, unwrapPath(err))
	}
	if err := writeFileSync(p, []byte(a.Content)); err != nil {
		return toolview.Result{}, fmt.Errorf("write %s: %w", a.Path, unwrapPath(err))
	}
	added, removed := showDiff(inv, a.Path, string(old), a.Content, created)
	verb := "updated"
	if created {
		verb = "created"
	}
	return toolview.Result{Summary: verb + " " + a.Path,
		Text: fmt.Sprintf("%s %s (%d bytes, +%d −%d lines)", verb, a.Path, len(a.Content), added, removed)}, nil
}

// EditFile replaces an exact piece of text in a file.
type EditFile struct{ Root string }

type editArgs struct {
	Path       string `json:"path"`
	Old        string `json:"old"`
	New        string `json:"new"`
	ReplaceAll bool   `json:"replace_all,omitzero"`
}

// Decl declares edit_file.
func (EditFile) Decl() toolview.ToolDecl {
	return toolview.ToolDecl{
		Name:        "edit_file",
		Description: "Replace an exact piece of text in a file. old must occur exactly once unless replace_all is true.",
		InputSchema: schema(`{"type":"object","properties":{"path":{"type":"string","minLength":1},"old":{"type":"string","minLength":1},"new":{"type":"string"},"replace_all":{"type":"boolean"}},"required":["path","old","new"],"additionalProperties":false}`),
	}
}

// NeedsApproval is true: it changes files.
func (EditFile) NeedsApproval() bool { return true }

// Preview is the change the edit would make, as the diff the call shows
// once it ran; the replaced text against its replacement when the file
// cannot show it (missing, too large, or without the text).
func (t EditFile) Preview(raw []byte) (toolview.Payload, bool) {
	var a editArgs
	if decode(raw, &a) != nil {
		return toolview.Payload{}, false
	}
	old, updated := a.Old, a.New
	if p, err := resolve(t.Root, a.Path); err == nil {
		if data, ok := readBounded(p); ok && strings.Contains(data, a.Old) {
			n := 1
			if a.ReplaceAll {
				n = -1
			}
			old, updated = data, strings.Replace(data, a.Old, a.New, n)
		}
	}
	v, _, _ := diffPayload(a.Path, old, updated)
	return v, true
}

// Run edits the file.
func (t EditFile) Run(ctx context.Context, inv *toolview.Invocation, raw []byte) (toolview.Result, error) {
	var a editArgs
	if err := decode(raw, &a); err != nil {
		return toolview.Result{}, err
	}
	p, err := resolve(t.Root, a.Path)
	if err != nil {
		return toolview.Result{}, err
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return toolview.Result{}, fmt.Errorf("read %s: %w", a.Path, unwrapPath(err))
	}
	old := string(data)
	n := strings.Count(old, a.Old)
	switch {
	case n == 0:
		return toolview.Result{}, fmt.Errorf("%s: %w", a.Path, ErrNoMatch)
	case n > 1 && !a.ReplaceAll:
		return toolview.Result{}, fmt.Errorf("%s: %w (%d times); give more context or set replace_all", a.Path, ErrAmbiguous, n)
	}
	updated := strings.Replace(old, a.Old, a.New, -1)
	if err := writeFileSync(p, []byte(updated)); err != nil {
		return toolview.Result{}, fmt.Errorf("write %s: %w", a.Path, unwrapPath(err))
	}
	added, removed := showDiff(inv, a.Path, old, updated, false)
	return toolview.Result{Summary: "edited " + a.Path,
		Text: fmt.Sprintf("edited %s: %d replacement(s), +%d −%d lines", a.Path, n, added, removed)}, nil
}

func showDiff(inv *toolview.Invocation, path, old, new string, created bool) (added, removed int) {
	v, added, removed := diffPayload(path, old, new)
	_, _ = inv.Presentation().Replace(v)
	return added, removed
}

// diffPayload is the folio.diff presentation of a change to path, bounded.
func diffPayload(path, old, new string) (v toolview.Payload, added, removed int) {
	d, added, removed := unifiedDiff(path, old, new)
	shown, cut := clip(d, maxDiffBytes)
	if cut {
		shown += "… diff cut at " + strconv.Itoa(len(shown)) + " bytes\n"
	}
	return payload(toolschema.Diff, toolschema.DiffView{Path: path, Diff: shown}), added, removed
}

// readBounded reads a file for a preview: ok is false when it is missing,
// unreadable or larger than maxPreviewFile (a preview never reads much).
func readBounded(p string) (string, bool) {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxPreviewFile {
		return "", false
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return "", false
	}
	return string(data), true
}

// ListFiles lists a folder.
type ListFiles struct{ Root string }

type listArgs struct {
	Path string `json:"path,omitzero"`
}

// Decl declares list_files.
func (ListFiles) Decl() toolview.ToolDecl {
	return toolview.ToolDecl{
		Name:        "list_files",
		Description: "List the files and folders in a workspace folder (default: the workspace root). Folders end with /.",
		InputSchema: schema(`{"type":"object","properties":{"path":{"type":"string"}},"additionalProperties":false}`),
	}
}

// NeedsApproval is false.
func (ListFiles) NeedsApproval() bool { return false }

// Run lists the folder.
func (t ListFiles) Run(ctx context.Context, inv *toolview.Invocation, raw []byte) (toolview.Result, error) {
	var a listArgs
	if err := decode(raw, &a); err != nil {
		return toolview.Result{}, err
	}
	p, err := resolve(t.Root, a.Path)
	if err != nil {
		return toolview.Result{}, err
	}
	des, err := os.ReadDir(p)
	if err != nil {
		return toolview.Result{}, fmt.Errorf("list %s: %w", orDot(a.Path), unwrapPath(err))
	}
	names := make([]string, 0, len(des))
	for _, de := range des {
		n := de.Name()
		if de.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	sort.Strings(names)
	more := 0
	if len(names) > maxListItems {
		more = len(names) - maxListItems
		names = names[:maxListItems]
	}
	text := strings.Join(names, "\n")
	if more > 0 {
		text += "\n… " + strconv.Itoa(more) + " more"
	}
	if text == "" {
		text = "(empty)"
	}
	return toolview.Result{Text: text, Summary: "list " + orDot(a.Path)}, nil
}

func orDot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// unwrapPath drops the absolute path an *fs.PathError carries, so errors
// name the path as the model gave it.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// writeFileSync writes through a temporary file and renames it into place,
// so a crash leaves the old or the new content, never a torn file.
func writeFileSync(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".folio-write-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
