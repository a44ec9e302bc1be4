package history

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/foliodev/folio/internal/gen"
	"github.com/foliodev/folio/message"
	"github.com/foliodev/folio/transcript"
)

// tailWindows are the windows the light read is compared at: smaller than
// one batch, a few entries, more than most fixtures hold.
var tailWindows = []int{1, 3, 64, 1 << 20}

// tailFixtures returns every log the repository keeps as test data, the
// FuzzReadLog corpus made into logs, and generated logs with branches,
// snapshots, provisional tails, rejected batches and broken lines mixed in.
func tailFixtures(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, pat := range []string{"testdata/*.jsonl", "export/testdata/*/*.jsonl"} {
		paths, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			out[p] = readFile(t, p)
		}
	}
	corpus, _ := filepath.Glob("testdata/fuzz/FuzzReadLog/*")
	for _, p := range corpus {
		version, body, ok := readLogCorpus(readFile(t, p))
		if !ok {
			continue
		}
		header := v3Header
		if version%2 == 0 {
			header = `{"type":"conversation","version":2,"conversationId":"c1"}`
		}
		out[p] = append([]byte(header+"\n"), body...)
	}
	out["seed/branches"] = append([]byte(v3Header+"\n"), branchSeed...)
	for seed := range uint64(12) {
		out[fmt.Sprintf("gen/%d", seed)] = mixedLog(t, seed, 40+int(seed)*30)
	}
	if len(out) < 60 {
		t.Fatalf("only %d fixture logs found", len(out))
	}
	return out
}

// readLogCorpus decodes a FuzzReadLog corpus file: a version byte and the
// log's body.
func readLogCorpus(b []byte) (uint8, []byte, bool) {
	ls := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(ls) != 3 {
		return 0, nil, false
	}
	var version uint8
	switch v := ls[1]; {
	case strings.HasPrefix(v, "byte(") || strings.HasPrefix(v, "uint8("):
		arg := v[strings.IndexByte(v, '(')+1 : len(v)-1]
		if n, err := strconv.ParseUint(arg, 0, 8); err == nil {
			version = uint8(n)
		} else if s, err := strconv.Unquote(arg); err == nil && len(s) == 1 {
			version = s[0]
		} else {
			return 0, nil, false
		}
	default:
		return 0, nil, false
	}
	body, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(ls[2], "[]byte("), ")"))
	if err != nil {
		return 0, nil, false
	}
	return version, []byte(body), true
}

// mixedLog is a generated log with gen.Mix's records mixed in.
func mixedLog(t testing.TB, seed uint64, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Options{Messages: n, Seed: seed}); err != nil {
		t.Fatal(err)
	}
	return gen.Mix(buf.Bytes(), seed)
}

// TestTailReadsLikeWhole is the light read's differential test: for every
// fixture log and window, LoadTail's reader gives what the whole read
// gives, with the document cut to its end.
func TestTailReadsLikeWhole(t *testing.T) {
	for name, data := range tailFixtures(t) {
		for _, n := range tailWindows {
			t.Run(fmt.Sprintf("%s/window=%d", name, n), func(t *testing.T) {
				sameAsWhole(t, data, n)
			})
		}
	}
}

// sameAsWhole checks parseTail(data, n, widen) against parse(data), with a
// TailStart that asks for the window to start at the third-to-last user
// entry.
func sameAsWhole(t *testing.T, data []byte, n int) {
	t.Helper()
	whole, werr := parse(bytes.Clone(data), false)
	asked := -1
	widen := &TailStart{Kinds: []transcript.Kind{transcript.KindUser}, Start: func(picked []Picked, from int, _ []message.Message) (int, bool) {
		asked = 1 << 30
		if len(picked) >= 3 {
			asked = picked[len(picked)-3].Index
		} else if from > 0 {
			return 0, true
		}
		return asked, false
	}}
	light, lerr := parseTail(bytes.Clone(data), n, widen)
	if (werr == nil) != (lerr == nil) || werr != nil && werr.Error() != lerr.Error() {
		t.Fatalf("errors differ: whole %v, light %v", werr, lerr)
	}
	if werr != nil {
		return
	}
	w, l := whole.conv, light.conv
	k := sameWindow(t, "head", l.Document, w.Document, n)
	if whole.settledLen-k != light.settledLen {
		t.Errorf("settled: light %d+%d, whole %d", k, light.settledLen, whole.settledLen)
	}
	if !maps.Equal(whole.reserved, light.reserved) || whole.uiLines != light.uiLines {
		t.Errorf("writer state differs: reserved %v / %v, UI lines %d / %d", light.reserved, whole.reserved, light.uiLines, whole.uiLines)
	}
	for _, b := range w.Branches {
		wd, wm, werr := w.Branch(b.ID)
		ld, lm, lerr := l.Branch(b.ID)
		if werr != nil || lerr != nil {
			t.Fatalf("branch %s: %v / %v", b.ID, lerr, werr)
		}
		sameWindow(t, "branch "+b.ID, ld, wd, n)
		if !reflect.DeepEqual(lm, wm) {
			t.Errorf("branch %s: messages differ", b.ID)
		}
	}
	if asked >= 0 && k > asked {
		t.Fatalf("the window starts at %d, after the %d asked for", k, asked)
	}
	// Everything but the document is what the whole read gives.
	lc, wc := *l, *w
	lc.Document, wc.Document = transcript.Document{}, transcript.Document{}
	lc.views, wc.views = nil, nil
	if !reflect.DeepEqual(lc, wc) {
		t.Errorf("conversation differs:\nlight %+v\nwhole %+v", lc, wc)
	}
}

