package history

import (
	"fmt"

	"github.com/foliodev/folio/transcript"
)

// The failureSource of each read of a log (failmsg.go): a whole document,
// a light read's entries (stubs outside the window), and the page index's
// refs. Each decodes only what the failure rule asks for.

// docSource is a whole document.
type docSource struct{ doc transcript.Document }

func (s docSource) Len() int { return s.doc.Len() }

func (s docSource) prompts(lo, hi int) ([]prompt, error) {
	var out []prompt
	for i := lo; i < hi; i++ {
		if p, ok := promptOf(s.doc.At(i).Content, i); ok {
			out = append(out, p)
		}
	}
	return out, nil
}

func (s docSource) kind(i int) (transcript.Kind, error) { return s.doc.At(i).Content.Kind(), nil }

func (s docSource) content(i int) (transcript.Content, error) { return s.doc.At(i).Content, nil }

func (s docSource) compactionBefore(i int) (int, error) {
	for i--; i >= 0 && s.doc.At(i).Content.Kind() != transcript.KindCompaction; i-- {
	}
	return i, nil
}

// lightSource is the entries of a light read (parseTail) while it builds
// its document: whole for the prompts (hold keeps them) and the window,
// stubs elsewhere, which it decodes from their lines when asked.
type lightSource struct {
	r       *reader
	entries []transcript.Entry
	built   map[int]transcript.Entry
}

func (s *lightSource) Len() int { return len(s.entries) }

func (s *lightSource) prompts(lo, hi int) ([]prompt, error) {
	var out []prompt
	for i := lo; i < hi; i++ {
		// A stub is not a prompt: the read holds prompts whole.
		if c := s.entries[i].Content; c != nil {
			if p, ok := promptOf(c, i); ok {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

func (s *lightSource) compactionBefore(i int) (int, error) {
	// A stub is not a compaction either: the read holds them whole.
	for i--; i >= 0; i-- {
		if c := s.entries[i].Content; c != nil && c.Kind() == transcript.KindCompaction {
			break
		}
	}
	return i, nil
}

func (s *lightSource) entry(i int) (transcript.Entry, error) {
	e := s.entries[i]
	if e.Content != nil {
		return e, nil
	}
	if b, ok := s.built[i]; ok {
		return b, nil
	}
	one := []transcript.Entry{e}
	if err := s.r.build(one); err != nil {
		return transcript.Entry{}, err
	}
	if s.built == nil {
		s.built = map[int]transcript.Entry{}
	}
	s.built[i] = one[0]
	return one[0], nil
}

func (s *lightSource) kind(i int) (transcript.Kind, error) {
	e, err := s.entry(i)
	if err != nil {
		return "", err
	}
	return e.Content.Kind(), nil
}

func (s *lightSource) content(i int) (transcript.Content, error) {
	e, err := s.entry(i)
	return e.Content, err
}

// indexSource is a branch's document through the page index: kinds from
// its refs, contents decoded from the log where the refs say they are,
// kept in the tail read's decoded entries, which the window then reuses.
type indexSource struct {
	t    *tailRead
	doc  *IndexDoc
	base int   // refs holds the refs of entries base..Len
	refs []Ref // loaded from the end back, as the rule asks
}

func (s *indexSource) Len() int { return s.doc.Len() }

// load makes refs reach back to entry lo.
func (s *indexSource) load(lo int) error {
	if lo >= s.base {
		return nil
	}
	more, err := s.doc.Refs(lo, s.base)
	if err != nil {
		return fmt.Errorf("%w: %v", errNoIndexTail, err)
	}
	s.refs = append(more, s.refs...)
	s.base = lo
	return nil
}

func (s *indexSource) prompts(lo, hi int) ([]prompt, error) {
	if err := s.load(lo); err != nil {
		return nil, err
	}
	var want []int
	for i := lo; i < hi; i++ {
		if k := s.refs[i-s.base].Kind; k == "" || isPromptKind(k) {
			want = append(want, i)
		}
	}
	if err := s.decode(want); err != nil {
		return nil, err
	}
	var out []prompt
	for _, i := range want {
		if p, ok := promptOf(s.t.decoded[i].Content, i); ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// decode decodes the entries at the indices given that the tail read has
// not decoded yet, in one pass over the log.
func (s *indexSource) decode(at []int) error {
	var refs []Ref
	var idx []int
	for _, i := range at {
		if _, ok := s.t.decoded[i]; !ok {
			refs, idx = append(refs, s.refs[i-s.base]), append(idx, i)
		}
	}
	if len(refs) == 0 {
		return nil
	}
	es, err := s.t.decode(refs)
	if err != nil {
		return err
	}
	if s.t.decoded == nil {
		s.t.decoded = map[int]transcript.Entry{}
	}
	for k, e := range es {
		s.t.decoded[idx[k]] = e
	}
	return nil
}

func (s *indexSource) compactionBefore(i int) (int, error) {
	for i--; i >= 0; i-- {
		if i < s.base {
			// Back a growing stretch at a time, as the prompts are read.
			if err := s.load(max(0, s.base-max(4096, 4*(s.Len()-s.base)))); err != nil {
				return 0, err
			}
		}
		k, err := s.kind(i)
		if err != nil {
			return 0, err
		}
		if k == transcript.KindCompaction {
			break
		}
	}
	return i, nil
}

func (s *indexSource) kind(i int) (transcript.Kind, error) {
	if err := s.load(i); err != nil {
		return "", err
	}
	if k := s.refs[i-s.base].Kind; k != "" {
		return k, nil
	}
	c, err := s.content(i)
	if err != nil {
		return "", err
	}
	return c.Kind(), nil
}

func (s *indexSource) content(i int) (transcript.Content, error) {
	if err := s.load(i); err != nil {
		return nil, err
	}
	if err := s.decode([]int{i}); err != nil {
		return nil, err
	}
	return s.t.decoded[i].Content, nil
}
