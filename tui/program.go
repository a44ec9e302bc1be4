package tui

import (
	"context"
	"errors"
	"io"
	"os"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/term"
)

// Terminal modes the classic view sets itself, since Bubble Tea does not
// draw it: bracketed paste, key disambiguation (so shift+enter is told
// apart from enter where the terminal supports it), and a hidden cursor
// (the editor draws its own).
const (
	classicEnter = "\x1b[?2004h\x1b[>1u\x1b[?25l"
	classicLeave = "\x1b[?2004l\x1b[<u\x1b[?25h"
)

// Chat runs the chat program until the person quits or ctx ends.
//
// The fullscreen view is a Bubble Tea program on the alternate screen. The
// classic view uses Bubble Tea for input only and writes its frames itself
// through Inline, so lines printed into scrollback and redraws of the live
// region go out in one ordered stream. Extra Bubble Tea options (input,
// output, window size) come after folio's own, so tests can point the
// program at buffers.
func Chat(ctx context.Context, o Options, in *os.File, out *os.File, extra ...tea.ProgramOption) error {
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(in)}
	switch {
	case o.Theme.Plain():
		opts = append(opts, tea.WithColorProfile(o.Theme.Profile))
	case out == os.Stdout && !o.Classic:
		// Bubble Tea would detect the color profile of out again, and
		// inside tmux detecting it runs `tmux info` (tens of milliseconds
		// to the first screen). Lip Gloss detected it for standard output
		// when the program started, from the same environment: reuse that.
		opts = append(opts, tea.WithColorProfile(lipgloss.Writer.Profile))
	}
	if o.Classic {
		o.Output = out
		opts = append(opts, tea.WithOutput(io.Discard))
		if w, h, err := term.GetSize(out.Fd()); err == nil {
			opts = append(opts, tea.WithWindowSize(w, h))
		}
		io.WriteString(out, classicEnter)
		if !o.Theme.Plain() {
			// Ask for the background color; the reply arrives as input
			// and Bubble Tea hands it over as a BackgroundColorMsg.
			io.WriteString(out, "\x1b]11;?\x07")
		}
		defer io.WriteString(out, classicLeave)
	} else {
		opts = append(opts, tea.WithOutput(out))
	}
	app := NewApp(o)
	defer app.Close()
	p := tea.NewProgram(app, append(opts, extra...)...)
	if o.Classic {
		stop := watchResize(out, p)
		defer stop()
	}
	_, err := p.Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}
