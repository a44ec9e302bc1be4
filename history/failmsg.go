package history

import (
	"slices"
	"strings"
	"time"

	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// Failures in the model's messages. When a turn fails, the person sees the
// partial answer and a failure entry; the model must see the same, or the
// next turn answers as if nothing had happened. So folio's engine adds one
// assistant message for a failed reply: the partial text, then a short
// statement of the failure (FailureMessage).
//
// Logs written before that hold a failure only in their entries, in two
// shapes:
//
//   - folio's own: a failure entry ends the turn, and the messages hold the
//     turn's prompt but no failure message;
//   - Jazz's: an error (or warning) notice ends the turn, and the messages
//     do not hold the turn at all, prompt included, because Jazz keeps a
//     failed turn out of its messages and shows the error as a notice.
//
// A Log reads such a log into the one shape: the Messages of what Load,
// LoadTail and SetHead return hold the missing messages at the place the
// turn held, as if the log had them. Nothing is written for them; the log
// stays as it was, and reading it again finds the same failures, once
// each. Save knows them (they are part of what it compares against), so a
// writer appending to those messages appends only its own; a rewrite of
// the list (a compaction) writes the list it is given, them included.
// Read, Scanner and the exports give the messages as stored.

const failurePrefix = "[This reply failed: "

// FailureMessage is the assistant message that tells the model a reply
// failed: the partial answer shown before the failure (if any), then a
// short statement with the failure's headline.
func FailureMessage(partial, headline string) message.Message {
	s := failurePrefix + strings.TrimSuffix(strings.TrimSpace(headline), ".") + ".]"
	if partial = strings.TrimRight(partial, "\n"); partial != "" {
		s = partial + "\n\n" + s
	}
	return message.Message{Role: message.Assistant, Content: s}
}

// isFailureMessage reports whether m is a FailureMessage.
func isFailureMessage(m message.Message) bool {
	return m.Role == message.Assistant && strings.Contains(m.Content, failurePrefix) && strings.HasSuffix(m.Content, ".]")
}

// summaryLead starts the user message a compaction puts first in the
// messages (SummaryMessage).
const summaryLead = "Summary of the earlier conversation:\n\n"

// SummaryMessage is the user message that stands for the messages a
// compaction of the model's context summarized; it goes first in the list
// that replaces them.
func SummaryMessage(summary string) message.Message {
	return message.Text(message.User, summaryLead+summary)
}

// isSummary reports whether msgs[k] is the summary a compaction left: the
// first message, a user message starting with summaryLead. It stands for
// the turns it covers and answers no prompt, so pairing stops at it
// instead of trying every older prompt against its text.
func isSummary(msgs []message.Message, k int) bool {
	return k == 0 && msgs[0].Role == message.User && strings.HasPrefix(msgs[0].Content, summaryLead)
}

// prompt is a user or steering entry of a document: each starts a run of
// entries its messages answer.
type prompt struct {
	entry int    // index in the document
	text  string // what the person typed
	user  bool   // a user entry, not a steer
	msg   int    // index of its user message, or -1 when the messages lack it
}

// promptOf returns c, the content of entry i of a document, as a prompt, if
// it is one.
func promptOf(c transcript.Content, i int) (prompt, bool) {
	switch c := c.(type) {
	case transcript.User:
		return prompt{entry: i, text: c.Text, user: true, msg: -1}, true
	case transcript.Steering:
		return prompt{entry: i, text: c.Text, msg: -1}, true
	}
	return prompt{}, false
}

// isPromptKind reports whether entries of kind k are prompts.
func isPromptKind(k transcript.Kind) bool {
	return k == transcript.KindUser || k == transcript.KindSteering
}

// failureSource is a document as the failure rule reads it: kinds cheaply
// where the reader knows them, contents only of the entries it asks for.
// The three reads of a log each have one: the whole document, a light
// read's stubs, and the page index's refs (failmsg_read.go).
type failureSource interface {
	Len() int
	// prompts returns the prompts among entries [lo, hi), in order.
	prompts(lo, hi int) ([]prompt, error)
	kind(i int) (transcript.Kind, error)
	content(i int) (transcript.Content, error)
	// compactionBefore returns the index of the last compaction entry
	// before entry i, or -1.
	compactionBefore(i int) (int, error)
}

// splice is model-facing messages to send before msgs[at] (at == len(msgs):
// after the last one).
type splice struct {
	at   int
	msgs []message.Message
}

// failureSplices finds the failed turns of d whose failure msgs do not
// hold, and returns the messages that say so, in order. It reads the
// prompts from the end back, a growing stretch at a time, only as far as
// pairing them with msgs needs (failureStart), so what it costs follows
// the messages, not the document.
//
// When every user message is paired and the first paired one is msgs'
// first, a failed turn before it that the messages lack (Jazz's) has its
// place there only if nothing was compacted away: so the prompts it
// considers start after the last compaction entry before that prompt
// (the summary, or the rewrite without one, stands for what came before).
func failureSplices(d failureSource, msgs []message.Message) ([]splice, error) {
	n := d.Len()
	lo, hi := max(0, n-256), n
	var ps []prompt // the prompts of [lo, n)
	for {
		more, err := d.prompts(lo, hi)
		if err != nil {
			return nil, err
		}
		ps = append(more, ps...)
		start, again := failureStart(ps, lo, msgs)
		// The first paired prompt's message is msgs' first (and so every
		// user message is paired): the prompts before it count from the
		// last compaction before it on.
		if first := slices.IndexFunc(ps, func(p prompt) bool { return p.msg >= 0 }); first >= 0 && ps[first].msg == 0 {
			c, err := d.compactionBefore(ps[first].entry)
			if err != nil {
				return nil, err
			}
			if c >= 0 {
				if c+1 < lo {
					more, err := d.prompts(c+1, lo)
					if err != nil {
						return nil, err
					}
					ps, lo = append(more, ps...), c+1
				}
				k, _ := slices.BinarySearchFunc(ps, c+1, func(p prompt, at int) int { return p.entry - at })
				ps = ps[k:]
				start, again = failureStart(ps, 0, msgs)
			}
		}
		if !again || lo == 0 {
			k, _ := slices.BinarySearchFunc(ps, start, func(p prompt, at int) int { return p.entry - at })
			ps = ps[k:]
			break
		}
		hi, lo = lo, max(0, n-4*(n-lo)-256)
	}
	return legacyFailures(d, ps, msgs)
}

// legacyFailures is failureSplices over the prompts ps, the document's from
// a prompt failureStart chose on. Prompts are paired with user messages
// from the end (a compacted log has lost its oldest messages, never its
// newest): a user message answers a prompt when it starts with the
// prompt's text, as folio's and Jazz's do (attachments and tags are
// appended after it). A compaction's summary message, first in msgs,
// answers no prompt (isSummary).
func legacyFailures(d failureSource, ps []prompt, msgs []message.Message) ([]splice, error) {
	pair(ps, msgs)
	var out []splice
	for p, pr := range ps {
		end := d.Len()
		if p+1 < len(ps) {
			end = ps[p+1].entry
		}
		partial, headline, ok, err := failedTurn(d, pr.entry+1, end, pr.msg < 0)
		if err != nil {
			return nil, err
		}
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
			out = append(out, splice{at: to, msgs: []message.Message{FailureMessage(strings.Clone(partial), headline)}})
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
			message.Text(message.User, strings.Clone(pr.text)), FailureMessage(strings.Clone(partial), headline)}})
	}
	return out, nil
}

