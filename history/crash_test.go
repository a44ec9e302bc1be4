package history

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodev/folio/message"
)

// completePrefix is the longest prefix of data made of complete records: a
// record counts once its last byte is present, newline or not.
func completePrefix(data []byte, k int) []byte {
	end := 0
	for start := 0; start < len(data); {
		nl := bytes.IndexByte(data[start:], '\n')
		if nl < 0 {
			nl = len(data) - start
		}
		if start+nl > k {
			break
		}
		end = min(start+nl+1, len(data))
		start += nl + 1
	}
	return data[:end]
}

func sameConv(t *testing.T, got, want *Conversation, where string) {
	t.Helper()
	if got.Document.Len() != want.Document.Len() || len(got.Messages) != len(want.Messages) {
		t.Fatalf("%s: %d entries %d messages, want %d and %d", where,
			got.Document.Len(), len(got.Messages), want.Document.Len(), len(want.Messages))
	}
	for i := range want.Document.Len() {
		if got.Document.Fingerprint(i) != want.Document.Fingerprint(i) {
			t.Fatalf("%s: entry %d differs", where, i)
		}
	}
	for i := range want.Messages {
		if !equalMessage(got.Messages[i], want.Messages[i]) {
			t.Fatalf("%s: message %d differs", where, i)
		}
	}
}

// TestCrashAtEveryOffsetOfAnAppend cuts a save's bytes at every offset, as
// a crash mid-write would, and checks the reader yields exactly the records
// that were complete.
func TestCrashAtEveryOffsetOfAnAppend(t *testing.T) {
	t.Parallel()
	path := logPath(t)
	l := open(t, path)
	d := doc(t, entries(3, "a")...)
	m := msgs("q1", "a1")
	if err := l.Save(d, m); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, path)
	d = appendAll(t, d, entries(2, "b")...)
	d, err := d.Open(agent("streaming", "accepted partial text"))
	if err != nil {
		t.Fatal(err)
	}
	m = append(m, message.Text(message.User, "q2 with \"quotes\" and ünïcode"), message.Text(message.Assistant, "a2"))
	if err := l.Save(d, m); err != nil {
		t.Fatal(err)
	}
	after := readFile(t, path)
	if got := recordTypes(after)[len(recordTypes(before)):]; strings.Join(got, ",") != "message,message,ui-append,ui-open" {
		t.Fatalf("appended records %v", got)
	}
	for k := len(before); k <= len(after); k++ {
		cut := after[:k]
		got := readConv(t, cut)
		want := readConv(t, completePrefix(after, k))
		sameConv(t, got, want, "offset "+itoa(k))
		torn := len(problemsOf(got, ProblemTorn))
		if len(got.Problems) != torn || torn > 1 {
			t.Fatalf("offset %d: problems %v", k, got.Problems)
		}
		if (torn == 1) != (len(completePrefix(after, k)) < k) {
			t.Fatalf("offset %d: torn=%d but complete prefix is %d bytes", k, torn, len(completePrefix(after, k)))
		}
	}
}

// TestCrashAtEveryOffsetOfAnUpgrade stops an upgrade at every byte of its
// temporary file. The log itself is only ever replaced by the rename, so a
// reader of the log sees the version 2 conversation whole, and the next
// upgrade completes. Reading the cut temporary file itself yields only its
// complete records.
func TestCrashAtEveryOffsetOfAnUpgrade(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "c1.jsonl")
	v2 := legacyLog()
	writeLog(t, path, v2)
	origConv := readConv(t, v2)

	// The bytes the upgrade writes.
	full := filepath.Join(t.TempDir(), "c1.jsonl")
	writeLog(t, full, v2)
	l := open(t, full)
	if _, err := l.Upgrade(); err != nil {
		t.Fatal(err)
	}
	l.Close()
	upgraded := readFile(t, full)
	upConv := readConv(t, upgraded)
	sameConv(t, upConv, origConv, "upgrade")

	for k := 0; k <= len(upgraded); k++ {
		if err := os.WriteFile(path+".tmp", upgraded[:k], 0o600); err != nil {
			t.Fatal(err)
		}
		// The log is untouched.
		sameConv(t, readConv(t, readFile(t, path)), origConv, "log at offset "+itoa(k))
		// The cut temporary file holds complete records and nothing else.
		if k > bytes.IndexByte(upgraded, '\n') {
			got := readConv(t, upgraded[:k])
			want := readConv(t, completePrefix(upgraded, k))
			sameConv(t, got, want, "temp at offset "+itoa(k))
		}
		// Recovery after some of the crashes (each is an fsync'd rewrite).
		if k%97 == 0 || k == len(upgraded)-1 {
			rl := open(t, path)
			if _, err := rl.Upgrade(); err != nil {
				t.Fatal(err)
			}
			rl.Close()
			if !bytes.Equal(readFile(t, path), upgraded) {
				t.Fatalf("offset %d: upgrade after a crash wrote different bytes", k)
			}
			writeLog(t, path, v2)
		}
	}
}

func itoa(n int) string {
	return string(appendInt(nil, n))
}

func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}
