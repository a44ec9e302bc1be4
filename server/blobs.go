package server

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/foliodev/folio/history"
)

// Attachments and artifacts (history.Blobs). The data folder holds them
// where folio always has: DataDir/attachments/<conversation>/<id> with its
// description beside it, and DataDir/artifacts/<ref>, which the engine's
// presentation host writes and readArtifact reads. On a replica, the
// database is their record: an upload is stored there before it is
// answered, an artifact a tool keeps is copied there before its entry is
// saved, and a replica that lacks one locally (another received or made
// it) fetches it from there into its data folder when a command or a read
// first needs it. So a command forwarded to the owner with attachments
// runs there, and any replica serves any artifact. A replica keeps
// artifacts by conversation (DataDir/conversation-artifacts/<conversation>/
// <ref>), so it drops them when the conversation is deleted, wherever that
// happened.

// localBlobs is the data folder's blob store.
func (s *Server) localBlobs() history.Files { return history.Files{Dir: s.opts.DataDir} }

// sharedBlobs is the replicas' database, or nil on a single server.
func (s *Server) sharedBlobs() history.Blobs {
	if r := s.rep.store; r != nil {
		return r.Blobs()
	}
	return nil
}

func (s *Server) attachmentDir(id string) string { return history.AttachmentDir(s.opts.DataDir, id) }

// uploadAttachment stores a raw body as an attachment of a conversation.
// The client's file name is metadata only; the stored file is named by a
// random ID, so no client string becomes a path.
func (s *Server) uploadAttachment(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	if _, err := os.Stat(s.logPath(id)); err != nil {
		httpError(w, http.StatusNotFound, "not-found", "no conversation "+id)
		return
	}
	name := r.URL.Query().Get("name")
	if name == "" || len(name) > 255 {
		httpError(w, http.StatusBadRequest, "bad-request", "?name= must be 1-255 bytes")
		return
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" || len(ct) > 255 {
		ct = "application/octet-stream"
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, maxAttachment+1))
	if len(data) > maxAttachment {
		httpError(w, http.StatusRequestEntityTooLarge, "too-large", fmt.Sprintf("an attachment may be at most %d MiB", maxAttachment>>20))
		return
	}
	if err != nil {
		httpError(w, http.StatusBadRequest, "bad-request", "upload failed")
		return
	}
	a := Attachment{ID: randomID("a-", 12), Name: path.Base(name), ContentType: ct, Size: int64(len(data))}
	meta, _ := json.Marshal(a)
	b := history.Blob{Kind: history.BlobAttachment, Name: a.ID, Meta: meta}
	if shared := s.sharedBlobs(); shared != nil {
		if _, err := shared.PutBlob(id, b, data); err != nil {
			s.opts.Logger.Error("cannot store an attachment in the database", "conversation", id, "err", err)
			if down := s.storeReachable(); down != nil {
				httpError(w, http.StatusServiceUnavailable, "store-unavailable", down.Error())
				return
			}
			httpError(w, http.StatusInternalServerError, "internal", "cannot store the attachment")
			return
		}
	}
	if _, err := s.localBlobs().PutBlob(id, b, data); err != nil {
		s.opts.Logger.Error("cannot store an attachment", "conversation", id, "err", err)
		httpError(w, http.StatusInternalServerError, "internal", "cannot store the attachment")
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"attachment": a})
}

// attachment loads an uploaded attachment's description, with Path where
// its bytes are in the data folder. On a replica, one this replica has not
// seen is fetched from the database first. ErrNotFound when there is no
// such attachment; another error when the database could not say.
func (s *Server) attachment(conv, id string) (Attachment, error) {
	if !strings.HasPrefix(id, "a-") || validConversationID(id) != nil || history.CheckBlobName(history.BlobAttachment, id) != nil {
		return Attachment{}, ErrNotFound
	}
	p := filepath.Join(s.attachmentDir(conv), id)
	meta, err := os.ReadFile(p + ".json")
	if errors.Is(err, fs.ErrNotExist) {
		meta, err = s.fetchBlob(conv, history.BlobAttachment, id)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return Attachment{}, ErrNotFound
	}
	if err != nil {
		return Attachment{}, err // the database, unreachable or failing
	}
	var a Attachment
	if err := json.Unmarshal(meta, &a); err != nil {
		return Attachment{}, ErrNotFound
	}
	a.Path = p
	return a, nil
}

