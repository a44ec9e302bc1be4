package history

import (
	"fmt"
	"os"

	"github.com/foliodev/folio/message"
)

// LogStream is a log opened to be read whole, forwards, through its page
// index, in constant memory: what a whole read (ReadStore) gives of its
// current branch (the header's ID and version, the head's entries through
// Doc, its model messages through Messages, and the log's problems) a
// part at a time. folio log show --json writes a conversation of any
// length with one.
//
// It opens only what the page index answers exactly as the whole read
// does (as Log.LoadTail's read through the index): a version 3 log whose
// main document was written as UI records, with no more problems than the
// index keeps. Anything else is an error, and the caller reads the log
// whole.
type LogStream struct {
	f        *os.File
	ix       *Index
	doc      *IndexDoc
	br       *ixBranch
	t        tailRead
	r        *reader
	id       string
	version  int
	problems []Problem
}

// OpenLogStream opens the log at path through its page index (rebuilt or
// extended first, as OpenIndex does).
func OpenLogStream(path string) (*LogStream, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	s, err := openLogStream(path, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

func openLogStream(path string, f *os.File) (*LogStream, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	ix, err := OpenIndexAnywhere(path, f, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoIndexTail, err)
	}
	st := ix.st
	if st.logSize > fi.Size() || st.branches[0].uiLines == 0 || !st.extrasOK() {
		ix.Close()
		return nil, fmt.Errorf("%w: a derived document, or more problems than the index keeps", errNoIndexTail)
	}
	s := &LogStream{f: f, ix: ix, t: tailRead{f: f, ix: ix}}
	sc := newScanner(false, 0)
	s.r = sc.r
	s.r.scan = true
	header, err := s.t.headerLine()
	if err == nil {
		if sc.line(header, true); sc.err != nil || s.r.version != Version {
			err = fmt.Errorf("%w: the header", errNoIndexTail)
		}
	}
	var torn *Problem
	if err == nil && st.logSize < fi.Size() {
		torn, err = s.t.tornLine(st, fi.Size())
	}
	if err == nil {
		s.doc, err = ix.Document(st.head)
	}
	if err != nil {
		ix.Close()
		return nil, err
	}
	s.br = st.branch(st.head)
	s.id, s.version = s.r.conv.Header.ConversationID, s.r.conv.Header.Version
	s.problems = append([]Problem{}, st.problemList...)
	if torn != nil {
		s.problems = append(s.problems, *torn)
	}
	return s, nil
}

// ConversationID is the header's conversation ID ("" when it names none:
// the caller names it, as ReadStore does).
func (s *LogStream) ConversationID() string { return s.id }

// Version is the log's format version, as the header gives it.
func (s *LogStream) Version() int { return s.version }

// Problems is the log's problems (rejected lines and records), as the
// whole read lists them.
func (s *LogStream) Problems() []Problem { return s.problems }

// Doc is the current branch's document.
func (s *LogStream) Doc() *IndexDoc { return s.doc }

// File is the open log, for Doc's reads.
func (s *LogStream) File() *os.File { return s.f }

// messagesBatch is how many model messages Messages reads at a time.
const messagesBatch = 256

// messagesStride is how many message frames apart Messages keeps a
// checkpoint of the chain.
var messagesStride = 512

// Messages calls fn with each of the current branch's model messages, in
// order, as the whole read gives them (stored, without the failures a Log
// adds), reading them from the log a batch at a time. It stops at the
// first error fn returns.
//
// The chain of message frames links only backwards, so Messages walks it
// back once keeping a link every messagesStride frames, then, from the
// first checkpoint on, walks back from each to the one before it and reads
// those frames forwards: it holds a link per messagesStride frames and the
// links of one stretch, never a ref per message.
func (s *LogStream) Messages(fn func(message.Message) error) error {
	src := s.ix.frames()
	var marks []link // checkpoints, the chain's last frame first
	for l, i := s.br.msgChain, 0; l.pos != 0; i++ {
		if i%messagesStride == 0 {
			marks = append(marks, l)
		}
		prev, _, _, err := readMsgRun(src, l)
		if err != nil {
			return err
		}
		l = prev
	}
	next := 0 // the ordinal of the next message
	spans := make([]span64, 0, messagesBatch)
	flush := func() error {
		lines, err := readSpans(s.f, spans)
		if err != nil {
			return err
		}
		spans = spans[:0]
		for _, line := range lines {
			m, err := s.t.message(s.r, trimLine(line))
			if err != nil {
				return err
			}
			if err := fn(m.m); err != nil {
				return err
			}
		}
		return nil
	}
	stretch := make([]link, 0, messagesStride)
	for j := len(marks) - 1; j >= 0; j-- {
		stop := int64(0) // the frame the stretch before this one starts at
		if j+1 < len(marks) {
			stop = marks[j+1].pos
		}
		stretch = stretch[:0]
		for l := marks[j]; l.pos != stop; {
			if l.pos == 0 || len(stretch) == messagesStride {
				return fmt.Errorf("%w: a chain of messages changed between two walks", ErrIndexDamaged)
			}
			stretch = append(stretch, l)
			prev, _, _, err := readMsgRun(src, l)
			if err != nil {
				return err
			}
			l = prev
		}
		for k := len(stretch) - 1; k >= 0; k-- {
			_, ord, refs, err := readMsgRun(src, stretch[k])
			if err != nil {
				return err
			}
			if ord != next || next+len(refs) > s.br.msgs {
				return fmt.Errorf("%w: a run of messages does not continue the one before it", ErrIndexDamaged)
			}
			for _, m := range refs {
				spans = append(spans, span64{m.start, m.start + int64(m.len)})
				if len(spans) == messagesBatch {
					if err := flush(); err != nil {
						return err
					}
				}
			}
			next += len(refs)
		}
	}
	if next != s.br.msgs {
		return fmt.Errorf("%w: a chain of messages ends before its first", ErrIndexDamaged)
	}
	return flush()
}

// Close closes the log and its index.
func (s *LogStream) Close() error {
	s.ix.Close()
	return s.f.Close()
}