// sameWindow checks that light is the end of whole, at least n entries
// long (or all of it), and returns how many entries it leaves out.
func sameWindow(t *testing.T, what string, light, whole transcript.Document, n int) int {
	t.Helper()
	k := light.Elided()
	if k+light.Len() != whole.Len() || light.Len() < min(n, whole.Len()) {
		t.Fatalf("%s: light holds %d after %d left out, whole %d (window %d)", what, light.Len(), k, whole.Len(), n)
	}
	if light.FirstID() != whole.FirstID() {
		t.Errorf("%s: first ID %q, whole %q", what, light.FirstID(), whole.FirstID())
	}
	for i := range light.Len() {
		if !reflect.DeepEqual(light.At(i), whole.At(k+i)) {
			t.Fatalf("%s: entry %d:\nlight %+v\nwhole %+v", what, k+i, light.At(i), whole.At(k+i))
		}
	}
	return k
}

// TestTailSavesLikeWhole: a writer that loaded the tail writes exactly the
// bytes a writer that loaded the whole log writes, for an append, a
// snapshot (an earlier entry changed), and a save after a branch switch
// read the log whole again.
func TestTailSavesLikeWhole(t *testing.T) {
	for name, data := range tailFixtures(t) {
		for _, n := range []int{1, 64} {
			t.Run(fmt.Sprintf("%s/window=%d", name, n), func(t *testing.T) {
				if _, err := parse(bytes.Clone(data), false); err != nil {
					t.Skip("not a log a writer opens:", err)
				}
				dir := t.TempDir()
				paths := []string{filepath.Join(dir, "a", "c1.jsonl"), filepath.Join(dir, "b", "c1.jsonl")}
				var logs [2]*Log
				var docs [2]transcript.Document
				var convs [2]*Conversation
				for i, p := range paths {
					writeLog(t, p, data)
					logs[i] = open(t, p)
					var err error
					if i == 0 {
						convs[i], err = logs[i].Load()
					} else {
						convs[i], err = logs[i].LoadTail(n, nil)
					}
					if err != nil {
						t.Fatal(err)
					}
					docs[i] = convs[i].Document
				}
				same := func(step string) {
					t.Helper()
					a, b := readFile(t, paths[0]), readFile(t, paths[1])
					// A log left mid-stream is settled under a notice with
					// a fresh ID; the two writers mint different ones.
					if convs[0].Interrupted {
						a = bytes.ReplaceAll(a, []byte(noticeID(convs[0])), []byte("notice"))
						b = bytes.ReplaceAll(b, []byte(noticeID(convs[1])), []byte("notice"))
					}
					if !bytes.Equal(a, b) {
						t.Fatalf("%s: the logs differ\nwhole:\n%s\ntail:\n%s", step, a, b)
					}
				}
				same("load")
				for i := range logs {
					d := appendAll(t, docs[i], user("tail-u1", "one more"), agent("tail-a1", "an answer"))
					if err := logs[i].Save(d, append(convs[i].Messages[:len(convs[i].Messages):len(convs[i].Messages)], msgs("one more", "an answer")...)); err != nil {
						t.Fatalf("save %d: %v", i, err)
					}
					docs[i] = d
				}
				same("append")
				for i := range logs {
					d, err := docs[i].Replace(agent("tail-a1", "an answer, corrected"))
					if err != nil {
						t.Fatal(err)
					}
					if err := logs[i].Save(d, logs[i].msgs); err != nil {
						t.Fatalf("snapshot %d: %v", i, err)
					}
					docs[i] = d
				}
				same("snapshot")
				for i := range logs {
					head, err := logs[i].Head()
					if err != nil {
						t.Fatal(err)
					}
					if _, err := logs[i].SetHead(head); err != nil {
						t.Fatal(err)
					}
					d := appendAll(t, docs[i], agent("tail-a2", "after a whole read"))
					if err := logs[i].Save(d, logs[i].msgs); err != nil {
						t.Fatalf("save after SetHead %d: %v", i, err)
					}
				}
				same("after SetHead")
			})
		}
	}
}

