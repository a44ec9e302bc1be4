package history

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/foliodev/folio/transcript"
)

// RemovedSuffix is appended to a log's path to name the file Repair moves
// the lines it cannot keep to.
const RemovedSuffix = ".removed"

// RemovedPath is the file beside the log at logPath that Repair appends the
// lines it takes out of the log to.
func RemovedPath(logPath string) string { return logPath + RemovedSuffix }

// RepairResult says what Repair did.
type RepairResult struct {
	// Moved lists the lines taken out of the log (as they were numbered in
	// it) with the first problem the reader found on each; a torn last
	// line is among them.
	Moved []Problem
	// MovedBytes counts the bytes appended to Side; Kept counts the lines
	// left in the log, the header included.
	MovedBytes int64
	Kept       int
	// Side is the file the lines were moved to ("" when nothing moved).
	Side string
	// Before and After are the log's sizes in bytes.
	Before, After int64
}

// repairHook, when set (tests), is called at each step of a repair that a
// crash could interrupt: "side" once the moved lines are durable in the side
// file, "replaced" once the new log is in place.
var repairHook func(step string)

// Repair takes out of the log every line the reader cannot keep (a torn
// last line, a line that is not a record, a record it rejected) and appends
// those lines, byte for byte, to RemovedPath, so a log a crash or a foreign
// edit damaged reads clean again and nothing is lost. Every record the
// reader accepted stays as it was, in order, and so does a record of a type
// this folio does not know (a newer writer's). The side file is made durable
// first, then the new log replaces the old one atomically: a crash leaves
// the old log or the new one, never a mix, and never a moved line only in
// the log that was replaced. Before anything is written, the new log is
// read back and must give the same conversation with no problems but
// unknown records; otherwise Repair refuses and changes nothing. A log with
// nothing to take out is left alone.
func (l *Log) Repair() (RepairResult, error) {
	if l.closed {
		return RepairResult{}, ErrClosed
	}
	fm, ok := l.m.(*fileMedium)
	if !ok {
		return RepairResult{}, errors.New("history: repair works on log files only")
	}
	st, data, err := l.read(true)
	if err != nil || data == nil {
		return RepairResult{}, err
	}
	res := RepairResult{Before: int64(len(data)), After: int64(len(data))}
	bad := map[int]Problem{}
	for _, p := range st.conv.Problems {
		if p.Kind == ProblemRejected || p.Kind == ProblemUnreadable {
			if _, seen := bad[p.Line]; !seen {
				bad[p.Line] = p
			}
		}
	}
	torn := -1 // the torn last line's index in st.lines, if any
	if n := len(st.lines); n > 0 && st.lines[n-1].kind == lineTorn {
		torn = n - 1
	}
	if len(bad) == 0 && torn < 0 {
		return res, nil
	}
	out := make([]byte, 0, len(data))
	var side []byte
	for i, li := range st.lines {
		line := data[li.start:li.end]
		p, ok := bad[i+1]
		switch {
		case i == torn:
			p, ok = Problem{Kind: ProblemTorn, Line: i + 1, Entry: -1, Msg: "incomplete last line (an interrupted write)"}, true
		case i == 0:
			ok = false // the header: a log without one is not read at all
		}
		if ok {
			side = append(append(side, line...), '\n')
			res.Moved = append(res.Moved, p)
			continue
		}
		out = append(append(out, line...), '\n')
		res.Kept++
	}
	if err := sameConversation(st.conv, out); err != nil {
		return RepairResult{Before: res.Before, After: res.Before}, fmt.Errorf("history: %s: not repaired, nothing changed: %w", fm.path, err)
	}
	res.Side, res.MovedBytes, res.After = RemovedPath(fm.path), int64(len(side)), int64(len(out))
	if err := appendDurably(res.Side, side); err != nil {
		return RepairResult{Before: res.Before, After: res.Before}, fmt.Errorf("history: %s: not repaired, nothing changed: %w", fm.path, err)
	}
	if repairHook != nil {
		repairHook("side")
	}
	if err := l.replace(out); err != nil {
		return res, err
	}
	if repairHook != nil {
		repairHook("replaced")
	}
	return res, nil
}

// sameConversation reads the repaired log out and checks that it says what
// was read before (want) on every branch, with no problem left but unknown
// record types.
func sameConversation(want *Conversation, out []byte) error {
	st, err := parse(out, false)
	if err != nil {
		return err
	}
	got := st.conv
	for _, p := range got.Problems {
		if p.Kind != ProblemUnknown {
			return fmt.Errorf("the repaired log would still have a problem: %v", p)
		}
	}
	if got.Head != want.Head || len(got.Branches) != len(want.Branches) || got.Title != want.Title {
		return errors.New("the repaired log would have other branches or another title")
	}
	for _, b := range want.Branches {
		wd, wm, err := want.Branch(b.ID)
		if err != nil {
			return err
		}
		if b.ID == want.Head {
			wm = stored(wm, want.synth) // as the log holds them (failmsg.go)
		}
		gd, gm, err := got.Branch(b.ID)
		if err != nil {
			return err
		}
		if !sameDocument(gd, wd) || !slices.EqualFunc(gm, wm, equalMessage) {
			return fmt.Errorf("the repaired log would read differently on branch %s", b.ID)
		}
	}
	return nil
}

// sameDocument reports whether two documents hold the same entries.
func sameDocument(a, b transcript.Document) bool {
	if a.Len() != b.Len() {
		return false
	}
	for i := range a.Len() {
		if a.Fingerprint(i) != b.Fingerprint(i) {
			return false
		}
	}
	return true
}

// appendDurably appends data to the file at path (created 0600 if need
// be) and makes it and its folder entry durable.
func appendDurably(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}
