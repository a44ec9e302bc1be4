package toolview

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/foliodev/folio/transcript"
)

// ArtifactWriter appends a tool's large or incremental output to an artifact
// file the host keeps in its artifact folder. The item's value then refers to
// the artifact through a bounded checkpoint instead of carrying the bytes.
// An artifact belongs to the item that made it: it is removed with an
// ephemeral item, and an artifact the retained checkpoint does not refer to is
// removed at closure. It does not own the invocation's lifecycle.
type ArtifactWriter struct {
	inv         *Invocation
	it          *item
	ref         string
	contentType string
	path        string

	mu        sync.Mutex
	f         *os.File
	size      int64
	committed int64
	rev       int64
	final     bool
	closed    bool
}

// NewArtifact creates an empty artifact owned by this item.
func (p *Presentation) NewArtifact(contentType string) (*ArtifactWriter, error) {
	if p.err != nil {
		return nil, p.err
	}
	h := p.inv.host
	if h.artifactDir == "" {
		return nil, ErrNoArtifactDir
	}
	if contentType == "" || len(contentType) > maxNameLen {
		return nil, fmt.Errorf("toolview: artifact content type must be 1 to %d bytes", maxNameLen)
	}
	if err := os.MkdirAll(h.artifactDir, 0o700); err != nil {
		return nil, fmt.Errorf("toolview: create artifact folder: %w", err)
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	ref := hex.EncodeToString(b[:])
	path := filepath.Join(h.artifactDir, ref)
	inv := p.inv
	inv.mu.Lock()
	defer inv.mu.Unlock()
	if inv.state != scopeOpen {
		return nil, &RejectError{Reason: ReasonClosed, Item: p.it.key}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("toolview: create artifact: %w", err)
	}
	w := &ArtifactWriter{inv: inv, it: p.it, ref: ref, contentType: contentType, path: path, f: f}
	if p.it.artifacts == nil {
		p.it.artifacts = map[string]*ArtifactWriter{}
	}
	p.it.artifacts[ref] = w
	return w, nil
}

// Ref is the artifact's reference, the only name of it that leaves the host.
func (w *ArtifactWriter) Ref() string { return w.ref }

// Path is where the artifact file lives. Only out-of-process plugin hosting
// uses it, to let a plugin append to the file itself.
func (w *ArtifactWriter) Path() string { return w.path }

// Size is the number of bytes written so far.
func (w *ArtifactWriter) Size() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.size
}

// Write appends to the artifact. It fails after closure, after a final
// checkpoint and beyond the host's artifact size bound.
func (w *ArtifactWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, &RejectError{Reason: ReasonClosed, Item: w.it.key}
	}
	if w.final {
		return 0, fmt.Errorf("toolview: artifact is final")
	}
	if max := w.inv.host.artifactMax; w.size+int64(len(b)) > max {
		return 0, fmt.Errorf("toolview: artifact would exceed the %d-byte bound", max)
	}
	n, err := w.f.Write(b)
	w.size += int64(n)
	return n, err
}

// Checkpoint is a convenience that declares every byte written so far as
// committed, available, with the given payload schema and finality.
func (w *ArtifactWriter) Checkpoint(schema string, version int64, final bool) ArtifactCheckpoint {
	return ArtifactCheckpoint{Schema: schema, Version: version, Ref: w.ref,
		CommittedBytes: w.Size(), Final: final, Available: true}
}

// refresh re-reads the file size, for plugins that append to the file
// directly. Called with w.mu held.
func (w *ArtifactWriter) refresh() {
	if w.closed {
		return
	}
	if fi, err := w.f.Stat(); err == nil && fi.Size() > w.size {
		w.size = fi.Size()
	}
}

