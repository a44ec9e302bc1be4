package engine

import "github.com/foliodev/folio/history"

// tailEntries is how many entries at the end of a conversation's document
// Open loads into the store. A turn writes only after them (new entries,
// and the open ones it settles), and what the engine reads back — the last
// entry for a failure to retry, an interrupted tail to settle — is among
// them.
const tailEntries = 64

// TailLoader is a conversation log an engine can open on; *history.Log is
// one.
type TailLoader interface {
	LoadTail(n int, widen *history.TailStart) (*history.Conversation, error)
}

// LoadTail loads what Open resumes from: the log's last tailEntries entries
// of the document and the model-facing messages since the last
// compaction. The messages come as history reads them: an older log's
// failures, which it holds only as entries, are in them already
// (history/failmsg.go), so the window needs no entry before its last
// tailEntries.
func LoadTail(l TailLoader) (*history.Conversation, error) {
	return l.LoadTail(tailEntries, nil)
}

// Open continues the conversation l holds, like Resume, loading only what a
// turn needs: the model-facing messages since the last compaction and the
// end of the document (LoadTail): its last tailEntries entries. The
// entries before them stay on disk (transcript.Document.Elided counts
// them); every record of the log is still read and checked. New entry IDs
// come from the store's own namespace, so they cannot repeat an entry that
// was not loaded.
//
// The engine's saver should be the same log, so its saves continue from
// the tail. Reading the whole document (a terminal resuming a conversation
// shows all of it) is history.Log.Load followed by Resume.
func (e *Engine) Open(l TailLoader) (*history.Conversation, error) {
	conv, err := LoadTail(l)
	if err != nil {
		return nil, err
	}
	if err := e.Resume(conv.Document, conv.Messages); err != nil {
		return nil, err
	}
	return conv, nil
}
