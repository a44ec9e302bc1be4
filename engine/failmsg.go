package engine

import (
	"slices"
	"strings"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// Failures in the model's context. When a turn fails, the person sees the
// partial answer and a failure notice; the model must see the same, or the
// next turn answers as if nothing had happened. So a failed step adds one
// assistant message: the partial text, then a short statement of the
// failure.
//
// Logs written before that carry a failure only in their entries, in two
// shapes:
//
//   - folio's own: a failure entry ends the turn, and the messages hold the
//     turn's prompt but no failure message;
//   - Jazz's: an error (or warning) notice ends the turn, and the messages
//     do not hold the turn at all, prompt included, because Jazz keeps a
//     failed turn out of its messages and shows the error as a notice.
//
// Resume recognises both (legacyFailures) and sends the missing messages
// with every request, at the place the turn held (spliced). They are not
// added to the engine's messages, so nothing is written for them: the log
// stays as it was, and reading it again recognises the same failures again,
// once each.

const failurePrefix = "[This reply failed: "

// failureMessage is the assistant message for a reply that failed after
// partial text.
func failureMessage(partial, headline string) message.Message {
	s := failurePrefix + strings.TrimSuffix(strings.TrimSpace(headline), ".") + ".]"
	if partial = strings.TrimRight(partial, "\n"); partial != "" {
		s = partial + "\n\n" + s
	}
	return message.Message{Role: message.Assistant, Content: s}
}

// isFailureMessage reports whether m is a failure message.
func isFailureMessage(m message.Message) bool {
	return m.Role == message.Assistant && strings.Contains(m.Content, failurePrefix) && strings.HasSuffix(m.Content, ".]")
}

// splice is model-facing messages to send before msgs[at] (at == len(msgs):
// after the last one).
type splice struct {
	at   int
	msgs []message.Message
}

// spliced returns msgs with the splices inserted; msgs itself when there
// are none.
func spliced(msgs []message.Message, sp []splice) []message.Message {
	if len(sp) == 0 {
		return msgs
	}
	n := len(msgs)
	for _, s := range sp {
		n += len(s.msgs)
	}
	out := make([]message.Message, 0, n)
	next := 0
	for _, s := range sp {
		at := min(s.at, len(msgs))
		out = append(out, msgs[next:at]...)
		out = append(out, s.msgs...)
		next = at
	}
	return append(out, msgs[next:]...)
}

// prompt is a user or steering entry of a document: each starts a run of
// entries its messages answer.
type prompt struct {
	entry int    // index in the document
	text  string // what the person typed
	user  bool   // a user entry, not a steer
	msg   int    // index of its user message, or -1 when the messages lack it
}

// legacyFailures finds the failed turns doc shows whose failure msgs do not
// hold, and returns the messages that say so, in order. Prompts are paired
// with user messages from the end (a compacted log has lost its oldest
// messages, never its newest): a user message answers a prompt when it
// starts with the prompt's text, as folio's and Jazz's do (attachments and
// tags are appended after it). A compaction's summary message, first in
// msgs, answers no prompt (isSummary).
func legacyFailures(doc transcript.Document, msgs []message.Message) []splice {
	var ps []prompt
	for i := range doc.Len() {
		if p, ok := promptOf(doc.At(i), i); ok {
			ps = append(ps, p)
		}
	}
	pair(ps, msgs)

	var out []splice
	for p, pr := range ps {
		end := doc.Len()
		if p+1 < len(ps) {
			end = ps[p+1].entry
		}
		partial, headline, ok := failedTurn(doc, pr.entry+1, end, pr.msg < 0)
		if !ok {
			continue
		}
		if pr.msg >= 0 {
			// The messages hold the turn: add the failure after its last
			// message unless one is there already.
			to := len(msgs)
			if i := slices.IndexFunc(msgs[pr.msg+1:], func(m message.Message) bool { return m.Role == message.User }); i >= 0 {
				to = pr.msg + 1 + i
			}
			if slices.ContainsFunc(msgs[pr.msg+1:to], isFailureMessage) {
				continue
			}
			if last := msgs[to-1]; last.Role == message.Assistant && strings.TrimSpace(last.Content) == strings.TrimSpace(partial) {
				partial = "" // saved already, as an ordinary answer
			}
			out = append(out, splice{at: to, msgs: []message.Message{failureMessage(partial, headline)}})
			continue
		}
		// The messages lack the whole turn (Jazz's failed turns). A
		// command typed into Jazz ("/info", "!ls") never reached the model.
		if !pr.user || isJazzCommand(pr.text) {
			continue
		}
		at, earlier := len(msgs), false
		for q := range ps {
			if q < p && ps[q].msg >= 0 {
				earlier = true
			}
			if q > p && ps[q].msg >= 0 {
				at = ps[q].msg
				break
			}
		}
		// Before the first paired prompt, the turn has a place only if
		// nothing was compacted away there.
		if !earlier && at != 0 {
			continue
		}
		out = append(out, splice{at: at, msgs: []message.Message{
			message.Text(message.User, pr.text), failureMessage(partial, headline)}})
	}
	return out
}

// promptOf returns e, entry i of a document, as a prompt, if it is one.
func promptOf(e transcript.Entry, i int) (prompt, bool) {
	switch c := e.Content.(type) {
	case transcript.User:
		return prompt{entry: i, text: c.Text, user: true, msg: -1}, true
	case transcript.Steering:
		return prompt{entry: i, text: c.Text, msg: -1}, true
	}
	return prompt{}, false
}

// promptKinds are the kinds of the prompts: what legacyFailures pairs
// with user messages.
var promptKinds = []transcript.Kind{transcript.KindUser, transcript.KindSteering}

// summaryLead starts the user message compaction puts first in the
// messages (maybeCompact).
const summaryLead = "Summary of the earlier conversation:\n\n"

// isSummary reports whether msgs[k] is the summary a compaction left: the
// first message, a user message starting with summaryLead. It stands for
// the turns it covers and answers no prompt, so pairing stops at it
// instead of trying every older prompt against its text.
func isSummary(msgs []message.Message, k int) bool {
	return k == 0 && msgs[0].Role == message.User && strings.HasPrefix(msgs[0].Content, summaryLead)
}

// pair pairs prompts with the user messages of msgs from the end, setting
// each paired prompt's msg; it returns how many user messages are left
// unpaired (the oldest ones).
func pair(ps []prompt, msgs []message.Message) int {
	var users []int
	for k, m := range msgs {
		if m.Role == message.User && !isSummary(msgs, k) {
			users = append(users, k)
		}
	}
	u := len(users) - 1
	for p := len(ps) - 1; p >= 0 && u >= 0; p-- {
		c := msgs[users[u]].Content
		if strings.HasPrefix(c, ps[p].text) && (ps[p].text != "" || c == "") {
			ps[p].msg = users[u]
			u--
		}
	}
	return u + 1
}

// pairedStart returns the index of the first entry legacyFailures needs
// of a document whose prompts at index from or later (with their indices)
// are given: the first prompt paired with a user message of msgs, or an
// earlier prompt whose failed turn, which msgs lack, would be placed
// before it (when its message is the first). Failures before it cannot
// reach a request. With nothing paired it is the first prompt whose turn
// could be placed, or the end. more says the prompts before from could
// change the answer: a user message is still unpaired, or the first
// paired one is msgs' first (history.TailStart).
func pairedStart(picked []history.Picked, from int, msgs []message.Message) (start int, more bool) {
	ps := make([]prompt, 0, len(picked))
	for _, p := range picked {
		if pr, ok := promptOf(p.Entry, p.Index); ok {
			ps = append(ps, pr)
		}
	}
	if pair(ps, msgs) > 0 && from > 0 {
		return 0, true
	}
	first, at := len(ps), len(msgs)
	for k, p := range ps {
		if p.msg >= 0 {
			first, at = k, p.msg
			break
		}
	}
	if at == 0 {
		if from > 0 {
			return 0, true
		}
		for _, p := range ps[:first] {
			if p.user && !isJazzCommand(p.text) {
				return p.entry, false
			}
		}
	}
	if first < len(ps) {
		return ps[first].entry, false
	}
	return 1 << 62, false
}

// failedTurn reports whether the entries [from, to) of one turn end in a
// failure nothing answered after: a failure entry, or, with notices, an
// error or warning notice (what Jazz shows for a failed request; only a
// turn the messages lack counts it, since a turn that went through may
// show one too). It returns the partial answer shown before the failure
// and the failure's headline.
func failedTurn(doc transcript.Document, from, to int, notices bool) (partial, headline string, ok bool) {
	at := -1
	for i := from; i < to; i++ {
		switch c := doc.At(i).Content.(type) {
		case transcript.Failure:
			at, headline = i, c.Headline
			if headline == "" {
				headline = "the model request failed (" + c.Reason + ")"
			}
		case transcript.Notice:
			if notices && (c.Tone == transcript.ToneError || c.Tone == transcript.ToneWarn) && strings.TrimSpace(c.Text) != "" && at < 0 {
				at, headline = i, c.Text
			}
		case transcript.Agent, transcript.Tool:
			at = -1 // answered after the failure (a retry that went through)
		}
	}
	if at < 0 {
		return "", "", false
	}
	for i := at - 1; i >= from; i-- {
		c := doc.At(i).Content
		if ag, ok := c.(transcript.Agent); ok {
			partial = ag.Markdown
			break
		}
		if c.Kind() != transcript.KindReasoning && c.Kind() != transcript.KindNotice {
			break
		}
	}
	return partial, headline, true
}

// isJazzCommand reports whether text is one line starting with / or !,
// which Jazz runs itself instead of sending it to the model.
func isJazzCommand(text string) bool {
	t := strings.TrimSpace(text)
	return (strings.HasPrefix(t, "/") || strings.HasPrefix(t, "!")) && !strings.Contains(t, "\n")
}