// ReplaceArtifact makes a reference to one of the item's artifacts the item's
// current value. The committed bytes must be written already and may not
// shrink, and a final artifact cannot change again.
func (p *Presentation) ReplaceArtifact(cp ArtifactCheckpoint) (Revision, error) {
	if p.err != nil {
		return 0, p.err
	}
	inv := p.inv
	if len(cp.ContentType) > maxNameLen {
		return 0, inv.reject(p.it, &RejectError{Reason: ReasonArtifact, Item: p.it.key, Detail: "content type is too long"})
	}
	v := &Value{Schema: cp.Schema, Version: cp.Version}
	if len(cp.Data) > 0 {
		data, rej := boundedJSON(cp.Data, inv.host.limit)
		if rej != nil {
			rej.Item = p.it.key
			return 0, inv.reject(p.it, rej)
		}
		v.Payload = data
	}
	var w *ArtifactWriter
	check := func() *RejectError {
		bad := func(detail string) *RejectError {
			return &RejectError{Reason: ReasonArtifact, Item: p.it.key, Detail: detail}
		}
		w = p.it.artifacts[cp.Ref]
		if w == nil {
			return bad("the reference does not name an artifact of this item")
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if cp.CommittedBytes > w.size {
			w.refresh()
		}
		switch {
		case w.final:
			return bad("the artifact is already final")
		case cp.CommittedBytes < w.committed:
			return bad("committed bytes may not shrink")
		case cp.CommittedBytes > w.size:
			return bad("committed bytes exceed what was written")
		}
		ct := cp.ContentType
		if ct == "" {
			ct = w.contentType
		}
		if cp.Final {
			if err := w.f.Sync(); err != nil {
				return bad("the artifact could not be synced")
			}
		}
		w.committed = cp.CommittedBytes
		w.final = cp.Final
		w.rev++
		v.Artifact = &transcript.Artifact{Ref: w.ref, ContentType: ct, CommittedBytes: cp.CommittedBytes,
			Revision: w.rev, Final: cp.Final, Available: cp.Available}
		return nil
	}
	return inv.update(p.it, v, cp.Revision, check)
}

// closeArtifacts closes the item's artifact files at closure, keeping (and
// syncing) only keep, the one the retained checkpoint refers to. Called with
// inv.mu held.
func (inv *Invocation) closeArtifacts(it *item, keep string) {
	for ref, w := range it.artifacts {
		w.mu.Lock()
		w.closed = true
		if ref == keep {
			_ = w.f.Sync()
		}
		_ = w.f.Close()
		w.mu.Unlock()
		if ref != keep {
			inv.host.removeFile(w.path)
		} else if inv.host.kept != nil {
			inv.host.kept(ref, w.path)
		}
	}
	it.artifacts = nil
}

// ReadArtifact reads at most n bytes at off from the committed part of the
// artifact a checkpoint refers to. n may not exceed the host's range limit,
// and the range must start inside the committed bytes. It works for open and
// closed invocations alike, and after a restart, since it needs only the
// checkpoint.
func (h *Host) ReadArtifact(a transcript.Artifact, off int64, n int64) ([]byte, error) {
	if h.artifactDir == "" {
		return nil, ErrNoArtifactDir
	}
	if !transcript.ValidArtifactRef(a.Ref) {
		return nil, fmt.Errorf("toolview: artifact reference is malformed")
	}
	if n <= 0 || n > h.rangeLimit || off < 0 || off >= a.CommittedBytes {
		h.m.artifactRangeRejected.Add(1)
		return nil, fmt.Errorf("%w: offset %d length %d, committed %d, range limit %d", ErrRangeLimit, off, n, a.CommittedBytes, h.rangeLimit)
	}
	if rest := a.CommittedBytes - off; n > rest {
		n = rest
	}
	f, err := os.Open(filepath.Join(h.artifactDir, a.Ref))
	if err != nil {
		return nil, fmt.Errorf("toolview: artifact is not available: %w", errNoPath(err))
	}
	defer f.Close()
	buf := make([]byte, n)
	m, err := f.ReadAt(buf, off)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("toolview: read artifact: %w", errNoPath(err))
	}
	h.m.artifactReads.Add(1)
	h.m.artifactReadBytes.Add(int64(m))
	return buf[:m], nil
}

// errNoPath strips the path from an *os.PathError, so artifact errors never
// carry the data folder's location into logs.
func errNoPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
