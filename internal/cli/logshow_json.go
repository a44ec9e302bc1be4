package cli

import (
	"bufio"
	"io"
	"path/filepath"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// jsonOptions are how show encodes JSON. An entry is written as
// transcript.EncodeEntry writes it, which is what encoding it with them
// gives (its JSON is compact already), at a fraction of the cost.
var jsonOptions = []json.Options{json.Deterministic(true), jsontext.Multiline(false)}

// jsonShow writes folio log show --json as it reads the log through its
// page index: the object's head, the head's entries a part at a time
// (decoded and encoded in parallel, written in order), its model
// messages a batch at a time, then the problems, so memory holds a part,
// never the conversation. The bytes are the whole read's (showJSON). It
// reports done false, having written nothing, when the index cannot stand
// in for the whole read (see history.LogStream).
func jsonShow(path string, o showOptions, w io.Writer) (done bool, err error) {
	s, err := history.OpenLogStream(path)
	if err != nil {
		return false, nil
	}
	defer s.Close()
	defer streamGC()()
	d := s.Doc()
	from, err := showFrom(d.Len(), o, func(id string) int {
		i, err := d.Find(id)
		if err != nil {
			return -1
		}
		return i
	})
	if err != nil {
		return true, err
	}
	cur, err := d.Forward(from)
	if err != nil {
		return false, nil
	}
	if o.jsonl {
		bw := bufio.NewWriterSize(w, 64<<10)
		if err := partStream(d, s.File(), cur, from, "", bw, jsonlPart); err != nil {
			return true, err
		}
		return true, bw.Flush()
	}
	id := s.ConversationID()
	if id == "" {
		id = strings.TrimSuffix(filepath.Base(path), ".jsonl")
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(`{"conversationId":`)
	if err := json.MarshalWrite(bw, id, jsonOptions...); err != nil {
		return true, err
	}
	bw.WriteString(`,"version":`)
	if err := json.MarshalWrite(bw, s.Version(), jsonOptions...); err != nil {
		return true, err
	}
	bw.WriteString(`,"entries":[`)
	err = partStream(d, s.File(), cur, from, "", bw, func(buf []byte, part plainPart) ([]byte, error) {
		for i, e := range part.es {
			if part.base+i > from {
				buf = append(buf, ',')
			}
			b, err := transcript.EncodeEntry(e)
			if err != nil {
				return buf, err
			}
			buf = append(buf, b...)
		}
		return buf, nil
	})
	if err != nil {
		return true, err
	}
	bw.WriteString(`],"messages":[`)
	k := 0
	err = s.Messages(func(m message.Message) error {
		if k > 0 {
			bw.WriteByte(',')
		}
		k++
		return json.MarshalWrite(bw, m, jsonOptions...)
	})
	if err != nil {
		return true, err
	}
	bw.WriteString(`],"rejected":[`)
	for i, p := range s.Problems() {
		if i > 0 {
			bw.WriteByte(',')
		}
		if err := json.MarshalWrite(bw, p, jsonOptions...); err != nil {
			return true, err
		}
	}
	bw.WriteString("]}\n")
	return true, bw.Flush()
}

// jsonlPart writes a part's entries as JSON, one a line.
func jsonlPart(buf []byte, part plainPart) ([]byte, error) {
	for _, e := range part.es {
		b, err := transcript.EncodeEntry(e)
		if err != nil {
			return buf, err
		}
		buf = append(append(buf, b...), '\n')
	}
	return buf, nil
}

// writeJSONL writes entries read whole as JSON, one a line.
func writeJSONL(w io.Writer, es []transcript.Entry) error {
	buf, err := jsonlPart(nil, plainPart{es: es})
	if err != nil {
		return err
	}
	_, err = w.Write(buf)
	return err
}
