package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/store/pgstore"
)

// Keeping current at every save. A host that writes logs installs
// Follow's option on each Log it opens (history.OnWrite); after every
// durable write the Log hands the conversation's ID to the data folder's
// follower and returns: the save never waits for the index. The follower's
// goroutine updates the index from where it last stopped (Index.Update,
// which costs what the save appended), coalescing the saves that come
// while it works, and closes the index again when no save came for
// followIdle. Searches still catch up first, for what other processes
// wrote. A data folder that has no index yet gets none from saves: its
// first search builds it, and saves follow it from then on.

// followIdle is how long a follower keeps the index open after the last
// save it was told of.
const followIdle = 5 * time.Second

// Follow returns the history.Option that keeps the search index of the data
// folder dataDir current with every write of the Log it is given to.
func Follow(dataDir string) history.Option {
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	f := followerOf(dataDir, func() (Searcher, error) {
		// Only an index that exists is followed: a data folder nobody
		// searched gets none (its first search builds it).
		if _, err := os.Stat(Path(dataDir)); err != nil {
			return nil, nil
		}
		return Open(dataDir)
	})
	return history.OnWrite(f.saved)
}

// FollowStore is Follow for the logs of a PostgreSQL store, whose index
// lives in it (PGIndex): store is a *pgstore.Store or has one (a
// replica's Mirror); anything else gets an option that does nothing.
func FollowStore(store any) history.Option {
	st := pgStoreOf(store)
	if st == nil {
		return func(*history.Log) {}
	}
	f := followerOf(storeKey(st), func() (Searcher, error) { return OpenPostgres(st), nil })
	return history.OnWrite(f.saved)
}

func storeKey(st *pgstore.Store) string { return fmt.Sprintf("postgres %p", st) }

// FollowLog is Follow for the data folder the log at path is in; a log
// outside any data folder's conversations folder gets an option that does
// nothing.
func FollowLog(path string) history.Option {
	if data, ok := dataDirOf(path); ok {
		return Follow(data)
	}
	return func(*history.Log) {}
}

// dataDirOf finds the data folder holding the log at path:
// <data>/conversations/<id>.jsonl or <data>/conversations/<agent>/<id>.jsonl.
func dataDirOf(path string) (string, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	dir := filepath.Dir(abs)
	for range 2 {
		if filepath.Base(dir) == filepath.Base(history.ConversationsDir("")) {
			data := filepath.Dir(dir)
			return data, history.ConversationsDir(data) == dir
		}
		dir = filepath.Dir(dir)
	}
	return "", false
}

// follower updates one data folder's (or store's) index after saves.
type follower struct {
	// open opens the index, or returns nil when there is none to follow.
	open func() (Searcher, error)

	mu      sync.Mutex
	pending []string // conversation IDs saved and not yet indexed, in order
	running bool     // a goroutine is working through pending
	done    *sync.Cond
	// ix is the index while the goroutine keeps it open; idle closes it.
	ix   Searcher
	idle *time.Timer
	// updated counts the updates done, and err is the last one's error
	// (tests and benchmarks read them through Settle).
	updated int
	err     error
}

var followers = struct {
	sync.Mutex
	m map[string]*follower
}{m: map[string]*follower{}}

// followerOf returns the follower of key (a data folder's absolute path,
// or a store's key), made with open if there is none yet.
func followerOf(key string, open func() (Searcher, error)) *follower {
	followers.Lock()
	defer followers.Unlock()
	f := followers.m[key]
	if f == nil {
		f = &follower{open: open}
		f.done = sync.NewCond(&f.mu)
		followers.m[key] = f
	}
	return f
}

// saved is history.OnWrite's function: it only queues id.
func (f *follower) saved(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.pending {
		if p == id {
			return
		}
	}
	f.pending = append(f.pending, id)
	if !f.running {
		f.running = true
		go f.run()
	}
}

func (f *follower) run() {
	for {
		f.mu.Lock()
		if len(f.pending) == 0 {
			f.running = false
			if f.ix != nil {
				if f.idle == nil {
					f.idle = time.AfterFunc(followIdle, f.close)
				} else {
					f.idle.Reset(followIdle)
				}
			}
			f.done.Broadcast()
			f.mu.Unlock()
			return
		}
		id := f.pending[0]
		f.pending = f.pending[1:]
		if f.idle != nil {
			f.idle.Stop()
		}
		ix := f.ix
		f.mu.Unlock()
		var err error
		if ix == nil {
			ix, err = f.open()
		}
		if ix != nil && err == nil {
			err = ix.Update(context.Background(), id)
		}
		f.mu.Lock()
		if f.ix == nil && ix != nil {
			f.ix = ix
		}
		f.updated++
		f.err = err
		f.mu.Unlock()
	}
}

// close closes the index after followIdle without saves.
func (f *follower) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.running || f.ix == nil {
		return
	}
	f.ix.Close()
	f.ix = nil
}

// settleDir waits until every save the data folder's follower was told of is
// indexed, and returns how many updates it has done and the last one's
// error: for tests and benchmarks.
func settleDir(dataDir string) (updated int, err error) {
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	return settle(dataDir)
}

// settleStore is settleDir for a store FollowStore follows.
func settleStore(st *pgstore.Store) (updated int, err error) { return settle(storeKey(st)) }

func settle(key string) (int, error) {
	followers.Lock()
	f := followers.m[key]
	followers.Unlock()
	if f == nil {
		return 0, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.running {
		f.done.Wait()
	}
	return f.updated, f.err
}
