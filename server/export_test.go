package server

import (
	"context"
	"time"

	"github.com/coder/websocket"
)

// Test seams: what tests reach that programs do not.

// SnapshotDir is the folder holding the server's snapshot files.
func (s *Server) SnapshotDir() string { return s.snapDir }

// setOnConnClosed installs the test hook told when a connection finished
// releasing, with the code it was closed with.
func (s *Server) setOnConnClosed(f func(websocket.StatusCode)) {
	s.mu.Lock()
	s.onConnClosed = f
	s.mu.Unlock()
}

// testTurns is a server's own engines as tests drive them.
type testTurns struct {
	s     *Server
	hooks *turnsHooks // set before the first command
}

// engines is s's own engines (Options.Turns) for a test.
func (s *Server) engines() *testTurns { return &testTurns{s: s, hooks: &s.turns.hooks} }

func (t *testTurns) forget(id string)        { t.s.forgetEngine(id) }
func (t *testTurns) closeIdle(now time.Time) { t.s.closeIdle(now) }
func (t *testTurns) Do(ctx context.Context, cmd Command) (Receipt, error) {
	return t.s.runTurn(ctx, cmd)
}
