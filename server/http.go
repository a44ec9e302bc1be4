package server

import (
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
)

// HTTP limits (see docs/protocol.md).
const (
	maxJSONBody   = 64 << 10
	maxAttachment = history.MaxAttachmentBytes
)

type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func httpError(w http.ResponseWriter, status int, code, msg string) {
	var e apiError
	e.Error.Code, e.Error.Message = code, clientText(msg)
	writeJSON(w, status, e)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":"internal","message":"encode response"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b)
}

// readJSON decodes a bounded body strictly.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxJSONBody+1))
	if err != nil {
		httpError(w, http.StatusBadRequest, "bad-request", "read body: "+err.Error())
		return false
	}
	if len(body) > maxJSONBody {
		httpError(w, http.StatusRequestEntityTooLarge, "too-large", "body is over the 64 KiB limit")
		return false
	}
	if err := json.Unmarshal(body, v, json.RejectUnknownMembers(true)); err != nil {
		httpError(w, http.StatusBadRequest, "bad-request", "body: "+err.Error())
		return false
	}
	return true
}

// pathID returns the {id} path value after validating it.
func pathID(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("id")
	if err := validConversationID(id); err != nil {
		httpError(w, http.StatusBadRequest, "invalid-id", err.Error())
		return "", false
	}
	return id, true
}

// wireMeta describes a conversation without its entries or graph.
type wireMeta struct {
	ID        string         `json:"id"`
	Title     string         `json:"title"`
	StartedAt string         `json:"startedAt,omitzero"`
	UpdatedAt string         `json:"updatedAt,omitzero"`
	Bytes     int64          `json:"bytes"`
	Head      string         `json:"head"`
	Branches  []listedBranch `json:"branches"`
	// Alternatives are the selected head's places with sibling branches,
	// for ‹ 2/3 › navigation; see branchAlternative.
	Alternatives []branchAlternative `json:"alternatives"`
}

// listedBranch is one branch head of a conversation.
type listedBranch struct {
	Head  string `json:"head"`
	Label string `json:"label"`
	// ForkedFrom is the parent head, After the parent's entry the branch
	// forked after ("" before its first entry); both absent for main.
	ForkedFrom string `json:"forkedFrom,omitzero"`
	After      string `json:"after,omitzero"`
	CreatedAt  string `json:"createdAt,omitzero"`
}

// metaCache remembers what it read of each log's header and meta records,
// so listing conversations reads only bytes appended since the last look.
type metaCache struct {
	mu sync.Mutex
	m  map[string]*metaEntry
}

type metaEntry struct {
	fi       os.FileInfo
	branched *branchInfo
	// sum is history's listing summary (title by history.DisplayTitle,
	// updated by the latest record, the header's start, whether it has
	// branches), taken when the log was sumSize bytes long. The writer
	// keeps a summary file beside folio's logs, so this reads a log whole
	// only when another program changed it.
	sum     history.Summary
	sumSize int64
}

func (s *Server) meta(id string) (wireMeta, error) {
	return s.metaAt(id, s.logPath(id))
}

// metaAt is meta for the log of id at p, where history.Locate found it.
func (s *Server) metaAt(id, p string) (wireMeta, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return wireMeta{}, err
	}
	s.metaCache.mu.Lock()
	defer s.metaCache.mu.Unlock()
	if s.metaCache.m == nil {
		s.metaCache.m = map[string]*metaEntry{}
	}
	me := s.metaCache.m[id]
	if me == nil || !os.SameFile(me.fi, fi) || fi.Size() < me.sumSize {
		me = &metaEntry{}
		s.metaCache.m[id] = me
	}
	me.fi = fi
	if me.sumSize != fi.Size() || me.sum.Path == "" {
		me.sum, me.sumSize = history.Summarize(p), fi.Size()
	}
	// Everything comes from the listings' own summary (history.Summarize):
	// an explicit title, else the first user message; the newest meta
	// updatedAt, else the latest record's at. A log with no dated record
	// is dated by its start.
	var started string
	if !me.sum.StartedAt.IsZero() {
		started = string(transcript.AppendInstant(nil, me.sum.StartedAt))
	}
	title, updated := me.sum.Title, started
	if !me.sum.UpdatedAt.IsZero() {
		updated = string(transcript.AppendInstant(nil, me.sum.UpdatedAt))
	}
	m := wireMeta{ID: id, Title: title, StartedAt: started, UpdatedAt: updated, Bytes: fi.Size(),
		Head: defaultHead, Branches: []listedBranch{{Head: defaultHead, Label: defaultHead}}, Alternatives: []branchAlternative{}}
	if me.sum.Branched {
		if bi, err := me.branchMeta(p, fi); err == nil {
			m.Head, m.Branches, m.Alternatives = bi.head, bi.branches, bi.alternatives
		}
	}
	return m, nil
}

