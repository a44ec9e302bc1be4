package history

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
	"github.com/go-json-experiment/json/jsontext"
)

// Branch describes one branch of a conversation. Main has no parent.
type Branch struct {
	ID string
	// Parent is the branch this one forked from ("" for Main).
	Parent string
	// AfterEntry is the ID of the parent's entry the branch forked after;
	// "" forks before the parent's first entry. AfterMessage is how many of
	// the parent's model messages the branch shares.
	AfterEntry   string
	AfterMessage int
	// ForkIndex is how many of the parent's entries the branch shares.
	ForkIndex int
	Title     string
	Created   time.Time
}

type branchView struct {
	doc  transcript.Document
	msgs []message.Message
}

// Branch returns a branch's document and model messages: the parent's
// prefix up to the fork point followed by the branch's own records.
func (c *Conversation) Branch(id string) (transcript.Document, []message.Message, error) {
	if id == c.Head || (id == Main && c.views == nil) {
		return c.Document, c.Messages, nil
	}
	v, ok := c.views[id]
	if !ok {
		return transcript.Document{}, nil, fmt.Errorf("%w %q", ErrUnknownBranch, id)
	}
	return v.doc, v.msgs, nil
}

// BranchInfo returns the description of branch id.
func (c *Conversation) BranchInfo(id string) (Branch, bool) {
	for _, b := range c.Branches {
		if b.ID == id {
			return b, true
		}
	}
	if id == Main {
		return Branch{ID: Main}, true
	}
	return Branch{}, false
}

// branchState is everything the reader tracks per branch. Main's state
// lives in the reader's own fields; a branch's is swapped in while one of
// its records applies, so every rule of a plain record holds per branch.
type branchState struct {
	info     Branch
	entries  []transcript.Entry
	tail     []transcript.Entry
	ids      *idSet
	reserved map[string]struct{}
	uiLines  int
	msgs     []message.Message
	msgAt    []time.Time
}

// tree is the reader's view of the branches read so far.
type tree struct {
	head     string
	branches map[string]*branchState
	order    []string
	// light, in a Scanner resumed from the page index without reading
	// every ID back (resumeLight), says how many of each branch's first
	// entries (main's first ones) its state leaves out, and finds an
	// entry among them; nil when every state is whole.
	light *lightForks
}

func (r *reader) swap(b *branchState) {
	r.entries, b.entries = b.entries, r.entries
	r.tail, b.tail = b.tail, r.tail
	r.ids, b.ids = b.ids, r.ids
	r.reserved, b.reserved = b.reserved, r.reserved
	r.uiLines, b.uiLines = b.uiLines, r.uiLines
	r.conv.Messages, b.msgs = b.msgs, r.conv.Messages
	r.msgAt, b.msgAt = b.msgAt, r.msgAt
}

// state returns branch id's state with its entries as a document would
// show them (settled plus the provisional tail, or derived). Main's is read
// from the reader's fields.
func (r *reader) stateOf(id string) (entries []transcript.Entry, msgs []message.Message, msgAt []time.Time, reserved map[string]struct{}, ok bool) {
	if id == Main {
		entries = append(slices.Clip(r.settled(r.entries, r.ids)), r.tail...)
		if r.uiLines == 0 {
			entries = deriveEntries(r.conv.Messages, r.msgAt)
		}
		return entries, r.conv.Messages, r.msgAt, r.reserved, true
	}
	b, ok := r.tree.branches[id]
	if !ok {
		return nil, nil, nil, nil, false
	}
	return append(slices.Clip(r.settled(b.entries, b.ids)), b.tail...), b.msgs, b.msgAt, b.reserved, true
}

// settled is a document's settled entries, given those the reader keeps
// and its ID set: in a pass that keeps none (noEntries), entries made
// afresh from the set's keys, their IDs alone.
func (r *reader) settled(entries []transcript.Entry, ids *idSet) []transcript.Entry {
	if !r.noEntries || ids == nil {
		return entries
	}
	out := make([]transcript.Entry, len(ids.keys))
	for i, id := range ids.keys {
		out[i].ID = id
	}
	return out
}

