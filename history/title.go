package history

import (
	"strings"
	"unicode/utf8"

	"github.com/foliodev/folio/message"
)

// derivedTitleRunes is how long a title taken from the first user message
// may be, as Jazz cuts it.
const derivedTitleRunes = 48

// DisplayTitle is the title a listing shows: the explicit title (the newest
// meta title, else the header's) when there is one, else the first user
// message on one line, cut to 48 characters with an ellipsis. The text the
// person typed is used where Jazz stored it apart from the model-facing
// content (memorySource). Empty when there is nothing to name it by.
func DisplayTitle(explicit string, msgs []message.Message) string {
	if t := strings.TrimSpace(explicit); t != "" {
		return t
	}
	for _, m := range msgs {
		if m.Role != message.User {
			continue
		}
		line := strings.Join(strings.Fields(m.Typed()), " ")
		if utf8.RuneCountInString(line) <= derivedTitleRunes {
			return line
		}
		r := []rune(line)[:derivedTitleRunes-1]
		return strings.TrimRight(string(r), " ") + "…"
	}
	return ""
}
