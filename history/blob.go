package history

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/foliodev/folio/transcript"
)

// Blobs. Besides its log, a conversation has files: attachments a person
// sent with a message, and artifacts its tools produced (large outputs an
// entry refers to by ref). A Store keeps them by conversation, kind and
// name, each with the sha256 digest of its bytes, so a copy can be checked
// and a second put of the same bytes changes nothing. Files keeps them
// where folio always has (attachments/<conversation>/<name> with a
// <name>.json description beside it, artifacts/<ref>); pgstore keeps them
// in the database, so every replica can read what another received or
// produced.

// BlobKind says what a blob is to its conversation.
type BlobKind string

// The blob kinds.
const (
	// BlobAttachment is a file sent with a message; its name is the ID the
	// server gave the upload.
	BlobAttachment BlobKind = "attachment"
	// BlobArtifact is a tool's output an entry refers to; its name is the
	// artifact's ref (32 lowercase hex digits).
	BlobArtifact BlobKind = "artifact"
)

// Size caps, enforced by every Store's PutBlob.
const (
	// MaxAttachmentBytes is the largest attachment (the server refuses a
	// larger upload).
	MaxAttachmentBytes = 32 << 20
	// MaxArtifactBytes is the largest artifact a store keeps. A tool may
	// write a larger one (toolview's bound is 1 GiB); it is then readable
	// only on the machine that produced it.
	MaxArtifactBytes = 64 << 20
	// maxBlobMeta bounds a blob's description.
	maxBlobMeta = 4 << 10
)

// Blob describes one stored file.
type Blob struct {
	Kind BlobKind
	Name string
	// Digest is the sha256 of the bytes, in lowercase hex. PutBlob fills
	// it in; a caller that sets it has the bytes checked against it.
	Digest string
	Size   int64
	// Meta is the owner's description kept beside the bytes: an
	// attachment's JSON (its file name and content type), which every
	// attachment has; nil for an artifact.
	Meta []byte
}

// Blobs is the blob part of a Store. Its methods are safe for concurrent
// use and need no writer lease: a replica that does not run the
// conversation's engine stores the attachments it receives.
type Blobs interface {
	// PutBlob stores data as conv's blob b.Kind/b.Name and returns b with
	// its digest and size. The same bytes again change nothing; other
	// bytes under a name already stored are refused (ErrBlobConflict), as
	// are a bad name (ErrBlobName), data over the kind's cap
	// (ErrBlobTooLarge), an attachment without its description
	// (ErrBlobMeta) and a digest the data does not have (ErrBlobDigest). The conversation must exist (an error wrapping
	// fs.ErrNotExist otherwise).
	PutBlob(conv string, b Blob, data []byte) (Blob, error)
	// GetBlob returns conv's blob kind/name and its bytes; an error
	// wrapping fs.ErrNotExist when there is none.
	GetBlob(conv string, kind BlobKind, name string) (Blob, []byte, error)
	// DeleteBlob removes one blob; a missing one is not an error.
	DeleteBlob(conv string, kind BlobKind, name string) error
	// ListBlobs describes conv's blobs (without their descriptions), by
	// kind then name.
	ListBlobs(conv string) ([]Blob, error)
}

// Digest is the sha256 of data in lowercase hex, as Blob.Digest holds it.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// CheckBlob validates a blob about to be stored with data: its kind, its
// name (which may become a file name, so it can never leave its folder), its
// size against the kind's cap and its digest; it returns b completed. Every
// Store's PutBlob calls it first.
func CheckBlob(b Blob, data []byte) (Blob, error) {
	var max int64
	switch b.Kind {
	case BlobAttachment:
		max = MaxAttachmentBytes
		if !validBlobName(b.Name) {
			return b, fmt.Errorf("%w: attachment %q: a name is 1 to 128 letters, digits, '-' or '_', starting with a letter or digit", ErrBlobName, clipName(b.Name))
		}
		if data != nil && len(b.Meta) == 0 {
			return b, fmt.Errorf("%w: attachment %s has no description", ErrBlobMeta, b.Name)
		}
	case BlobArtifact:
		max = MaxArtifactBytes
		if !transcript.ValidArtifactRef(b.Name) {
			return b, fmt.Errorf("%w: artifact %q: a ref is 32 lowercase hex digits", ErrBlobName, clipName(b.Name))
		}
	default:
		return b, fmt.Errorf("%w: unknown kind %q (want %q or %q)", ErrBlobName, clipName(string(b.Kind)), BlobAttachment, BlobArtifact)
	}
	if int64(len(data)) > max {
		return b, fmt.Errorf("%w: %s %s is %d bytes, the limit is %d", ErrBlobTooLarge, b.Kind, b.Name, len(data), max)
	}
	if len(b.Meta) > maxBlobMeta {
		return b, fmt.Errorf("%w: %s %s: its description is %d bytes, the limit is %d", ErrBlobTooLarge, b.Kind, b.Name, len(b.Meta), maxBlobMeta)
	}
	d := Digest(data)
	if b.Digest != "" && b.Digest != d {
		return b, fmt.Errorf("%w: %s %s: expected sha256 %s, the bytes have %s", ErrBlobDigest, b.Kind, b.Name, clipName(b.Digest), d)
	}
	b.Digest, b.Size = d, int64(len(data))
	return b, nil
}

