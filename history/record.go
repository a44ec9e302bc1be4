package history

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Version is the log version this folio reads and writes.
const Version = 3

// Record types. A log's first line is the header; every other line is one
// record whose "type" is one of these, or a type this folio does not know,
// which is kept verbatim.
const (
	TypeConversation = "conversation"
	TypeMessage      = "message"
	TypeMeta         = "meta"
	TypeRewrite      = "rewrite"
	TypeUITranscript = "ui-transcript"
	TypeUIAppend     = "ui-append"
	// TypeUIOpen holds the entries after the first open one (a streaming
	// answer, a running tool), provisionally: the newest ui-open is the
	// document's tail until any later UI record supersedes it.
	TypeUIOpen = "ui-open"
	// TypeBranch forks a branch from its parent; TypeOnBranch wraps a
	// record of a branch other than main; TypeHead names the current
	// branch. See docs/log-format.md.
	TypeBranch   = "branch"
	TypeOnBranch = "on-branch"
	TypeHead     = "head"
)

// Main is the ID of the branch every conversation starts with: the records
// not wrapped in on-branch.
const Main = "main"

// Header is the first line of a log.
type Header struct {
	Version        int
	ConversationID string
	StartedAt      time.Time
	Title          string
	AgentID        string
	// Extra holds members this folio does not know, verbatim and in order,
	// so rewriting the header (on upgrade) keeps them.
	Extra []Member
	// Missing names the members Jazz needs to open a log (agentId,
	// conversationId) that this header lacks. folio reads the log anyway.
	Missing []string
}

// Member is one JSON object member kept as its encoded value.
type Member struct {
	Name  string
	Value jsontext.Value
}

// ProblemKind classifies a Problem.
type ProblemKind string

// Problem kinds.
const (
	// ProblemRejected: a record failed validation and did not apply. Its
	// line stays in the file.
	ProblemRejected ProblemKind = "rejected"
	// ProblemUnreadable: a line is not a JSON object; it is kept verbatim.
	ProblemUnreadable ProblemKind = "unreadable"
	// ProblemUnknown: a record type this folio does not know; it is kept
	// verbatim and preserved through upgrade and compaction.
	ProblemUnknown ProblemKind = "unknown"
	// ProblemTorn: the last line is incomplete (a crash mid-append). It is
	// ignored and re-terminated by the next save.
	ProblemTorn ProblemKind = "torn"
)

// Problem is one thing the reader could not apply, with where it is. Line is
// 1-based, as editors count; Pointer is an RFC 6901 JSON pointer into the
// record on that line ("/entries/2/content/tone"). Entry is the index of the
// offending entry in a UI record, or -1.
type Problem struct {
	Kind    ProblemKind
	Line    int
	Type    string
	Entry   int
	Pointer string
	Msg     string
}

func (p Problem) Error() string {
	return "line " + p.Where() + ": " + p.Msg
}

// Where says where the problem is: "7 (ui-append) entry 2 at /entries/2/id".
func (p Problem) Where() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d", p.Line)
	if p.Type != "" {
		fmt.Fprintf(&b, " (%s)", p.Type)
	}
	if p.Entry >= 0 {
		fmt.Fprintf(&b, " entry %d", p.Entry)
	}
	if p.Pointer != "" {
		fmt.Fprintf(&b, " at %s", p.Pointer)
	}
	return b.String()
}

// MarshalJSONTo writes the problem as the --json output and docs describe it.
func (p Problem) MarshalJSONTo(enc *jsontext.Encoder) error {
	type wire struct {
		Kind    ProblemKind `json:"kind"`
		Line    int         `json:"line"`
		Type    string      `json:"type,omitzero"`
		Entry   *int        `json:"entry,omitzero"`
		Pointer string      `json:"pointer"`
		Message string      `json:"message"`
	}
	w := wire{Kind: p.Kind, Line: p.Line, Type: p.Type, Pointer: p.Pointer, Message: p.Msg}
	if p.Entry >= 0 {
		w.Entry = &p.Entry
	}
	return json.MarshalEncode(enc, w)
}

// RawLine is a line kept verbatim: an unknown record type or text that is
// not JSON. Line is 1-based; Bytes excludes the newline.
type RawLine struct {
	Line  int
	Type  string
	Bytes []byte
}

// Conversation is what a log holds once read.
type Conversation struct {
	Header Header
	// Title is the newest title: the header's, replaced by later meta records.
	Title string
	// UpdatedAt is when the conversation last changed: the newest record's
	// "at", or the newest meta updatedAt when that is later.
	UpdatedAt time.Time
	// Document is the current presentation: the last accepted ui-transcript
	// and the ui-append batches accepted after it, or, when the log has no
	// UI records at all, entries derived from the messages.
	Document transcript.Document
	// Messages is the model-facing conversation since the last rewrite.
	// A Log's reads (Load, LoadTail, SetHead) give the head's with the
	// failures an older log holds only as entries put in (failmsg.go);
	// Read and the Scanner give them as stored.
	Messages []message.Message
	// MessageAt holds the at of each message's record (the Unix epoch
	// where it was missing or unreadable), index for index with Messages.
	MessageAt []time.Time
	// Problems lists, in file order, everything that did not apply.
	Problems []Problem
	// Unknown keeps unknown record types and unreadable lines verbatim.
	Unknown []RawLine
	// Derived is true when Document was derived from Messages because the
	// log has no UI records.
	Derived bool
	// Head is the current branch (Main unless a head record names another);
	// Document, Messages and Derived are that branch's.
	Head string
	// Branches lists the conversation's branches in the order they were
	// created, Main first.
	Branches []Branch
	// views holds every branch's document and messages.
	views map[string]branchView
	// synth holds the indices in Messages of the messages a Log's read
	// added for failures an older log holds only in its entries
	// (failmsg.go), in order; Messages less them is what the log holds.
	synth []int
	// Legacy is true when the log is version 2; its UI entries were decoded
	// from rendered text.
	Legacy bool
	// Interrupted is set by Log.Load when the log's writer had died while
	// entries were open (streaming): Load settled them under a notice.
	Interrupted bool
}

