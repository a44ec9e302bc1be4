package history

import (
	"strings"
	"unicode/utf8"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
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

// SaveNaming saves doc and msgs like Save and, when titled is false, then
// names the conversation from its first user message (DisplayTitle): the
// one rule by which the terminal and the server title a new conversation.
// It reports whether the log has a title now. A title that could not be
// written does not fail the save (the document is saved either way): it
// is tried again on the next one.
func (l *Log) SaveNaming(doc transcript.Document, msgs []message.Message, titled bool) (bool, error) {
	if err := l.Save(doc, msgs); err != nil {
		return titled, err
	}
	if titled {
		return true, nil
	}
	if title := DisplayTitle("", msgs); title != "" {
		return l.SetTitle(title) == nil, nil
	}
	return false, nil
}
