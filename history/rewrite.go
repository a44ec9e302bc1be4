package history

import (
	"time"

	"github.com/foliodev/folio/transcript"
	"github.com/go-json-experiment/json/jsontext"
)

// UpgradeResult says what Upgrade did.
type UpgradeResult struct {
	// From is the version the log had; Upgraded is false when it was
	// already version 3 (or did not exist) and nothing was written.
	From     int
	Upgraded bool
	// Records counts the UI records rewritten as version 3; Kept counts
	// the other lines carried over byte for byte.
	Records, Kept int
}

// Upgrade rewrites a version 2 log as version 3, atomically: the header
// gets version 3, each readable legacy UI record becomes a version 3 record
// whose entries keep the IDs the reader gave them (legacy:{line}:{entry}),
// and every other line (messages, meta, rewrite, unknown and unreadable
// records, rejected UI records) is kept byte for byte. Line positions do not
// change, so the IDs stay what they were. Upgrading a version 3 log is a
// no-op.
func (l *Log) Upgrade() (UpgradeResult, error) {
	if l.closed {
		return UpgradeResult{}, ErrClosed
	}
	st, data, err := l.read(true)
	if err != nil || data == nil {
		return UpgradeResult{From: Version}, err
	}
	res := UpgradeResult{From: st.version}
	if st.version != 2 {
		return res, nil
	}
	out, recs, kept := l.rebuild(st, data, nil)
	res.Records, res.Kept, res.Upgraded = recs, kept, true
	return res, l.replace(out)
}

// CompactResult says what Compact did.
type CompactResult struct {
	// Dropped counts superseded UI records removed.
	Dropped int
	// Before and After are the file sizes in bytes.
	Before, After int64
	// Upgraded is true when the log was version 2 and was upgraded too.
	Upgraded bool
}

// Compact drops the UI records that the last accepted ui-transcript
// superseded, and ui-open tails that a later UI record superseded,
// atomically. The current document, every message, meta and
// rewrite record, and every unknown, unreadable or rejected line are kept
// byte for byte. A version 2 log is upgraded in the same rewrite. When
// nothing would change, nothing is written.
func (l *Log) Compact() (CompactResult, error) {
	if l.closed {
		return CompactResult{}, ErrClosed
	}
	st, data, err := l.read(true)
	if err != nil || data == nil {
		return CompactResult{}, err
	}
	drop := make([]bool, len(st.lines))
	dropped := 0
	// Supersession is per branch. Walking backwards, a fork of branch P
	// needs P's records before it as they were, so crossing it starts P's
	// bookkeeping afresh.
	type seen struct{ snapshot, ui bool }
	by := map[string]*seen{}
	of := func(b string) *seen {
		if by[b] == nil {
			by[b] = &seen{}
		}
		return by[b]
	}
	for i := len(st.lines) - 1; i > 0; i-- {
		li := st.lines[i]
		if li.kind == lineBranch && li.accepted {
			*of(branchKey(li.parent)) = seen{}
			continue
		}
		ui := li.kind == lineUITranscript || li.kind == lineUIAppend || li.kind == lineUIOpen
		if !ui || !li.accepted {
			continue
		}
		s := of(branchKey(li.branch))
		if s.snapshot || (li.kind == lineUIOpen && s.ui) {
			drop[i] = true
			dropped++
		}
		s.ui = true
		s.snapshot = s.snapshot || li.kind == lineUITranscript
	}
	res := CompactResult{Dropped: dropped, Before: int64(len(data)), After: int64(len(data)), Upgraded: st.version == 2}
	if dropped == 0 && st.version != 2 && st.terminated {
		return res, nil
	}
	out, _, _ := l.rebuild(st, data, drop)
	res.After = int64(len(out))
	return res, l.replace(out)
}

// rebuild writes the log anew: the header as version 3, legacy UI records
// converted, the lines marked in drop removed, and every other line as it
// was.
func (l *Log) rebuild(st *reader, data []byte, drop []bool) (out []byte, converted, kept int) {
	out = make([]byte, 0, len(data)+len(data)/8)
	h := l.header
	h.Version = Version
	if h.StartedAt.IsZero() || (st.version == 2 && h.StartedAt.Equal(time.UnixMilli(0))) {
		h.StartedAt = firstInstant(st)
	}
	for i, li := range st.lines {
		if i == 0 {
			if st.version == 2 {
				out = appendHeader(out, h)
			} else {
				out = append(append(out, data[li.start:li.end]...), '\n')
			}
			continue
		}
		if i < len(drop) && drop[i] {
			continue
		}
		ui := li.kind == lineUITranscript || li.kind == lineUIAppend
		if ui && li.accepted && st.version == 2 {
			typ := TypeUIAppend
			if li.kind == lineUITranscript {
				typ = TypeUITranscript
			}
			entries := li.legacy
			// Entries were validated when decoded, so encoding cannot fail.
			// The record keeps its at as written, readable or not, so the
			// upgrade changes no instant anything shows.
			if li.hasAt {
				out = append(out, `{"type":"`...)
				out = append(out, typ...)
				out = append(out, `","at":`...)
				out, _ = jsontext.AppendQuote(out, li.atText)
			} else {
				out = appendRecordStart(out, typ, li.at)
			}
			out, _ = appendUIRecordAt(out, func(yield func(transcript.Entry) bool) {
				for _, e := range entries {
					if !yield(e) {
						return
					}
				}
			})
			converted++
			continue
		}
		out = append(append(out, data[li.start:li.end]...), '\n')
		kept++
	}
	return out, converted, kept
}

// firstInstant is the earliest record time, for a legacy header that had
// no readable startedAt.
func firstInstant(st *reader) time.Time {
	var first time.Time
	for _, li := range st.lines {
		if !li.at.IsZero() && (first.IsZero() || li.at.Before(first)) {
			first = li.at
		}
	}
	if first.IsZero() {
		return time.UnixMilli(0).UTC()
	}
	return first
}

// replace installs a rewritten log and reloads the writer's view of it.
func (l *Log) replace(out []byte) error {
	if err := l.m.Replace(out); err != nil {
		return err
	}
	l.wrote()
	_, _, err := l.read(false)
	return err
}

// branchKey names main "" as lineInfo does, whichever way it is spelled.
func branchKey(b string) string {
	if b == Main {
		return ""
	}
	return b
}
