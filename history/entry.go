package history

import (
	"bytes"
	"errors"

	"github.com/foliodev/folio/transcript"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// errSlowPath tells decodeRecord to read the line again the careful way: the
// streaming fast path met something it does not report precisely.
var errSlowPath = errors.New("history: take the slow path")

// strict is transcript's decoding policy for stored facts.
var strict = json.JoinOptions(json.RejectUnknownMembers(true), jsontext.AllowDuplicateNames(false))

// streamKinds decodes content straight from the record's decoder when the
// kind is known and comes first, as folio writes it. A kind missing here
// (one transcript added later) still decodes, through DecodeContent.
var streamKinds = map[transcript.Kind]func(*jsontext.Decoder) (transcript.Content, error){
	transcript.KindUser:        streamAs[transcript.User],
	transcript.KindAgent:       streamAs[transcript.Agent],
	transcript.KindReasoning:   streamAs[transcript.Reasoning],
	transcript.KindTool:        streamAs[transcript.Tool],
	transcript.KindNotice:      streamAs[transcript.Notice],
	transcript.KindReport:      streamAs[transcript.ReportContent],
	transcript.KindHeader:      streamAs[transcript.Header],
	transcript.KindTurnReceipt: streamAs[transcript.TurnReceipt],
	transcript.KindStopped:     streamAs[transcript.Stopped],
	transcript.KindExpanded:    streamAs[transcript.Expanded],
	transcript.KindFailure:     streamAs[transcript.Failure],
	transcript.KindSteering:    streamAs[transcript.Steering],
	transcript.KindCompaction:  streamAs[transcript.Compaction],
}

func streamAs[T transcript.Content](dec *jsontext.Decoder) (transcript.Content, error) {
	var w struct {
		Kind transcript.Kind `json:"kind"`
		V    T               `json:",inline"`
	}
	if err := json.UnmarshalDecode(dec, &w, strict); err != nil {
		return nil, err
	}
	return w.V, nil
}

// peekKind reads the kind of the content object the decoder is about to
// read, when "kind" is its first member and the bytes are buffered.
func peekKind(dec *jsontext.Decoder) (transcript.Kind, bool) {
	b := bytes.TrimLeft(dec.UnreadBuffer(), " \t\r\n:")
	const head = `{"kind":"`
	if !bytes.HasPrefix(b, []byte(head)) {
		return "", false
	}
	b = b[len(head):]
	end := bytes.IndexByte(b, '"')
	if end <= 0 || bytes.IndexByte(b[:end], '\\') >= 0 {
		return "", false
	}
	return transcript.Kind(b[:end]), true
}

// decodeEntry reads one version 3 entry straight from the record's decoder:
// the envelope (id, content, timestamp) is walked token by token and only
// the content object goes through transcript.DecodeContent, so an entry is
// parsed once instead of once per layer. It applies the same rules as
// transcript.DecodeEntry and reports faults the same way.
//
// A syntactic error (the line is not JSON) is returned as is; a semantic
// one is a *transcript.FieldError, returned after the whole entry has been
// consumed so the caller can keep reading. id is whatever ID was readable,
// for reserving it when the batch is rejected.
//
// With fast set, content of a known kind is decoded from the stream itself;
// any fault then returns errSlowPath, and the caller reads the line again
// without fast to report it exactly as transcript would.
func decodeEntry(dec *jsontext.Decoder, fast bool) (e transcript.Entry, id string, err error) {
	if dec.PeekKind() != '{' {
		if err := dec.SkipValue(); err != nil {
			return e, "", err
		}
		return e, "", &transcript.FieldError{Msg: "an entry must be a JSON object"}
	}
	if _, err := dec.ReadToken(); err != nil {
		return e, "", err
	}
	var (
		semantic   error
		ts         string
		haveTS     bool
		content    transcript.Content
		haveConten bool
	)
	fail := func(ptr, msg string) {
		if semantic == nil {
			semantic = &transcript.FieldError{Pointer: ptr, Msg: msg}
		}
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return e, id, err
		}
		switch name := tok.String(); name {
		case "id", "timestamp":
			if dec.PeekKind() != '"' {
				if err := dec.SkipValue(); err != nil {
					return e, id, err
				}
				fail("/"+name, name+" must be a string")
				continue
			}
			tok, err := dec.ReadToken()
			if err != nil {
				return e, id, err
			}
			if name == "id" {
				id = tok.String()
			} else {
				ts, haveTS = tok.String(), true
			}
		case "content":
			if fast && semantic == nil {
				if kind, ok := peekKind(dec); ok {
					if decode := streamKinds[kind]; decode != nil {
						c, err := decode(dec)
						if err != nil {
							return e, id, errSlowPath
						}
						content, haveConten = c, true
						continue
					}
				}
			}
			v, err := dec.ReadValue()
			if err != nil {
				return e, id, err
			}
			haveConten = true
			if semantic != nil {
				continue
			}
			c, cerr := transcript.DecodeContent(v)
			if cerr != nil {
				var fe *transcript.FieldError
				if errors.As(cerr, &fe) {
					fail("/content"+fe.Pointer, fe.Msg)
				} else {
					fail("/content", cerr.Error())
				}
				continue
			}
			content = c
		default:
			if err := dec.SkipValue(); err != nil {
				return e, id, err
			}
			fail("/"+escapePointerToken(name), "unknown field")
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return e, id, err
	}
	if semantic != nil {
		return e, id, semantic
	}
	switch {
	case id == "":
		return e, id, &transcript.FieldError{Pointer: "/id", Msg: "id is missing or empty"}
	case !haveTS || ts == "":
		return e, id, &transcript.FieldError{Pointer: "/timestamp", Msg: "timestamp is missing"}
	case !haveConten:
		return e, id, &transcript.FieldError{Pointer: "/content", Msg: "content is missing"}
	}
	t, perr := transcript.ParseInstant(ts)
	if perr != nil {
		return e, id, &transcript.FieldError{Pointer: "/timestamp", Msg: perr.Error()}
	}
	e = transcript.Entry{ID: id, Content: content, Timestamp: t}
	if fast {
		// Streamed content has not been validated yet.
		if err := e.Validate(); err != nil {
			return transcript.Entry{}, id, errSlowPath
		}
	}
	return e, id, nil
}
