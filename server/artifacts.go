package server

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"strconv"
	"sync"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/toolview"
	"github.com/foliodev/folio/transcript"
)

// This file serves bounded reads of tool artifacts (large outputs kept
// beside the log): GET /api/v2/conversations/{id}/artifacts/{ref}. A ref is
// served only when one of that conversation's entries refers to it, so a
// client cannot read another conversation's artifact by guessing, and the
// read goes through the presentation host's ReadArtifact, whose range limit
// bounds every response. The ref's form (32 hex digits) is checked before
// it comes near a path.

// defaultArtifactRead is how much a read without ?length= returns.
const defaultArtifactRead = toolview.DefaultRangeLimit

// artifactOf finds the latest checkpoint of ref among the conversation's
// entries: first the open engine's live document (a running tool's output
// may not be saved yet), then the log as package history reads it: the
// follower's reading when it holds every entry, else the head's document
// through the log's page index (artifactInIndex), else the log read whole.
// It reports false when no entry of the conversation refers to ref.
func (s *Server) artifactOf(id, ref string) (best transcript.Artifact, found bool, err error) {
	if s.turns != nil {
		if a, ok := s.liveArtifact(id, ref); ok {
			return a, true, nil
		}
	}
	p := s.logPath(id)
	fi, err := os.Stat(p)
	if err != nil {
		return transcript.Artifact{}, false, err
	}
	key := id + "/" + ref
	if a, ok := s.artifacts.get(key, fi); ok {
		return a, true, nil
	}
	var entries []transcript.Entry
	if c := s.lookupConv(id); c != nil {
		c.mu.Lock()
		// A follower that resumed from the page index holds the entries
		// before that point by ID only: it cannot say what they refer to.
		if c.sc != nil && !c.sc.Resumed() && c.fi != nil && os.SameFile(c.fi, fi) {
			entries = c.sc.Document()
		}
		c.mu.Unlock()
	}
	if entries != nil {
		best, found = artifactIn(len(entries), func(i int) transcript.Entry { return entries[i] }, ref)
	} else if best, found, err = artifactInIndex(p, fi, ref); err != nil {
		conv, err := history.ReadFile(p)
		if err != nil {
			return transcript.Artifact{}, false, err
		}
		best, found = artifactIn(conv.Document.Len(), conv.Document.At, ref)
	}
	if found && best.Final {
		s.artifacts.put(key, fi, best)
	}
	return best, found, nil
}

// artifactIn is the latest checkpoint of ref that an entry's presentation
// (primary or supplemental) holds, looking from the newest entry back.
func artifactIn(n int, at func(int) transcript.Entry, ref string) (best transcript.Artifact, found bool) {
	for i := n - 1; i >= 0; i-- {
		tool, ok := at(i).Content.(transcript.Tool)
		if !ok {
			continue
		}
		check := func(p *transcript.Presentation) {
			if p != nil && p.Artifact != nil && p.Artifact.Ref == ref && (!found || p.Artifact.Revision >= best.Revision) {
				best, found = *p.Artifact, true
			}
		}
		check(tool.Presentation)
		for i := range tool.Supplementals {
			check(&tool.Supplementals[i].Presentation)
		}
		if found {
			return best, true
		}
	}
	return best, false
}

// artifactInIndex is artifactIn over the head's document of the log at p
// (as fi describes it), read through its page index from the newest entry
// back: only tool entries whose stored bytes name ref are decoded, so
// finding a recent artifact costs the entries after it. An error says the
// index cannot answer and the log must be read.
func artifactInIndex(p string, fi os.FileInfo, ref string) (best transcript.Artifact, found bool, err error) {
	f, ix, err := indexAt(p, fi)
	if err != nil {
		return best, false, err
	}
	defer f.Close()
	defer ix.Close()
	doc, err := ix.Document(ix.Head())
	if err != nil {
		return best, false, err
	}
	needle := []byte(ref)
	for hi := doc.Len(); hi > 0; {
		lo := max(0, hi-256)
		refs, err := doc.Refs(lo, hi)
		if err != nil {
			return best, false, err
		}
		for i := len(refs) - 1; i >= 0; i-- {
			r := refs[i]
			if r.Kind != transcript.KindTool && r.Kind != "" {
				continue
			}
			raw := make([]byte, r.Len)
			if _, err := f.ReadAt(raw, r.Start); err != nil {
				return best, false, err
			}
			if !bytes.Contains(raw, needle) {
				continue
			}
			e, err := transcript.DecodeEntry(raw)
			if err != nil {
				return best, false, fmt.Errorf("entry %q: %w", r.ID, err)
			}
			if best, found = artifactIn(1, func(int) transcript.Entry { return e }, ref); found {
				return best, true, nil
			}
		}
		hi = lo
	}
	return best, false, nil
}

// maxCachedArtifacts bounds the artifact cache; past it the cache starts
// over (a reader clicking "load more" needs only the entry it is reading).
const maxCachedArtifacts = 1024