// fetchBlob copies a blob from the replicas' database into the data
// folder and returns its description; fs.ErrNotExist without a database or
// when the database has none.
func (s *Server) fetchBlob(conv string, kind history.BlobKind, name string) ([]byte, error) {
	shared := s.sharedBlobs()
	if shared == nil {
		return nil, fs.ErrNotExist
	}
	b, data, err := shared.GetBlob(conv, kind, name)
	if err != nil {
		return nil, err
	}
	if _, err := s.localBlobs().PutBlob(conv, b, data); err != nil && !errors.Is(err, history.ErrBlobConflict) {
		return nil, err
	}
	return b.Meta, nil
}

// replicaArtifactDir is where a replica keeps conv's artifacts: those its
// engine's tools write and those it fetched from the database, one folder
// per conversation, so every replica drops them with the conversation.
func (s *Server) replicaArtifactDir(conv string) string {
	return filepath.Join(s.opts.DataDir, "conversation-artifacts", conv)
}

// engineArtifactDir is the folder conv's engine has its tools write
// artifacts into: the data folder's artifacts/, or on a replica
// replicaArtifactDir.
func (s *Server) engineArtifactDir(conv string) string {
	if s.rep.store != nil {
		return s.replicaArtifactDir(conv)
	}
	return history.ArtifactDir(s.opts.DataDir)
}

// artifactDir is the folder that holds the first committed bytes of
// artifact ref of conv, for the presentation host's ReadArtifact: the data
// folder's artifacts/, or on a replica its folder for conv, where an
// artifact another replica's tool made is fetched from the database the
// first time it is read. When nothing holds them it is a folder whose
// read then fails as not available.
func (s *Server) artifactDir(conv, ref string, committed int64) string {
	own := history.ArtifactDir(s.opts.DataDir)
	shared := s.sharedBlobs()
	if shared == nil {
		return own
	}
	has := func(dir string) bool {
		fi, err := os.Stat(filepath.Join(dir, ref))
		return err == nil && fi.Size() >= committed
	}
	dir := s.replicaArtifactDir(conv)
	if has(dir) {
		return dir
	}
	_, data, err := shared.GetBlob(conv, history.BlobArtifact, ref)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.opts.Logger.Warn("cannot fetch an artifact from the database", "conversation", conv, "err", err)
		}
		return dir
	}
	if err := writeFileAtomic(filepath.Join(dir, ref), data); err != nil {
		s.opts.Logger.Warn("cannot keep a fetched artifact", "conversation", conv, "err", err)
	}
	return dir
}

// writeFileAtomic writes data to a temporary file beside p and renames it
// into place, so a concurrent reader sees all of it or nothing.
func writeFileAtomic(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".fetch-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// keepArtifact is the presentation host's WithArtifactKept for conv's
// engine: on a replica it copies an artifact the conversation keeps into
// the database before the tool's entry is saved, so every replica that
// sees the entry can read it. One over history.MaxArtifactBytes stays on
// this replica only (its reads elsewhere answer not-found), which is
// logged.
func (s *Server) keepArtifact(conv string) func(ref, path string) {
	return func(ref, path string) {
		shared := s.sharedBlobs()
		if shared == nil {
			return
		}
		fi, err := os.Stat(path)
		if err == nil && fi.Size() > history.MaxArtifactBytes {
			err = fmt.Errorf("%w: %d bytes, the limit is %d", history.ErrBlobTooLarge, fi.Size(), history.MaxArtifactBytes)
		}
		var data []byte
		if err == nil {
			data, err = os.ReadFile(path)
		}
		if err == nil {
			_, err = shared.PutBlob(conv, history.Blob{Kind: history.BlobArtifact, Name: ref}, data)
		}
		if err != nil {
			s.opts.Logger.Warn("an artifact stays on this replica only", "conversation", conv, "err", err)
		}
	}
}

// deleteLocalBlobs removes a conversation the database no longer has from
// a replica's data folder: its attachments and its artifacts.
func (s *Server) deleteLocalBlobs(conv string) {
	err := errors.Join(os.RemoveAll(s.attachmentDir(conv)), os.RemoveAll(s.replicaArtifactDir(conv)))
	if err != nil {
		s.opts.Logger.Warn("cannot remove a deleted conversation's files", "conversation", conv, "err", err)
	}
}