// CheckBlobName validates kind and name for a read or delete.
func CheckBlobName(kind BlobKind, name string) error {
	_, err := CheckBlob(Blob{Kind: kind, Name: name}, nil)
	return err
}

func validBlobName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !alnum && (i == 0 || c != '-' && c != '_') {
			return false
		}
	}
	return true
}

// clipName keeps a hostile name short in messages.
func clipName(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// ArtifactRefs lists the artifacts the entries of every branch of c refer
// to (a tool's presentation or its supplementals), sorted, each once.
func ArtifactRefs(c *Conversation) []string {
	seen := map[string]bool{}
	add := func(p *transcript.Presentation) {
		if p != nil && p.Artifact != nil && transcript.ValidArtifactRef(p.Artifact.Ref) {
			seen[p.Artifact.Ref] = true
		}
	}
	walk := func(d transcript.Document) {
		for i := range d.Len() {
			t, ok := d.At(i).Content.(transcript.Tool)
			if !ok {
				continue
			}
			add(t.Presentation)
			for j := range t.Supplementals {
				add(&t.Supplementals[j].Presentation)
			}
		}
	}
	walk(c.Document)
	for _, b := range c.Branches {
		if d, _, err := c.Branch(b.ID); err == nil {
			walk(d)
		}
	}
	out := make([]string, 0, len(seen))
	for r := range seen {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// CopyResult says what CopyBlobs did.
type CopyResult struct {
	// Copied blobs were written; Same were there already with the same
	// digest.
	Copied, Same int
	// TooLarge are blobs the destination refused as over its kind's cap
	// (an artifact a tool wrote larger than MaxArtifactBytes); they are
	// left out, and the copy goes on.
	TooLarge []Blob
}

// CopyBlobs copies conv's blobs from one store to another, for imports and
// exports: a blob the destination already holds with the same digest is
// skipped, so running it again copies nothing. It stops at the first error
// other than a blob over its cap.
func CopyBlobs(from, to Blobs, conv string) (CopyResult, error) {
	var res CopyResult
	src, err := from.ListBlobs(conv)
	if err != nil {
		return res, err
	}
	dst, err := to.ListBlobs(conv)
	if err != nil {
		return res, err
	}
	have := map[[2]string]string{}
	for _, b := range dst {
		have[[2]string{string(b.Kind), b.Name}] = b.Digest
	}
	for _, b := range src {
		if d, ok := have[[2]string{string(b.Kind), b.Name}]; ok && d == b.Digest {
			res.Same++
			continue
		}
		got, data, err := from.GetBlob(conv, b.Kind, b.Name)
		if err != nil {
			return res, err
		}
		_, err = to.PutBlob(conv, got, data)
		switch {
		case errors.Is(err, ErrBlobTooLarge):
			res.TooLarge = append(res.TooLarge, b)
		case err != nil:
			return res, err
		default:
			res.Copied++
		}
	}
	return res, nil
}

// --- the data folder --------------------------------------------------------

// AttachmentDir is where a data folder keeps conv's attachments.
func AttachmentDir(data, conv string) string { return filepath.Join(data, "attachments", conv) }

// ArtifactDir is where a data folder keeps artifacts (all conversations'
// in one folder, named by ref, as toolview writes them).
func ArtifactDir(data string) string { return filepath.Join(data, "artifacts") }

// blobPath is where f keeps a blob; conv and name must be checked first.
func (f Files) blobPath(conv string, kind BlobKind, name string) string {
	if kind == BlobArtifact {
		return filepath.Join(ArtifactDir(f.Dir), name)
	}
	return filepath.Join(AttachmentDir(f.Dir, conv), name)
}

// checkConv refuses a conversation ID that cannot name a folder.
func checkConv(conv string) error {
	_, err := Path("", conv)
	return err
}

// PutBlob writes the blob's file (and an attachment's description beside
// it, <name>.json) atomically, each fsynced before it is put in place,
// description last, so an attachment is there once its description is.
func (f Files) PutBlob(conv string, b Blob, data []byte) (Blob, error) {
	if err := checkConv(conv); err != nil {
		return b, err
	}
	b, err := CheckBlob(b, data)
	if err != nil {
		return b, err
	}
	if lp, err := Locate(f.Dir, conv); err != nil {
		return b, err
	} else if _, err := os.Stat(lp); err != nil {
		return b, fmt.Errorf("blob %s %s: no conversation %s: %w", b.Kind, b.Name, conv, fs.ErrNotExist)
	}
	p := f.blobPath(conv, b.Kind, b.Name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return b, err
	}
	// The bytes are written to a file of their own, synced, then linked
	// to the name, which fails when the name exists: of two puts racing
	// for a name, one stores its bytes and the other compares.
	err = withTemp(p, data, func(tmp string) error { return os.Link(tmp, p) })
	switch {
	case errors.Is(err, fs.ErrExist):
		old, rerr := os.ReadFile(p)
		if rerr != nil {
			return b, fmt.Errorf("blob %s %s: %w", b.Kind, b.Name, rerr)
		}
		if !bytes.Equal(old, data) {
			return b, fmt.Errorf("%w: %s %s of %s holds %d other bytes", ErrBlobConflict, b.Kind, b.Name, conv, len(old))
		}
		if _, err := os.Stat(p + ".json"); b.Kind != BlobAttachment || err == nil {
			return b, nil // stored already, description and all
		}
	case err != nil:
		return b, fmt.Errorf("blob %s %s: %w", b.Kind, b.Name, err)
	}
	if b.Kind == BlobAttachment {
		if err := withTemp(p, b.Meta, func(tmp string) error { return os.Rename(tmp, p+".json") }); err != nil {
			return b, fmt.Errorf("blob %s %s: %w", b.Kind, b.Name, err)
		}
	}
	return b, nil
}

// withTemp writes data to a new temporary file beside p, syncs it, and
// calls install with its name; the temporary file is removed afterwards
// unless install renamed it.
func withTemp(p string, data []byte, install func(tmp string) error) error {
	f, err := os.CreateTemp(filepath.Dir(p), ".blob-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return install(tmp)
}

// GetBlob reads the blob's file, and an attachment's description; an
// attachment without its description was never completely stored.
func (f Files) GetBlob(conv string, kind BlobKind, name string) (Blob, []byte, error) {
	b := Blob{Kind: kind, Name: name}
	if err := checkConv(conv); err != nil {
		return b, nil, err
	}
	if err := CheckBlobName(kind, name); err != nil {
		return b, nil, err
	}
	p := f.blobPath(conv, kind, name)
	if kind == BlobAttachment {
		meta, err := os.ReadFile(p + ".json")
		if err != nil {
			return b, nil, fmt.Errorf("no %s %s in conversation %s: %w", kind, name, conv, fs.ErrNotExist)
		}
		b.Meta = meta
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return b, nil, fmt.Errorf("no %s %s in conversation %s: %w", kind, name, conv, fs.ErrNotExist)
	}
	if err != nil {
		return b, nil, fmt.Errorf("blob %s %s: %w", kind, name, err)
	}
	b.Digest, b.Size = Digest(data), int64(len(data))
	return b, data, nil
}

// DeleteBlob removes the blob's file and description.
func (f Files) DeleteBlob(conv string, kind BlobKind, name string) error {
	if err := checkConv(conv); err != nil {
		return err
	}
	if err := CheckBlobName(kind, name); err != nil {
		return err
	}
	p := f.blobPath(conv, kind, name)
	var errs []error
	for _, q := range []string{p + ".json", p} {
		if err := os.Remove(q); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ListBlobs lists conv's attachments (those with a description) and the
// artifacts its log refers to that are in the artifact folder, by kind then
// name.
func (f Files) ListBlobs(conv string) ([]Blob, error) {
	if err := checkConv(conv); err != nil {
		return nil, err
	}
	var out []Blob
	des, err := os.ReadDir(AttachmentDir(f.Dir, conv))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, de := range des {
		name, ok := strings.CutSuffix(de.Name(), ".json")
		if !ok || !validBlobName(name) || !de.Type().IsRegular() {
			continue
		}
		b, _, err := f.GetBlob(conv, BlobAttachment, name)
		if err == nil {
			b.Meta = nil
			out = append(out, b)
		}
	}
	refs, err := f.artifactRefs(conv)
	if err != nil {
		return nil, err
	}
	for _, ref := range refs {
		b, _, err := f.GetBlob(conv, BlobArtifact, ref)
		if err == nil {
			out = append(out, b)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// artifactRefs lists the artifacts conv's log refers to (none without a
// log).
func (f Files) artifactRefs(conv string) ([]string, error) {
	data, name, err := f.ReadLog(conv)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	c, err := parseNamed(name, conv, data)
	if err != nil {
		return nil, err
	}
	return ArtifactRefs(c), nil
}

// deleteBlobs removes conv's attachments and the artifacts its log refers
// to; Delete calls it before the log itself goes.
func (f Files) deleteBlobs(conv string) error {
	if err := checkConv(conv); err != nil {
		return err
	}
	refs, _ := f.artifactRefs(conv) // a log that does not read refers to nothing we can name
	var errs []error
	for _, ref := range refs {
		if err := os.Remove(filepath.Join(ArtifactDir(f.Dir), ref)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(AttachmentDir(f.Dir, conv)); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
