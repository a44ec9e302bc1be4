package history_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/foliodev/folio/history"
)

// A log read from any reader, without its lock: a program that only
// inspects a conversation (an export, a check of a copied file) reads it
// this way. A problem in one record is listed, and the records around it
// still apply.
func ExampleRead() {
	log := `{"type":"conversation","version":3,"conversationId":"c1","startedAt":"2026-03-04T05:06:09.000Z"}
{"type":"message","at":"2026-03-04T05:06:10.000Z","message":{"role":"user","content":"hi"}}
{"type":"ui-append","at":"2026-03-04T05:06:10.000Z","entries":[{"id":"u1","content":{"kind":"user","text":"hi"},"timestamp":"2026-03-04T05:06:10.000Z"}]}
{"type":"ui-append","at":"2026-03-04T05:06:11.000Z","entries":[{"id":"a1","content":{"kind":"agent","markdown":"hello"},"timestamp":"2026-03-04T05:06:11.000Z"}]}
{"type":"ui-append","at":"2026-03-04T05:06:12.000Z","entries":[{"id":"x","content":{"kind":"no-such-kind"}}]}
`
	c, err := history.Read(strings.NewReader(log))
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Header.ConversationID, len(c.Messages), "message")
	for _, e := range c.Document.All() {
		fmt.Println(e.ID, e.Content.Kind())
	}
	fmt.Println(len(c.Problems), "problem, line", c.Problems[0].Line)
	// Output:
	// c1 1 message
	// u1 user
	// a1 agent
	// 1 problem, line 5
}

// Whoever deletes a conversation's log deletes its page index too: the
// index lives beside the log (or, for a log in Jazz's layout, in the data
// folder's sidecar folder), under the name IndexPath gives.
func ExampleIndexPath() {
	dir, err := os.MkdirTemp("", "folio-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "c1.jsonl")
	fmt.Println(filepath.Base(history.IndexPath(path)))

	for _, p := range []string{path, history.IndexPath(path)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			panic(err)
		}
	}
	// Output:
	// c1.jsonl.index
}

// A program that copies or archives a conversation copies the artifacts
// its entries refer to (a tool's output kept beside the log) with it;
// ArtifactRefs names them.
func ExampleArtifactRefs() {
	log := `{"type":"conversation","version":3,"conversationId":"c1","startedAt":"2026-03-04T05:06:09.000Z"}
{"type":"ui-append","at":"2026-03-04T05:06:10.000Z","entries":[{"id":"u1","content":{"kind":"user","text":"list the folder"},"timestamp":"2026-03-04T05:06:10.000Z"}]}
{"type":"ui-append","at":"2026-03-04T05:06:11.000Z","entries":[{"id":"t1","content":{"kind":"tool","receipt":{"app":"shell","summary":"ls","status":"ok"},"presentation":{"schema":"folio.shell","version":1,"revision":3,"artifact":{"ref":"0123456789abcdef0123456789abcdef","contentType":"text/plain","committedBytes":120,"revision":3,"final":true,"available":true}}},"timestamp":"2026-03-04T05:06:11.000Z"}]}
`
	c, err := history.Read(strings.NewReader(log))
	if err != nil {
		panic(err)
	}
	if len(c.Problems) > 0 {
		panic(c.Problems[0].Msg)
	}
	fmt.Println(history.ArtifactRefs(c))
	// Output:
	// [0123456789abcdef0123456789abcdef]
}

// A program that follows a log as it grows (a mirror, an indexer) reads it
// record by record with a Scanner and tells the records apart by type:
// what the model sees, what the person sees, the title, the branches.
func ExampleScanner_Records() {
	log := `{"type":"conversation","version":3,"conversationId":"c1","startedAt":"2026-03-04T05:06:09.000Z"}
{"type":"message","at":"2026-03-04T05:06:10.000Z","message":{"role":"user","content":"hi"}}
{"type":"ui-append","at":"2026-03-04T05:06:10.000Z","entries":[{"id":"u1","content":{"kind":"user","text":"hi"},"timestamp":"2026-03-04T05:06:10.000Z"}]}
{"type":"meta","at":"2026-03-04T05:06:11.000Z","title":"Greeting"}
`
	sc := history.NewScanner()
	for rec, err := range sc.Records(strings.NewReader(log)) {
		if err != nil {
			panic(err)
		}
		switch rec.Type {
		case history.TypeConversation:
			fmt.Println(rec.Line, "the header")
		case history.TypeMessage, history.TypeRewrite:
			fmt.Println(rec.Line, "what the model sees")
		case history.TypeUIAppend, history.TypeUIOpen, history.TypeUITranscript:
			fmt.Println(rec.Line, "what the person sees:", len(rec.Batch), "entry")
		case history.TypeMeta:
			fmt.Println(rec.Line, "the title:", sc.Title())
		case history.TypeBranch, history.TypeOnBranch, history.TypeHead:
			fmt.Println(rec.Line, "the branches")
		}
	}
	// Output:
	// 1 the header
	// 2 what the model sees
	// 3 what the person sees: 1 entry
	// 4 the title: Greeting
}
