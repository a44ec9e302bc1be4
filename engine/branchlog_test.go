package engine_test

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/foliodev/folio/history"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
	"github.com/go-json-experiment/json/jsontext"
)

// branched returns a version 3 log continued as a person who edits an
// earlier prompt leaves it: a fork of main just before its last user
// entry, sharing the messages before that turn, which
// becomes the head and gets the edited turn (its messages and entries as
// on-branch records); and a second fork of main before its first entry,
// sharing none, that stays a side branch. The log is read whole once, to
// find the fork point.
func branched(tb testing.TB, data []byte) []byte {
	tb.Helper()
	c, err := history.Read(bytes.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	// Just before the last prompt, sharing the messages before its turn,
	// as EditAndResend forks.
	d := c.Document
	after := ""
	for i := d.Len() - 1; i > 0; i-- {
		if d.At(i).Content.Kind() == transcript.KindUser {
			after = d.At(i - 1).ID
			break
		}
	}
	k := 0
	for i := len(c.Messages) - 1; i >= 0; i-- {
		if c.Messages[i].Role == message.User {
			k = i
			break
		}
	}
	const at = `"at":"2026-03-04T05:06:08.000Z"`
	q := func(s string) string { b, _ := jsontext.AppendQuote(nil, s); return string(b) }
	entry := func(e transcript.Entry) string {
		b, err := transcript.EncodeEntry(e)
		if err != nil {
			tb.Fatal(err)
		}
		return string(b)
	}
	onB := func(rec string) string {
		return `{"type":"on-branch",` + at + `,"branch":"b1","record":` + rec + `}` + "\n"
	}
	msg := func(role, text string) string {
		return `{"type":"message",` + at + `,"message":{"role":"` + role + `","content":` + q(text) + `}}`
	}
	now := time.Date(2026, 3, 4, 5, 6, 8, 0, time.UTC)
	out := bytes.Clone(data)
	out = append(out, `{"type":"branch",`+at+`,"branch":"b1","parent":"main","afterEntry":`+q(after)+`,"afterMessage":`+strconv.Itoa(k)+`,"title":"edited"}`+"\n"...)
	out = append(out, `{"type":"branch",`+at+`,"branch":"b2","parent":"main","afterMessage":0}`+"\n"...)
	out = append(out, `{"type":"head",`+at+`,"branch":"b1"}`+"\n"...)
	out = append(out, onB(msg("user", "the edited question"))...)
	out = append(out, onB(msg("assistant", "an answer to it"))...)
	out = append(out, onB(fmt.Sprintf(`{"type":"ui-append",%s,"entries":[%s,%s]}`, at,
		entry(transcript.Entry{ID: "edit-u", Content: transcript.User{Text: "the edited question"}, Timestamp: now}),
		entry(transcript.Entry{ID: "edit-a", Content: transcript.Agent{Markdown: "an answer to it"}, Timestamp: now})))...)
	return out
}
