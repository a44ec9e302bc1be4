package cli

import (
	"os"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/transcript"
	"github.com/foliodev/folio/tui"
)

// The chat's reads of the current conversation's log, for the views: pages
// before what the engine holds, and where a search or find hit is. They
// read the log file through its page index whether the chat owns the
// conversation or is attached to its owner.

// Page reads entries lo..hi of the current conversation through its log's
// page index (tui.Pager): the fullscreen view scrolling back before what
// the engine loaded. Each read opens the index as of the log's size now,
// so a page costs its entries, and what the engine saved since is seen.
func (s *chatSession) Page(lo, hi int) ([]transcript.Entry, []int, error) {
	s.mu.Lock()
	path := s.path
	s.mu.Unlock()
	return history.HeadEntries(path, lo, hi)
}

var _ tui.Finder = (*chatSession)(nil)

// Find returns the position of entry id in the current conversation's
// head, through its log's page index (tui.Finder): a search hit the
// engine's tail does not hold.
func (s *chatSession) Find(id string) (int, error) {
	s.mu.Lock()
	path := s.path
	s.mu.Unlock()
	find, done, err := positions(path)
	if err != nil {
		return -1, err
	}
	defer done()
	return find(id)
}

var _ tui.PageFinder = (*chatSession)(nil)

// PageAround reads the page of n entries around entry id of the current
// conversation, before position limit (tui.PageFinder): one look at the
// log's page index finds the entry through its ID table and then reads
// the index near it, so a search or find hit far back costs what a page
// near the end does.
func (s *chatSession) PageAround(id string, n, limit int) (lo, at int, es []transcript.Entry, sizes []int, err error) {
	s.mu.Lock()
	path := s.path // s.log is nil while attached to another process
	s.mu.Unlock()
	return history.HeadEntriesAround(path, id, n, limit)
}

// positions opens the page index of the log at path as of its size now
// and returns a lookup of entries' positions in its head (-1 for an entry
// it does not have); done closes what it opened.
func positions(path string) (find func(id string) (int, error), done func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	ix, err := history.OpenIndex(path, f, 0)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	done = func() { ix.Close(); f.Close() }
	d, err := ix.Document(ix.Head())
	if err != nil {
		done()
		return nil, nil, err
	}
	return d.Find, done, nil
}

// showCommand is the command that prints the current conversation whole,
// for the line that counts the entries a resume did not print.
func (s *chatSession) showCommand() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return "folio log show " + s.id
}