// --- encoding -------------------------------------------------------------

func appendHeader(dst []byte, h Header) []byte {
	dst = append(dst, `{"type":"conversation","version":`...)
	dst = strconv.AppendInt(dst, int64(h.Version), 10)
	dst = append(dst, `,"conversationId":`...)
	dst, _ = jsontext.AppendQuote(dst, h.ConversationID)
	dst = append(dst, `,"startedAt":"`...)
	dst = transcript.AppendInstant(dst, h.StartedAt)
	dst = append(dst, '"')
	if h.Title != "" {
		dst = append(dst, `,"title":`...)
		dst, _ = jsontext.AppendQuote(dst, h.Title)
	}
	if h.AgentID != "" {
		dst = append(dst, `,"agentId":`...)
		dst, _ = jsontext.AppendQuote(dst, h.AgentID)
	}
	for _, m := range h.Extra {
		dst = append(dst, ',')
		dst, _ = jsontext.AppendQuote(dst, m.Name)
		dst = append(dst, ':')
		dst = append(dst, m.Value...)
	}
	return append(dst, "}\n"...)
}

func appendRecordStart(dst []byte, typ string, at time.Time) []byte {
	dst = append(dst, `{"type":"`...)
	dst = append(dst, typ...)
	dst = append(dst, `","at":"`...)
	dst = transcript.AppendInstant(dst, at)
	return append(dst, '"')
}

// appendUIRecord writes a ui-transcript or ui-append record of entries.
func appendUIRecord(dst []byte, typ string, at time.Time, entries func(yield func(transcript.Entry) bool)) ([]byte, error) {
	return appendUIRecordAt(appendRecordStart(dst, typ, at), entries)
}

// appendUIRecordAt finishes a UI record whose type and at dst already holds.
func appendUIRecordAt(dst []byte, entries func(yield func(transcript.Entry) bool)) ([]byte, error) {
	dst = append(dst, `,"entries":[`...)
	first := true
	var err error
	entries(func(e transcript.Entry) bool {
		var b []byte
		b, err = transcript.EncodeEntry(e)
		if err != nil {
			err = fmt.Errorf("entry %q: %w", e.ID, err)
			return false
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, b...)
		return true
	})
	if err != nil {
		return nil, err
	}
	return append(dst, "]}\n"...), nil
}

func appendMessageRecord(dst []byte, at time.Time, m message.Message) ([]byte, error) {
	b, err := json.Marshal(m, json.Deterministic(true))
	if err != nil {
		return nil, err
	}
	dst = appendRecordStart(dst, TypeMessage, at)
	dst = append(dst, `,"message":`...)
	dst = append(dst, b...)
	return append(dst, "}\n"...), nil
}

func appendRewriteRecord(dst []byte, at time.Time) []byte {
	return append(appendRecordStart(dst, TypeRewrite, at), "}\n"...)
}

func appendMetaRecord(dst []byte, at time.Time, title string, updatedAt time.Time) []byte {
	dst = appendRecordStart(dst, TypeMeta, at)
	if title != "" {
		dst = append(dst, `,"title":`...)
		dst, _ = jsontext.AppendQuote(dst, title)
	}
	if !updatedAt.IsZero() {
		dst = append(dst, `,"updatedAt":"`...)
		dst = transcript.AppendInstant(dst, updatedAt)
		dst = append(dst, '"')
	}
	return append(dst, "}\n"...)
}

// --- decoding helpers -----------------------------------------------------

// pointerOf extracts a JSON pointer and message from a decoding error.
func pointerOf(err error) (string, string) {
	var fe *transcript.FieldError
	if errors.As(err, &fe) {
		return fe.Pointer, fe.Msg
	}
	var se *json.SemanticError
	if errors.As(err, &se) {
		msg := "invalid value"
		if se.Err != nil {
			// message's own checks say "/pointer: text" inside the value.
			if p, m := pointerOf(se.Err); p != "" {
				return string(se.JSONPointer) + p, m
			}
			msg = se.Err.Error()
		} else if se.JSONKind != 0 && se.GoType != nil {
			msg = fmt.Sprintf("cannot use JSON %s as %s", se.JSONKind, se.GoType)
		}
		return string(se.JSONPointer), msg
	}
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) {
		return string(syn.JSONPointer), syn.Err.Error()
	}
	// message.Validate reports "/pointer: text".
	s := err.Error()
	if strings.HasPrefix(s, "/") {
		if i := strings.Index(s, ": "); i > 0 {
			return s[:i], s[i+2:]
		}
	}
	return "", s
}

// escapePointerToken escapes a member name for use in a JSON pointer.
func escapePointerToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// trimLine drops a trailing carriage return, so logs edited on Windows
// still read.
func trimLine(b []byte) []byte {
	return bytes.TrimSuffix(b, []byte("\r"))
}