func noticeID(c *Conversation) string {
	return c.Document.At(c.Document.Len() - 1).ID
}

// TestTailSaveRefusesUnheldEntries: a document that leaves out more
// entries than the log holds as settled is refused, and nothing is
// written.
func TestTailSaveRefusesUnheldEntries(t *testing.T) {
	path := logPath(t)
	l := open(t, path)
	if err := l.Save(doc(t, entries(4, "e")...), nil); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, path)
	w := transcript.NewCheckedWindow("c1", 9, "e0", entries(2, "x"))
	if err := l.Save(w, nil); !errors.Is(err, ErrElided) {
		t.Fatalf("Save = %v, want ErrElided", err)
	}
	if !bytes.Equal(readFile(t, path), before) {
		t.Fatal("a refused save wrote")
	}
}

// TestTailKeepsNoLogBytes: what LoadTail returns does not share the file's
// bytes, so the log's memory is freed after the load.
func TestTailKeepsNoLogBytes(t *testing.T) {
	data := mixedLog(t, 3, 300)
	r, err := parseTail(data, 16, nil)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := uintptr(unsafe.Pointer(&data[0])), uintptr(unsafe.Pointer(&data[len(data)-1]))
	in := func(s string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		return s != "" && p >= lo && p <= hi
	}
	for _, e := range r.conv.Document.All() {
		if in(e.ID) {
			t.Fatalf("entry %s shares the log's bytes", e.ID)
		}
	}
	for i, m := range r.conv.Messages {
		if in(m.Content) {
			t.Fatalf("message %d shares the log's bytes", i)
		}
	}
	for id := range r.reserved {
		if in(id) {
			t.Fatalf("reserved ID %s shares the log's bytes", id)
		}
	}
}

// FuzzTailReadsLikeWhole: on any log, the light read agrees with the whole
// read (sameAsWhole), at a small and a large window.
func FuzzTailReadsLikeWhole(f *testing.F) {
	f.Add(uint8(3), []byte(branchSeed))
	f.Add(uint8(3), []byte(`{"type":"ui-open","at":"2026-03-04T05:06:08.000Z","entries":[{"id":"s","content":{"kind":"agent","markdown":"par"},"timestamp":"2026-03-04T05:06:07.000Z"},{"id":"t","content":{"kind":"agent","markdown":"x"},"timestamp":"2026-03-04T05:06:07.000Z"}]}`+"\n"))
	f.Add(uint8(2), legacyLog()[bytes.IndexByte(legacyLog(), '\n')+1:])
	f.Fuzz(func(t *testing.T, version uint8, body []byte) {
		header := v3Header
		if version%2 == 0 {
			header = `{"type":"conversation","version":2,"conversationId":"c1"}`
		}
		data := append([]byte(header+"\n"), body...)
		sameAsWhole(t, data, 1)
		sameAsWhole(t, data, 64)
	})
}

