package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/foliodev/folio/server/auth"
	"github.com/foliodev/folio/server/auth/authtest"
)

// TestReplicaCachesFollowSignOutAndReassign: with both replicas' caches
// warm (each has served the session and the conversation's owner), a
// reassignment made on A is B's answer at once, and a sign-out on A is
// refused on B at once and closes the person's WebSocket on B.
func TestReplicaCachesFollowSignOutAndReassign(t *testing.T) {
	rs := accountReplicas(t, 2, authtest.AliceSubject)
	a, b := rs[0], rs[1]
	aliceA, bobA := a.signIn(t, authtest.AliceSubject), a.signIn(t, authtest.BobSubject)
	aliceB, bobB := aliceA.on(b), bobA.on(b)
	code, body := aliceA.do(t, "POST", "/api/v2/conversations", `{"title":"alice's"}`)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	id := body[strings.Index(body, `"id":"`)+6:]
	id = id[:strings.IndexByte(id, '"')]
	for range 3 { // warm: B answers from its caches from the second time on
		if code, _ := aliceB.do(t, "GET", "/api/v2/conversations/"+id, ""); code != 200 {
			t.Fatalf("alice on B: %d", code)
		}
		if code, _ := bobB.do(t, "GET", "/api/v2/conversations/"+id, ""); code != http.StatusNotFound {
			t.Fatalf("bob on B before the reassignment: %d", code)
		}
	}
	if code, body := aliceA.do(t, "PUT", "/api/v2/conversations/"+id+"/owner", `{"owner":"`+authtest.BobSubject+`"}`); code != 200 {
		t.Fatalf("reassign on A: %d %s", code, body)
	}
	if code, _ := bobB.do(t, "GET", "/api/v2/conversations/"+id, ""); code != 200 {
		t.Fatalf("bob on B right after the reassignment on A: %d", code)
	}
	if code, _ := aliceB.do(t, "GET", "/api/v2/conversations/"+id, ""); code != http.StatusNotFound {
		t.Fatalf("alice (admin, no longer owner) on B: %d", code)
	}
	if code, _ := bobB.do(t, "GET", "/api/v2/conversations", ""); code != 200 {
		t.Fatalf("bob's list on B: %d", code)
	}
	bobSocketB := b.dialAs(t, bobB)
	stillOpen(t, bobSocketB, "bob on B")
	if code, _ := bobA.do(t, "POST", auth.LogoutPath, ""); code != 200 {
		t.Fatalf("sign-out on A: %d", code)
	}
	if code, _ := bobB.do(t, "GET", "/api/v2/conversations/"+id, ""); code != http.StatusUnauthorized {
		t.Fatalf("bob on B right after signing out on A: %d, want 401", code)
	}
	if code, reason := closedWith(t, bobSocketB); code != closeSessionEnded || reason != "sign-in-required" {
		t.Fatalf("bob's socket on B after signing out on A: %d %q", code, reason)
	}
}