// pair pairs prompts with the user messages of msgs from the end, setting
// each paired prompt's msg (and every other one's to -1); it returns how
// many user messages are left unpaired (the oldest ones).
func pair(ps []prompt, msgs []message.Message) int {
	for i := range ps {
		ps[i].msg = -1
	}
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

// failureStart returns the index of the first entry legacyFailures needs
// of a document whose prompts at index from or later are ps: the first
// prompt paired with a user message of msgs, or an earlier prompt whose
// failed turn, which msgs lack, would be placed before it (when its
// message is the first). Failures before it cannot reach a request. With
// nothing paired it is the first prompt whose turn could be placed, or the
// end. more says the prompts before from could change the answer: a user
// message is still unpaired, or the first paired one is msgs' first.
func failureStart(ps []prompt, from int, msgs []message.Message) (start int, more bool) {
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
// and the failure's headline. It reads the contents of failures, of
// notices it may count and of the answer before the failure only.
func failedTurn(d failureSource, from, to int, notices bool) (partial, headline string, ok bool, err error) {
	at := -1
	for i := from; i < to; i++ {
		k, err := d.kind(i)
		if err != nil {
			return "", "", false, err
		}
		switch k {
		case transcript.KindFailure:
			c, err := d.content(i)
			if err != nil {
				return "", "", false, err
			}
			if f, ok := c.(transcript.Failure); ok {
				at, headline = i, f.Headline
				if headline == "" {
					headline = "the model request failed (" + f.Reason + ")"
				}
			}
		case transcript.KindNotice:
			if !notices || at >= 0 {
				continue
			}
			c, err := d.content(i)
			if err != nil {
				return "", "", false, err
			}
			if n, ok := c.(transcript.Notice); ok && (n.Tone == transcript.ToneError || n.Tone == transcript.ToneWarn) && strings.TrimSpace(n.Text) != "" {
				at, headline = i, n.Text
			}
		case transcript.KindAgent, transcript.KindTool:
			at = -1 // answered after the failure (a retry that went through)
		}
	}
	if at < 0 {
		return "", "", false, nil
	}
	for i := at - 1; i >= from; i-- {
		k, err := d.kind(i)
		if err != nil {
			return "", "", false, err
		}
		if k == transcript.KindAgent {
			c, err := d.content(i)
			if err != nil {
				return "", "", false, err
			}
			if ag, ok := c.(transcript.Agent); ok {
				partial = ag.Markdown
			}
			break
		}
		if k != transcript.KindReasoning && k != transcript.KindNotice {
			break
		}
	}
	return partial, headline, true, nil
}

// isJazzCommand reports whether text is one line starting with / or !,
// which Jazz runs itself instead of sending it to the model.
func isJazzCommand(text string) bool {
	t := strings.TrimSpace(text)
	return (strings.HasPrefix(t, "/") || strings.HasPrefix(t, "!")) && !strings.Contains(t, "\n")
}

// normalized returns msgs with the splices in, the instants of the result
// (an added message takes the instant of the message before it, or after
// it when it comes first), and the indices of the added messages in it.
// It returns msgs and at themselves when there are no splices.
func normalized(msgs []message.Message, at []time.Time, sp []splice) ([]message.Message, []time.Time, []int) {
	if len(sp) == 0 {
		return msgs, at, nil
	}
	n := len(msgs)
	for _, s := range sp {
		n += len(s.msgs)
	}
	out := make([]message.Message, 0, n)
	outAt := make([]time.Time, 0, n)
	var added []int
	instant := func(i int) time.Time {
		if i >= 0 && i < len(at) {
			return at[i]
		}
		return time.Time{}
	}
	next := 0
	for _, s := range sp {
		to := min(s.at, len(msgs))
		for i := next; i < to; i++ {
			out, outAt = append(out, msgs[i]), append(outAt, instant(i))
		}
		when := instant(to - 1)
		if to == 0 {
			when = instant(0)
		}
		for _, m := range s.msgs {
			added = append(added, len(out))
			out, outAt = append(out, m), append(outAt, when)
		}
		next = to
	}
	for i := next; i < len(msgs); i++ {
		out, outAt = append(out, msgs[i]), append(outAt, instant(i))
	}
	return out, outAt, added
}

// normalize puts the failures d shows but msgs lack into c's Messages
// (and MessageAt), remembering which messages it added. A document derived
// from the messages shows none.
func (c *Conversation) normalize(d failureSource) error {
	c.synth = nil
	if c.Derived {
		return nil
	}
	sp, err := failureSplices(d, c.Messages)
	if err != nil {
		return err
	}
	c.Messages, c.MessageAt, c.synth = normalized(c.Messages, c.MessageAt, sp)
	return nil
}

// stored returns msgs less the messages at the indices added (in order):
// what the log holds of a list a read normalized.
func stored(msgs []message.Message, added []int) []message.Message {
	if len(added) == 0 {
		return msgs
	}
	out := make([]message.Message, 0, len(msgs)-len(added))
	next := 0
	for _, i := range added {
		out = append(out, msgs[next:i]...)
		next = i + 1
	}
	return append(out, msgs[next:]...)
}

// storedBefore returns how many of the first n messages of a normalized
// list the log holds: n less the added ones among them.
func storedBefore(n int, added []int) int {
	k, _ := slices.BinarySearch(added, n)
	return n - k
}
