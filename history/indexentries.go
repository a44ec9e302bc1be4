package history

import (
	"os"

	"github.com/foliodev/folio/transcript"
)

// Entries returns entries lo..hi (hi exclusive) of d, read from log (the
// open log file d's index describes) at the byte ranges the index gives,
// and decoded as the reader decodes them. It costs the refs and the bytes
// of those entries, not the log: a terminal pages a conversation with it,
// and folio log show prints one part after another.
func (d *IndexDoc) Entries(log *os.File, lo, hi int) ([]transcript.Entry, error) {
	refs, err := d.Refs(lo, hi)
	if err != nil {
		return nil, err
	}
	t := &tailRead{f: log, ix: d.ix}
	return t.decode(refs)
}

// Settled is how many of d's entries are settled; the ones after them (the
// provisional tail, Len() - Settled()) are open.
func (d *IndexDoc) Settled() int { return d.br.count }

// Problems is how many problems (rejected lines and records) the log had
// as of the index's commit, as Conversation.Problems counts them.
func (ix *Index) Problems() int { return ix.st.problems }
