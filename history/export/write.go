package export

import (
	"fmt"
	"io"
	"time"

	"github.com/foliodev/folio/history"
)

// Write exports c in format ("jazz" or "markdown") to w and returns what
// the jazz format mapped. It is what `folio log export` runs.
func Write(w io.Writer, c *history.Conversation, format string, loc *time.Location) ([]Mapped, error) {
	switch format {
	case "jazz":
		return jazz(w, c)
	case "markdown", "md":
		return nil, markdown(w, c, loc)
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownFormat, format)
}
