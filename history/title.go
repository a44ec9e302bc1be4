package history

import (
	"strings"

	"github.com/foliodev/folio/transcript"
)

// titleRunes is how many characters of the first message a title keeps
// before it is cut with an ellipsis.
const titleRunes = 60

// FirstMessageTitle is the title a new conversation gets: the first line of
// its first user message, cut to 60 characters with "…" after a longer one.
// ok is false while the document has no user message yet. The terminal and
// the server both title conversations with it, so a conversation is named the
// same way wherever it was started.
func FirstMessageTitle(doc transcript.Document) (title string, ok bool) {
	for _, e := range doc.All() {
		if u, isUser := e.Content.(transcript.User); isUser {
			title = strings.TrimSpace(u.Text)
			if i := strings.IndexByte(title, '\n'); i >= 0 {
				title = title[:i]
			}
			if r := []rune(title); len(r) > titleRunes {
				title = string(r[:titleRunes]) + "…"
			}
			return title, true
		}
	}
	return "", false
}