// fork applies a branch record.
func (r *reader) fork(rec *rawRecord, reject func(*Problem) lineInfo) lineInfo {
	at, err := transcript.ParseInstant(rec.at)
	if err != nil {
		return reject(&Problem{Entry: -1, Pointer: "/at", Msg: err.Error()})
	}
	switch {
	case rec.branch == "":
		return reject(&Problem{Entry: -1, Pointer: "/branch", Msg: "branch is missing or empty"})
	case rec.branch == Main || r.tree.branches[rec.branch] != nil:
		return reject(&Problem{Entry: -1, Pointer: "/branch", Msg: fmt.Sprintf("branch %q already exists", rec.branch)})
	case rec.members&memParent == 0:
		return reject(&Problem{Entry: -1, Pointer: "/parent", Msg: "parent is missing"})
	case rec.members&memAfterMessage == 0:
		return reject(&Problem{Entry: -1, Pointer: "/afterMessage", Msg: "afterMessage is missing"})
	}
	entries, msgs, msgAt, reserved, ok := r.stateOf(rec.parent)
	if !ok {
		return reject(&Problem{Entry: -1, Pointer: "/parent", Msg: fmt.Sprintf("parent branch %q does not exist", rec.parent)})
	}
	k, skip := 0, r.tree.light.skipOf(rec.parent)
	if rec.afterEntry != "" {
		k = slices.IndexFunc(entries, func(e transcript.Entry) bool { return e.ID == rec.afterEntry }) + 1
		if k > 0 {
			k += skip
		} else if skip > 0 {
			k = r.tree.light.find(rec.afterEntry, skip) + 1
		}
		if k == 0 {
			return reject(&Problem{Entry: -1, Pointer: "/afterEntry", Msg: fmt.Sprintf("entry %q is not in branch %q", rec.afterEntry, rec.parent)})
		}
	}
	if rec.afterMessage > len(msgs) {
		return reject(&Problem{Entry: -1, Pointer: "/afterMessage",
			Msg: fmt.Sprintf("branch %q has %d messages, not %d", rec.parent, len(msgs), rec.afterMessage)})
	}
	b := &branchState{
		info: Branch{ID: rec.branch, Parent: rec.parent, AfterEntry: rec.afterEntry, AfterMessage: rec.afterMessage,
			ForkIndex: k, Title: rec.title, Created: at},
		entries:  slices.Clone(entries[:max(k-skip, 0)]),
		ids:      newIDSet(max(k-skip, 0)),
		reserved: maps.Clone(reserved),
		// The shared prefix is on disk, so the branch's document is never
		// derived from its messages.
		uiLines: 1,
		msgs:    slices.Clone(msgs[:rec.afterMessage]),
		msgAt:   slices.Clone(msgAt[:min(rec.afterMessage, len(msgAt))]),
	}
	for _, e := range b.entries {
		b.ids.add(e.ID)
	}
	if r.noEntries {
		b.entries = nil // its ID set holds them
	}
	if skip > 0 {
		r.tree.light.skip[rec.branch] = min(k, skip)
	}
	if r.tree.branches == nil {
		r.tree.branches = map[string]*branchState{}
	}
	r.tree.branches[rec.branch] = b
	r.tree.order = append(r.tree.order, rec.branch)
	r.seen(at)
	return lineInfo{kind: lineBranch, accepted: true, branch: rec.branch, parent: rec.parent}
}

// setHead applies a head record.
func (r *reader) setHead(rec *rawRecord, reject func(*Problem) lineInfo) lineInfo {
	if rec.branch != Main && r.tree.branches[rec.branch] == nil {
		return reject(&Problem{Entry: -1, Pointer: "/branch", Msg: fmt.Sprintf("branch %q does not exist", rec.branch)})
	}
	r.tree.head = rec.branch
	r.seen(looseInstant(rec.at))
	return lineInfo{kind: lineHead, accepted: true}
}

// wrappable lists the record types an on-branch record may carry.
var wrappable = map[string]bool{TypeMessage: true, TypeMeta: true, TypeRewrite: true,
	TypeUITranscript: true, TypeUIAppend: true, TypeUIOpen: true}

