package search

import (
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/foliodev/folio/transcript"
)

// Roles an indexed text has; the role: filter names them.
const (
	RolePrompt    = "prompt"    // the person's prompts and steering
	RoleAnswer    = "answer"    // the model's answers
	RoleReasoning = "reasoning" // the model's reasoning
	RoleTool      = "tool"      // tool calls: receipt and retained presentation text
	RoleNotice    = "notice"    // notices and reports
	RoleFailure   = "failure"   // failed replies
	RoleSummary   = "summary"   // compaction summaries
	RoleTitle     = "title"     // the conversation's title
)

var roles = []string{RolePrompt, RoleAnswer, RoleReasoning, RoleTool, RoleNotice, RoleFailure, RoleSummary, RoleTitle}

// maxEntryText bounds the text indexed for one entry: a huge tool output
// is searchable by its first part.
const maxEntryText = 64 << 10

// entryText returns what a person sees of e as searchable text, and its role.
// ok is false for kinds that hold no text a person would look for
// (headers, receipts, stop summaries). A tool's ephemeral presentation
// values are left out even if e carries them, so an entry taken from a live
// store indexes the same as its saved form.
func entryText(e transcript.Entry) (text, role string, ok bool) {
	var b strings.Builder
	switch c := e.Content.(type) {
	case transcript.User:
		b.WriteString(c.Text)
		role = RolePrompt
	case transcript.Steering:
		b.WriteString(c.Text)
		role = RolePrompt
	case transcript.Agent:
		b.WriteString(c.Markdown)
		role = RoleAnswer
	case transcript.Reasoning:
		b.WriteString(c.Text)
		role = RoleReasoning
	case transcript.Notice:
		b.WriteString(c.Text)
		role = RoleNotice
	case transcript.ReportContent:
		r := c.Report
		add(&b, r.Label)
		for _, row := range r.Rows {
			add(&b, row.Key, row.Value, row.Name, row.Detail, row.Caption, row.Text, row.Label)
		}
		add(&b, r.Note)
		role = RoleNotice
	case transcript.Failure:
		add(&b, c.Headline, c.Detail)
		role = RoleFailure
	case transcript.Compaction:
		b.WriteString(c.Summary)
		role = RoleSummary
	case transcript.Tool:
		t, _ := c.Durable()
		r := t.Receipt
		add(&b, r.App, r.Summary, r.Args, r.Reason, r.Detail, r.OutputPreview, r.DiffText)
		if r.DiffPreview != nil {
			add(&b, r.DiffPreview.Lines...)
		}
		if t.Presentation != nil {
			addPayload(&b, t.Presentation.Payload)
		}
		for _, kp := range t.Supplementals {
			addPayload(&b, kp.Presentation.Payload)
		}
		role = RoleTool
	default:
		return "", "", false
	}
	text = strings.TrimSpace(b.String())
	if len(text) > maxEntryText {
		text = cut(text, maxEntryText)
	}
	return text, role, text != ""
}

func add(b *strings.Builder, parts ...string) {
	for _, p := range parts {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p)
	}
}

// addPayload adds the string values of a presentation payload (generic
// code never interprets a payload; its strings are what any schema shows).
func addPayload(b *strings.Builder, p transcript.RawJSON) {
	if len(p) == 0 || b.Len() > maxEntryText {
		return
	}
	dec := jsontext.NewDecoder(strings.NewReader(string(p)))
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return
		}
		if tok.Kind() != '"' {
			continue
		}
		// Object names are the schema's vocabulary, not what is shown.
		if isName(dec) {
			continue
		}
		add(b, tok.String())
		if b.Len() > maxEntryText {
			return
		}
	}
}

// isName reports whether the string just read was an object member name.
func isName(dec *jsontext.Decoder) bool {
	kind, n := dec.StackIndex(dec.StackDepth())
	return kind == '{' && n%2 == 1
}

// cut shortens s to at most n bytes on a rune boundary.
func cut(s string, n int) string {
	for n > 0 && n < len(s) && !startsRune(s[n]) {
		n--
	}
	return s[:n]
}

func startsRune(b byte) bool { return b&0xC0 != 0x80 }