// TestTailSharedIDBytes: entries read the careful way (a line folio would
// not write, with spaces) whose one-byte IDs the runtime may hand out as
// the same string are still built from their own lines.
func TestTailSharedIDBytes(t *testing.T) {
	e := func(id, text string) string {
		return `{ "id": "` + id + `", "content": {"kind": "user", "text": "` + text + `"}, "timestamp": "2026-03-04T05:06:07.000Z" }`
	}
	data := logOf(v3Header,
		`{ "type": "ui-append", "at": "2026-03-04T05:06:08.000Z", "entries": [`+e("a", "first")+`] }`,
		`{"type":"branch","at":"2026-03-04T05:06:08.000Z","branch":"b1","parent":"main","afterEntry":"a","afterMessage":0}`,
		`{ "type": "ui-transcript", "at": "2026-03-04T05:06:09.000Z", "entries": [`+e("a", "second")+`,`+e("b", "x")+`] }`,
	)
	for _, n := range []int{1, 2} {
		sameAsWhole(t, data, n)
	}
	r, err := parseTail(data, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := r.conv.Branch("b1")
	if err != nil || d.Len() != 1 || d.At(0).Content.(transcript.User).Text != "first" {
		t.Fatalf("branch b1: %v %+v", err, d.Entries())
	}
}

// TestTailThenWholeSave: after LoadTail, a save of the whole document (one
// that leaves nothing out) is compared with the log read whole again, and
// writes what it writes after Load.
func TestTailThenWholeSave(t *testing.T) {
	data := mixedLog(t, 4, 300)
	dir := t.TempDir()
	var out [2][]byte
	for i, tail := range []bool{false, true} {
		path := filepath.Join(dir, strconv.Itoa(i), "c1.jsonl")
		writeLog(t, path, data)
		l := open(t, path)
		var err error
		if tail {
			_, err = l.LoadTail(8, nil)
		} else {
			_, err = l.Load()
		}
		if err != nil {
			t.Fatal(err)
		}
		whole, err := ReadFile(path) // the settled document, the notice included
		if err != nil {
			t.Fatal(err)
		}
		d := appendAll(t, whole.Document, agent("whole-1", "appended to the whole document"))
		if err := l.Save(d, whole.Messages); err != nil {
			t.Fatal(err)
		}
		out[i] = readFile(t, path)
		if c := readConv(t, out[i]); c.Document.Len() != whole.Document.Len()+1 {
			t.Fatalf("tail %v: %d entries after the save, want %d", tail, c.Document.Len(), whole.Document.Len()+1)
		}
	}
	strip := func(b []byte) []byte { // the interrupted notice's fresh ID
		c := readConv(t, b)
		for _, e := range c.Document.All() {
			if n, ok := e.Content.(transcript.Notice); ok && n.Text == InterruptedNotice {
				b = bytes.ReplaceAll(b, []byte(e.ID), []byte("notice"))
			}
		}
		return b
	}
	if !bytes.Equal(strip(out[0]), strip(out[1])) {
		t.Fatal("a whole save after LoadTail wrote other bytes than after Load")
	}
}

// TestTailCopiesEscapedIDEntries: an entry whose ID has an escape is kept
// whole by the light read (its ID is no slice of the log), and still does
// not share the log's bytes.
func TestTailCopiesEscapedIDEntries(t *testing.T) {
	data := logOf(v3Header,
		uiRec(TypeUIAppend, `{"id":"a\u0062c","content":{"kind":"user","text":"a question long enough to be no interned string"},"timestamp":"2026-03-04T05:06:07.000Z"}`),
		uiRec(TypeUIAppend, `{"id":"plain","content":{"kind":"agent","markdown":"an answer"},"timestamp":"2026-03-04T05:06:07.000Z"}`),
	)
	sameAsWhole(t, data, 8)
	r, err := parseTail(data, 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := uintptr(unsafe.Pointer(&data[0])), uintptr(unsafe.Pointer(&data[len(data)-1]))
	text := r.conv.Document.At(0).Content.(transcript.User).Text
	if p := uintptr(unsafe.Pointer(unsafe.StringData(text))); p >= lo && p <= hi {
		t.Fatal("the entry with an escaped ID shares the log's bytes")
	}
}

// TestTailFreesTheLogBytes: once the light read is done, nothing it
// returned keeps the log's bytes alive (the garbage collector frees them).
func TestTailFreesTheLogBytes(t *testing.T) {
	data := bytes.Clone(mixedLog(t, 2, 400))
	var freed atomic.Bool
	runtime.AddCleanup(&data[0], func(f *atomic.Bool) { f.Store(true) }, &freed)
	r, err := parseTail(data, 16, &TailStart{Kinds: []transcript.Kind{transcript.KindUser}, Start: func(p []Picked, _ int, _ []message.Message) (int, bool) { return len(p) / 2, false }})
	if err != nil {
		t.Fatal(err)
	}
	data = nil
	c := r.conv
	r = nil
	for i := 0; i < 100 && !freed.Load(); i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if !freed.Load() {
		t.Fatal("the log's bytes are still reachable from what the light read returned")
	}
	runtime.KeepAlive(c)
}

func isUser(e transcript.Entry) bool { return e.Content.Kind() == transcript.KindUser }
