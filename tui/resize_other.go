//go:build !unix

package tui

import (
	"os"

	tea "charm.land/bubbletea/v2"
)

// watchResize does nothing where there is no SIGWINCH; the classic view
// keeps the size it started with.
func watchResize(*os.File, *tea.Program) (stop func()) { return func() {} }