// onBranch applies the record an on-branch record wraps, within its branch.
func (r *reader) onBranch(lineNo int, rec *rawRecord, reject func(*Problem) lineInfo) lineInfo {
	if rec.members&memRecord == 0 {
		return reject(&Problem{Entry: -1, Pointer: "/record", Msg: "record is missing"})
	}
	if _, err := transcript.ParseInstant(rec.at); err != nil {
		return reject(&Problem{Entry: -1, Pointer: "/at", Msg: err.Error()})
	}
	id, inner, base := rec.branch, rec.record, rec.recordAt // rec is reused by the inner decode
	b := r.tree.branches[id]
	if b == nil {
		msg := fmt.Sprintf("branch %q does not exist", id)
		if id == Main {
			msg = "records of main are written without on-branch"
		}
		return reject(&Problem{Entry: -1, Pointer: "/branch", Msg: msg})
	}
	if typ := innerType(inner); !wrappable[typ] {
		return reject(&Problem{Entry: -1, Pointer: "/record/type", Msg: fmt.Sprintf("record type %q cannot be on a branch", typ)})
	}
	first := len(r.conv.Problems)
	title := r.conv.Title
	r.swap(b)
	info := r.record(lineNo, inner, false)
	for i := range r.rec.spans {
		r.rec.spans[i].start += base
		r.rec.spans[i].end += base
	}
	r.swap(b)
	if r.conv.Title != title {
		b.info.Title, r.conv.Title = r.conv.Title, title
	}
	for i := first; i < len(r.conv.Problems); i++ {
		p := &r.conv.Problems[i]
		p.Pointer = "/record" + p.Pointer
		p.Msg = "on branch " + strconv.Quote(id) + ": " + p.Msg
	}
	info.branch = id
	return info
}

// innerType returns the "type" member of an encoded record, or "".
func innerType(v jsontext.Value) string {
	var dec jsontext.Decoder
	dec.Reset(bytes.NewReader(v))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return ""
	}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return ""
		}
		if name.String() == "type" {
			tok, err := dec.ReadToken()
			if err != nil || tok.Kind() != '"' {
				return ""
			}
			return tok.String()
		}
		if dec.SkipValue() != nil {
			return ""
		}
	}
	return ""
}

// finishBranches builds every branch's document and leaves the head's
// state in the reader's fields, where a writer continues from it.
func (r *reader) finishBranches() error {
	c := r.conv
	c.Head = r.tree.head
	c.Branches = append(c.Branches, Branch{ID: Main})
	if len(r.tree.order) == 0 {
		return r.finishHead(true)
	}
	c.views = make(map[string]branchView, len(r.tree.order)+1)
	build := func(id string) error {
		if err := r.finishHead(id == c.Head); err != nil {
			return err
		}
		c.views[id] = branchView{doc: c.Document, msgs: c.Messages}
		return nil
	}
	// Main first, from the reader's own fields.
	if c.Head != Main {
		if err := build(Main); err != nil {
			return err
		}
	}
	for _, id := range r.tree.order {
		b := r.tree.branches[id]
		c.Branches = append(c.Branches, b.info)
		if id == c.Head {
			continue
		}
		r.swap(b)
		err := build(id)
		r.swap(b)
		if err != nil {
			return err
		}
	}
	if c.Head != Main {
		r.swap(r.tree.branches[c.Head])
	}
	return build(c.Head)
}

// --- writing ----------------------------------------------------------------

func appendBranchRecord(dst []byte, at time.Time, b Branch) []byte {
	dst = appendRecordStart(dst, TypeBranch, at)
	dst = append(dst, `,"branch":`...)
	dst, _ = jsontext.AppendQuote(dst, b.ID)
	dst = append(dst, `,"parent":`...)
	dst, _ = jsontext.AppendQuote(dst, b.Parent)
	if b.AfterEntry != "" {
		dst = append(dst, `,"afterEntry":`...)
		dst, _ = jsontext.AppendQuote(dst, b.AfterEntry)
	}
	dst = append(dst, `,"afterMessage":`...)
	dst = strconv.AppendInt(dst, int64(b.AfterMessage), 10)
	if b.Title != "" {
		dst = append(dst, `,"title":`...)
		dst, _ = jsontext.AppendQuote(dst, b.Title)
	}
	return append(dst, "}\n"...)
}

