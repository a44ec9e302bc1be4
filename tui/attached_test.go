package tui

import (
	"strings"
	"testing"

	"github.com/foliodev/folio/provider/demo"
)

// The footer says which process the chat is attached to, and says nothing
// of it once the chat owns its conversation.
func TestFooterNamesTheOwner(t *testing.T) {
	who := "folio serve (pid 42)"
	r := newChatRig(t, Options{Attached: func() string { return who }}, 80, 24, demo.New(demo.Options{}))
	if f := r.app.footer(); !strings.Contains(f, "attached to folio serve (pid 42)") {
		t.Fatalf("the footer of an attached chat: %q", f)
	}
	who = ""
	if f := r.app.footer(); strings.Contains(f, "attached") {
		t.Fatalf("the footer of an owning chat: %q", f)
	}
}
