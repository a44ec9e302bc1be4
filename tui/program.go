package tui

import (
	"context"
	"errors"

	tea "charm.land/bubbletea/v2"
)

// Chat runs the chat program until the person quits or ctx ends. Extra
// Bubble Tea options (input, output, window size) come after folio's own,
// so tests can point the program at buffers.
func Chat(ctx context.Context, o Options, extra ...tea.ProgramOption) error {
	app := NewApp(o)
	defer app.Close()
	opts := []tea.ProgramOption{tea.WithContext(ctx)}
	if o.Theme.Plain() {
		opts = append(opts, tea.WithColorProfile(o.Theme.Profile))
	}
	p := tea.NewProgram(app, append(opts, extra...)...)
	_, err := p.Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}