func (s *Server) listConversations(w http.ResponseWriter, r *http.Request) {
	// Both layouts, one entry per ID: the log the ID opens (history.Logs
	// follows history.Locate, as logPath does).
	logs, err := s.listing()
	if err != nil {
		if s.storeUnavailable(w) {
			return
		}
		httpError(w, http.StatusInternalServerError, "internal", "cannot list conversations")
		return
	}
	visible, err := s.visibleFilter(r.Context())
	if err != nil {
		s.opts.Logger.Error("cannot read owners", "err", err)
		httpError(w, http.StatusInternalServerError, "internal", "cannot list conversations")
		return
	}
	out := []wireMeta{}
	for _, l := range logs {
		if validConversationID(l.ID) != nil || !visible(l.ID) {
			continue
		}
		if l.Listed != nil {
			out = append(out, *l.Listed)
			continue
		}
		if l.Path == "" {
			l.Path = s.logPath(l.ID)
		}
		if m, err := s.metaAt(l.ID, l.Path); err == nil {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b wireMeta) int { return strings.Compare(b.UpdatedAt, a.UpdatedAt) })
	writeJSON(w, http.StatusOK, map[string]any{"conversations": out})
}

func (s *Server) createConversation(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Title string `json:"title"`
	}
	if r.ContentLength != 0 && !readJSON(w, r, &body) {
		return
	}
	// A new conversation goes in folio's flat layout, under an ID no log in
	// either layout has.
	var id, p string
	for {
		id = randomID("c-", 8)
		p = s.logPath(id)
		if _, err := os.Stat(p); err != nil {
			break // no log has it (O_EXCL below settles any other error)
		}
	}
	line := []byte(`{"type":"conversation","version":3,"conversationId":`)
	line, _ = jsontext.AppendQuote(line, id)
	line = append(line, `,"startedAt":"`...)
	line = transcript.AppendInstant(line, time.Now().UTC())
	line = append(line, '"')
	if body.Title != "" {
		line = append(line, `,"title":`...)
		line, _ = jsontext.AppendQuote(line, body.Title)
	}
	line = append(line, "}\n"...)
	handled, err := s.createLog(id, line)
	var f *os.File
	if !handled {
		f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	}
	if err == nil && !handled {
		_, err = f.Write(line)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		if s.storeUnavailable(w) {
			return
		}
		httpError(w, http.StatusInternalServerError, "internal", "cannot create the conversation log")
		return
	}
	if err := s.claim(r.Context(), id); err != nil {
		s.opts.Logger.Error("cannot record a conversation's owner", "conversation", id, "err", err)
		httpError(w, http.StatusInternalServerError, "internal", "cannot record the new conversation's owner")
		return
	}
	m, err := s.metaAt(id, p)
	if err != nil {
		httpError(w, http.StatusInternalServerError, "internal", "cannot read the new conversation")
		return
	}
	writeJSON(w, http.StatusCreated, m)
}

func (s *Server) getConversation(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	m, err := s.meta(id)
	if err != nil {
		httpError(w, http.StatusNotFound, "not-found", "no conversation "+id)
		return
	}
	writeJSON(w, http.StatusOK, m)
}

