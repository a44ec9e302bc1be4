//go:build unix

package tui

import (
	"os"
	"os/signal"
	"syscall"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"
)

// watchResize sends the program a WindowSizeMsg whenever the terminal out
// changes size. The classic view needs it because Bubble Tea, which does
// not own its output, does not watch the size.
func watchResize(out *os.File, p *tea.Program) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGWINCH)
	done := make(chan struct{})
	go func() {
		// The size may have changed between the program's first
		// measurement and signal.Notify; measure once more.
		if w, h, err := term.GetSize(out.Fd()); err == nil {
			p.Send(tea.WindowSizeMsg{Width: w, Height: h})
		}
		for {
			select {
			case <-ch:
				if w, h, err := term.GetSize(out.Fd()); err == nil {
					p.Send(tea.WindowSizeMsg{Width: w, Height: h})
				}
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(ch); close(done) }
}