// artifactCache remembers final artifact checkpoints found in a log, so
// reading an artifact range by range reads a long log once, not once per
// range. A final checkpoint never changes; the entry is trusted
// only while the log is the same file and has not shrunk (a replaced or
// rewritten log is scanned again).
type artifactCache struct {
	mu sync.Mutex
	m  map[string]cachedArtifact
}

type cachedArtifact struct {
	fi os.FileInfo
	a  transcript.Artifact
}

func (c *artifactCache) get(key string, fi os.FileInfo) (transcript.Artifact, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok || !os.SameFile(e.fi, fi) || fi.Size() < e.fi.Size() {
		return transcript.Artifact{}, false
	}
	return e.a, true
}

func (c *artifactCache) put(key string, fi os.FileInfo, a transcript.Artifact) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedArtifacts {
		c.m = map[string]cachedArtifact{}
	}
	c.m[key] = cachedArtifact{fi: fi, a: a}
}

// liveArtifact looks for ref in the open engine's current document.
func (s *Server) liveArtifact(conv, ref string) (transcript.Artifact, bool) {
	if !s.enginesOpen() {
		return transcript.Artifact{}, false
	}
	c := s.lookupConv(conv)
	if c == nil {
		return transcript.Artifact{}, false
	}
	eng := c.openEngine()
	if eng == nil {
		return transcript.Artifact{}, false
	}
	doc := eng.Store().Snapshot().Document
	return artifactIn(doc.Len(), doc.At, ref)
}

// readArtifact answers GET /api/v2/conversations/{id}/artifacts/{ref}
// ?offset=N&length=M with the raw bytes of that range (never more than the
// host's range limit). Headers say where the bytes are: Folio-Offset,
// Folio-Total (the committed size), Folio-Final and Folio-Content-Type (the
// artifact's own type; the body is always served as octet-stream, so a
// tool's HTML output can never run as a page of this origin).
func (s *Server) readArtifact(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	ref := r.PathValue("ref")
	if !transcript.ValidArtifactRef(ref) {
		httpError(w, http.StatusBadRequest, "invalid-id", "artifact ref must be 32 lowercase hex digits")
		return
	}
	off, length := int64(0), int64(defaultArtifactRead)
	for _, p := range []struct {
		name string
		dst  *int64
	}{{"offset", &off}, {"length", &length}} {
		if v := r.URL.Query().Get(p.name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				httpError(w, http.StatusBadRequest, "bad-range", fmt.Sprintf("?%s=%q must be a whole number of bytes, 0 or more", p.name, clip(v)))
				return
			}
			*p.dst = n
		}
	}
	if length == 0 || length > toolview.DefaultRangeLimit {
		httpError(w, http.StatusBadRequest, "bad-range",
			fmt.Sprintf("?length=%d: a read is 1 to %d bytes; ask for the rest with a larger ?offset=", length, toolview.DefaultRangeLimit))
		return
	}
	a, found, err := s.artifactOf(id, ref)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		httpError(w, http.StatusNotFound, "not-found", "no conversation "+id)
		return
	case err != nil:
		httpError(w, http.StatusInternalServerError, "internal", "cannot read the conversation log")
		return
	case !found:
		httpError(w, http.StatusNotFound, "not-found", "no entry of conversation "+id+" refers to artifact "+ref)
		return
	case !a.Available:
		httpError(w, http.StatusNotFound, "not-found", "artifact "+ref+" is not available (its output was not kept)")
		return
	}
	if off >= a.CommittedBytes {
		w.Header().Set("Content-Range", "bytes */"+strconv.FormatInt(a.CommittedBytes, 10))
		httpError(w, http.StatusRequestedRangeNotSatisfiable, "bad-range",
			fmt.Sprintf("?offset=%d is past the end: the artifact has %d bytes", off, a.CommittedBytes))
		return
	}
	host := toolview.New(toolview.WithArtifactDir(s.artifactDir(id, ref, a.CommittedBytes)))
	b, err := host.ReadArtifact(a, off, length)
	if errors.Is(err, toolview.ErrRangeLimit) {
		httpError(w, http.StatusRequestedRangeNotSatisfiable, "bad-range", err.Error())
		return
	}
	if err != nil {
		msg := "artifact " + ref + " cannot be read"
		if s.sharedBlobs() != nil {
			msg += " on this replica: the database does not hold it (its tool still runs on another replica, or it is over the size the database keeps)"
		}
		httpError(w, http.StatusNotFound, "not-found", msg)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	h.Set("Folio-Offset", strconv.FormatInt(off, 10))
	h.Set("Folio-Total", strconv.FormatInt(a.CommittedBytes, 10))
	h.Set("Folio-Final", strconv.FormatBool(a.Final))
	h.Set("Folio-Content-Type", headerSafe(a.ContentType))
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

// headerSafe returns a content type that can travel in a header: printable
// ASCII, else the generic type.
func headerSafe(ct string) string {
	if ct == "" || len(ct) > 255 {
		return "application/octet-stream"
	}
	for i := 0; i < len(ct); i++ {
		if ct[i] < 0x20 || ct[i] > 0x7e {
			return "application/octet-stream"
		}
	}
	return ct
}