// renameConversation records the title through the history log's writer,
// so it takes the log's lock like every other writer: while another process
// (a terminal folio) holds it, the rename is refused with 409 "locked"
// rather than risking interleaved writes.
func (s *Server) renameConversation(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	var body struct {
		Title string `json:"title"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	p := s.logPath(id)
	if _, err := os.Stat(p); err != nil {
		httpError(w, http.StatusNotFound, "not-found", "no conversation "+id)
		return
	}
	// This server's own engine may hold the lock: write through it.
	if s.turns != nil {
		if handled, err := s.setTitle(id, body.Title); handled {
			if err != nil {
				s.opts.Logger.Error("rename failed", "conversation", id, "err", err)
				httpError(w, http.StatusInternalServerError, "internal", "cannot write the conversation log")
				return
			}
			m, _ := s.meta(id)
			writeJSON(w, http.StatusOK, m)
			return
		}
	}
	l, err := s.openLog(id, p)
	if errors.Is(err, history.ErrLocked) {
		httpError(w, http.StatusConflict, "locked", lockedText(err))
		return
	}
	if err == nil {
		err = l.SetTitle(body.Title)
		if cerr := l.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		s.opts.Logger.Error("rename failed", "conversation", id, "err", err)
		httpError(w, http.StatusInternalServerError, "internal", "cannot write the conversation log")
		return
	}
	m, _ := s.meta(id)
	writeJSON(w, http.StatusOK, m)
}

func (s *Server) deleteConversation(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	p := s.logPath(id)
	if _, err := os.Stat(p); err != nil {
		httpError(w, http.StatusNotFound, "not-found", "no conversation "+id)
		return
	}
	// Deleting is writing: it takes the writer lock like every writer, so
	// a conversation another folio is writing is refused rather than
	// pulled from under it (its next turn would go into a deleted file).
	// This server's own engine lets go of it first.
	if s.turns != nil {
		s.forgetEngine(id)
	}
	if s.deleteReplica(w, id) {
		return
	}
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		httpError(w, http.StatusNotFound, "not-found", "no conversation "+id)
		return
	}
	// The data folder's Delete: under the log's lock, the log, its
	// sidecars, its attachments and the artifacts it refers to.
	err := s.localBlobs().Delete(id)
	if errors.Is(err, history.ErrLocked) {
		httpError(w, http.StatusConflict, "locked", lockedText(err))
		return
	}
	if err != nil {
		s.opts.Logger.Error("delete failed", "conversation", id, "err", err)
		httpError(w, http.StatusInternalServerError, "internal", "cannot delete the conversation log")
		return
	}
	if _, ok := s.opts.Replica.(replicaOwners); !ok {
		s.owners().SetOwner(id, "") // the database's go with its row
		s.shares().RevokeShare(id, "")
	}
	s.announceDeleted(id)
	w.WriteHeader(http.StatusNoContent)
}

// announceDeleted tells every tab following id that it is gone, once.
func (s *Server) announceDeleted(id string) {
	c := s.conv(id)
	c.mu.Lock()
	if c.deleted {
		c.mu.Unlock()
		return
	}
	c.deleted = true
	c.seq++
	c.broadcastLocked(eventFrame{Op: "deleted"})
	c.mu.Unlock()
}

// branchGraph is a conversation's full graph: requested only while a graph view
// is visible, never part of metadata.
type branchGraph struct {
	ID          string         `json:"id"`
	Head        string         `json:"head"`
	Branches    []listedBranch `json:"branches"`
	Compactions []graphCover   `json:"compactions"`
	Links       []graphLink    `json:"links"`
}

// graphCover is a compaction and the range it covers.
type graphCover struct {
	EntryID string `json:"entryId"`
	FromID  string `json:"fromId"`
	ToID    string `json:"toId"`
}

// graphLink relates an entry to another conversation.
type graphLink struct {
	From         string `json:"from"`
	Kind         string `json:"kind"`
	Conversation string `json:"conversation"`
}

func (s *Server) getGraph(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	// The graph is requested only while a graph view shows it, so reading
	// the whole log here is the price of that view, not of every open.
	c, err := history.ReadFile(s.logPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		httpError(w, http.StatusNotFound, "not-found", "no conversation "+id)
		return
	}
	if err != nil {
		httpError(w, http.StatusUnprocessableEntity, "bad-request", "the log cannot be read: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, graphOf(id, c))
}

func (s *Server) getReceipt(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	cmd := r.PathValue("cmd")
	if err := validCommandID(cmd); err != nil {
		httpError(w, http.StatusBadRequest, "invalid-id", err.Error())
		return
	}
	// The engine is the only authority: the server keeps no receipts.
	rc := Receipt{CommandID: cmd, State: transcript.CommandUnknown}
	if s.eng != nil {
		rc = s.eng.Receipt(id, cmd)
	}
	rc.CommandID, rc.Conversation = cmd, id
	writeJSON(w, http.StatusOK, rc)
}

// contentSecurityPolicy allows only the app's own scripts, styles (inline
// style attributes are needed by typeset math), images and the WebSocket.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; object-src 'none'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

const placeholderPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>folio</title></head>
<body><h1>folio</h1><p>The web app is not built into this binary. The API is at /api/v2/.</p></body></html>
`

// placeholder serves a page saying the app is not built in, under the same
// strict policy the app gets.
func placeholder() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			httpError(w, http.StatusMethodNotAllowed, "bad-request", "the app is read-only")
			return
		}
		h.Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, placeholderPage)
	})
}
