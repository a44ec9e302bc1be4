package engine_test

import (
	"strings"
	"testing"
	"testing/synctest"

	"github.com/foliodev/folio/engine"
	"github.com/foliodev/folio/transcript"
)

// Near the context window, older messages become one summary (a rewrite in
// the log) and a compaction entry records the entries it covers; the
// presentation keeps every entry.
func TestCompactionNearContextWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		long := strings.Repeat("word ", 8) // 40 bytes, about 10 tokens
		p := newScripted(
			cat(text("one "+long), done()),
			cat(text("two "+long), done()),
			cat(text("three "+long), done()),
			cat(text("SUMMARY: the user counted."), done()), // the compaction request
			cat(text("four"), done()))
		h := newHarness(t, p, engine.WithContextWindow(40))
		for _, id := range []string{"a", "b", "c", "d"} {
			h.send(id, id+" "+long)
		}
		es := h.wantKinds("user agent turn-receipt user agent turn-receipt user agent turn-receipt user compaction agent turn-receipt")
		c := es[10].Content.(transcript.Compaction)
		if c.Summary != "SUMMARY: the user counted." || c.Covers.FromID != es[0].ID || c.Covers.ToID != es[1].ID {
			t.Errorf("compaction %+v (first entries %s %s)", c, es[0].ID, es[1].ID)
		}
		reqs := p.reqs()
		sum := reqs[3]
		if len(sum.Tools) != 0 || !strings.Contains(sum.Messages[0].Content, "a "+long) {
			t.Errorf("summary request %+v", sum.Messages)
		}
		last := reqs[4].Messages
		if !strings.HasPrefix(last[0].Content, "Summary of the earlier conversation") || len(last) != 6 {
			t.Errorf("request after compaction: %s", roles(last))
		}
		if !strings.Contains(readFile(t, h.path), `"type":"rewrite"`) {
			t.Error("the log has no rewrite record")
		}
		if got := len(h.reload().Messages); got != 7 {
			t.Errorf("reloaded %d messages, want 7", got)
		}
	})
}
