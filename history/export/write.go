package export

import (
	"fmt"
	"io"
	"time"

	"github.com/foliodev/folio/history"
)

// Write exports c in format ("jazz", "markdown" or "html") to w and
// returns what the jazz format mapped. It is what `folio log export` runs
// for a log it reads whole.
func Write(w io.Writer, c *history.Conversation, format string, loc *time.Location) ([]Mapped, error) {
	switch format {
	case "jazz":
		return jazz(w, c)
	case "markdown", "md":
		return nil, markdown(w, c, loc)
	case "html":
		return nil, HTML(w, c)
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownFormat, format)
}