func appendHeadRecord(dst []byte, at time.Time, branch string) []byte {
	dst = appendRecordStart(dst, TypeHead, at)
	dst = append(dst, `,"branch":`...)
	dst, _ = jsontext.AppendQuote(dst, branch)
	return append(dst, "}\n"...)
}

// wrapOnBranch wraps each record line of recs in an on-branch record.
func wrapOnBranch(recs []byte, at time.Time, branch string) []byte {
	out := make([]byte, 0, len(recs)+len(recs)/4+64)
	for len(recs) > 0 {
		nl := bytes.IndexByte(recs, '\n')
		line := recs[:nl]
		recs = recs[nl+1:]
		out = appendRecordStart(out, TypeOnBranch, at)
		out = append(out, `,"branch":`...)
		out, _ = jsontext.AppendQuote(out, branch)
		out = append(out, `,"record":`...)
		out = append(out, line...)
		out = append(out, "}\n"...)
	}
	return out
}

// Head returns the branch saves go to.
func (l *Log) Head() (string, error) {
	if err := l.ensureLoaded(); err != nil {
		return "", err
	}
	return l.head, nil
}

// Fork writes a branch record: a new branch of parent sharing parent's
// entries up to and including afterEntry ("" shares none) and its first
// afterMessage model messages. It returns the new branch's ID and does not
// change the head. The fork point is checked against the log as it is on
// disk (ErrUnknownBranch, ErrForkPoint): through a file log's page index
// when it can be, which costs finding afterEntry there, else by reading the
// whole log.
//
// For the head, afterMessage counts the messages as this Log's last read
// gave them, with the failures it added for an older log (failmsg.go);
// the branch record counts what the log holds.
func (l *Log) Fork(parent, afterEntry string, afterMessage int, title string) (string, error) {
	if l.closed {
		return "", ErrClosed
	}
	if err := l.ensureLoaded(); err != nil {
		return "", err
	}
	if parent == l.head {
		afterMessage = storedBefore(afterMessage, l.synth)
	}
	v, err := l.branchView(parent, afterEntry)
	if err != nil {
		return "", err
	}
	if afterEntry != "" && !v.has {
		return "", fmt.Errorf("%w: entry %q is not in branch %q", ErrForkPoint, afterEntry, parent)
	}
	if afterMessage < 0 || afterMessage > v.msgs {
		return "", fmt.Errorf("%w: branch %q has %d messages, not %d", ErrForkPoint, parent, v.msgs, afterMessage)
	}
	id := ""
	for n := len(v.branches); id == ""; n++ {
		cand := "b" + strconv.Itoa(n)
		if !slices.Contains(v.branches, cand) {
			id = cand
		}
	}
	b := Branch{ID: id, Parent: parent, AfterEntry: afterEntry, AfterMessage: afterMessage, Title: title}
	at := l.now()
	if err := l.write(appendBranchRecord(nil, at, b)); err != nil {
		return "", err
	}
	l.noteRecord(at, false, "")
	l.branches = len(v.branches) + 1
	l.storeSummary()
	return id, nil
}

// SetHead makes branch the current one: a head record is written (nothing
// when it already is the head) and the next Save continues that branch. It
// returns the log read afresh, whose Document and Messages are the branch's.
func (l *Log) SetHead(branch string) (*Conversation, error) {
	return l.setHead(branch, l.Load)
}

// SetHeadTail is SetHead returning what LoadTail(n, widen) returns: the
// end of the branch's document and its messages, so switching costs the
// branch's tail, not the log.
func (l *Log) SetHeadTail(branch string, n int, widen *TailStart) (*Conversation, error) {
	return l.setHead(branch, func() (*Conversation, error) { return l.LoadTail(n, widen) })
}

