package history

import (
	"bytes"
	"os"
	"testing"
	"unsafe"

	"github.com/foliodev/folio/message"
)

// A page index's Scanner keeps a message as its role alone for as long as
// the log is open; the role must not point into the line it was read
// from (or the block that line was copied to), or every message kept
// would keep its line's memory alive and the writer's heap would grow
// with the log.
func TestIndexScannerRolesHoldNoLineMemory(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/linear-before-branches.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	s := idsOnly(NewScanner())
	for _, err := range s.Records(bytes.NewReader(data)) {
		if err != nil {
			t.Fatal(err)
		}
	}
	ms := s.r.conv.Messages
	if len(ms) == 0 {
		t.Fatal("the scanner kept no messages")
	}
	own := map[*byte]bool{}
	for _, r := range []message.Role{message.System, message.User, message.Assistant, message.Tool} {
		own[unsafe.StringData(string(r))] = true
	}
	for i, m := range ms {
		if m.Content != "" || !own[unsafe.StringData(string(m.Role))] {
			t.Fatalf("message %d is kept as %+v, its role at %p, not one of the package's roles", i, m, unsafe.StringData(string(m.Role)))
		}
	}
}