func (l *Log) setHead(branch string, load func() (*Conversation, error)) (*Conversation, error) {
	if l.closed {
		return nil, ErrClosed
	}
	if err := l.ensureLoaded(); err != nil {
		return nil, err
	}
	v, err := l.branchView(branch, "")
	if err != nil {
		return nil, err
	}
	if v.head != branch {
		if err := l.write(appendHeadRecord(nil, l.now(), branch)); err != nil {
			return nil, err
		}
	}
	return load()
}

// forkView is what Fork and SetHead check against: the log's branches and
// head, one branch's message count, and whether an entry is in that
// branch's document.
type forkView struct {
	branches []string
	head     string
	msgs     int
	has      bool
}

// branchView describes branch as the log on disk has it, and whether
// entry ("": none asked) is in its document: from a file log's page index
// when it describes the log the writer knows (finding entry costs the ID
// table's answer on main, else the branch's refs once), else from a read
// of the whole log (PostgreSQL without a local copy, a version 2 log, a
// document derived from messages). A branch the log lacks is
// ErrUnknownBranch.
func (l *Log) branchView(branch, entry string) (forkView, error) {
	if v, ok, err := l.branchViewIndexed(branch, entry); ok {
		return v, err
	}
	st, _, err := l.read(false)
	if err != nil {
		return forkView{}, err
	}
	c := st.conv
	doc, msgs, err := c.Branch(branch)
	if err != nil {
		return forkView{}, err
	}
	v := forkView{head: c.Head, msgs: len(msgs)}
	if branch == c.Head {
		v.msgs -= len(c.synth) // what the log holds (failmsg.go)
	}
	if entry != "" {
		_, v.has = doc.Index(entry)
	}
	for _, b := range c.Branches {
		v.branches = append(v.branches, b.ID)
	}
	return v, nil
}

// branchViewIndexed is branchView through the page index of a file log,
// or of the local copy a CopyMedium keeps; ok is false when the index
// cannot answer.
func (l *Log) branchViewIndexed(branch, entry string) (v forkView, ok bool, err error) {
	if !l.exists || l.size == 0 {
		return forkView{}, false, nil
	}
	switch m := l.m.(type) {
	case *fileMedium:
		m.settleIndex()
		return viewInIndex(m.path, l.size, branch, entry)
	case CopyMedium:
		rerr := m.ReadCopy(func(path string, size int64) error {
			if size != l.size {
				return errNoIndexTail // the log is not the one this writer knows
			}
			v, ok, err = viewInIndex(path, size, branch, entry)
			if !ok {
				return errNoIndexTail
			}
			return nil
		})
		if rerr != nil {
			return forkView{}, false, nil
		}
		return v, ok, err
	}
	return forkView{}, false, nil
}

// viewInIndex is branchViewIndexed for the log file at path, of size
// bytes.
func viewInIndex(path string, size int64, branch, entry string) (v forkView, ok bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return forkView{}, false, nil
	}
	defer f.Close()
	ix, err := OpenIndex(path, f, size)
	if err != nil {
		return forkView{}, false, nil
	}
	defer ix.Close()
	if ix.st.logSize != size {
		return forkView{}, false, nil
	}
	br := ix.st.branch(branch)
	if br == nil {
		return forkView{}, true, fmt.Errorf("%w %q", ErrUnknownBranch, branch)
	}
	if entry != "" {
		doc, err := ix.Document(branch)
		if err != nil {
			return forkView{}, false, nil
		}
		i, err := doc.Find(entry)
		if err != nil {
			return forkView{}, false, nil
		}
		v.has = i >= 0
	}
	for _, b := range ix.st.branches {
		v.branches = append(v.branches, b.info.ID)
	}
	v.head, v.msgs = ix.st.head, br.msgs
	return v, true, nil
}

func isBranchType(typ string) bool {
	return typ == TypeBranch || typ == TypeOnBranch || typ == TypeHead
}

// Branches returns the branches the index describes, main first, then in
// the order they were forked, as Conversation.Branches lists them.
func (ix *Index) Branches() []Branch {
	out := make([]Branch, len(ix.st.branches))
	for i, b := range ix.st.branches {
		out[i] = b.info
	}
	return out
}
