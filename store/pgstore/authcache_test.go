package pgstore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/foliodev/folio/server/auth"
)

// listening waits until r's listener has LISTENed (its caches answer).
func (r *replica) listening(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second) // a hang guard, not a measure
	for !r.m.s.auth().on() {
		if time.Now().After(deadline) {
			t.Fatal("the listener never connected")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSessionCacheAcrossReplicas: B answers a session from its cache (the
// row removed behind its back is still served, which shows the cache is
// used), a sign-out on A ends it on B as soon as A's Delete returned, and
// B's OnEnded hears it; an expired cached session is refused by the clock.
func TestSessionCacheAcrossReplicas(t *testing.T) {
	u := freshURL(t)
	a, b := newReplica(t, u), newReplica(t, u)
	a.listening(t)
	b.listening(t)
	sa, sb := NewSessions(a.m.s), NewSessions(b.m.s)
	ended := make(chan string, 10)
	sb.OnEnded(func(key string) { ended <- key })
	ctx := context.Background()
	key := fmt.Sprintf("%064x", 1)
	now := time.Now()
	if err := sa.Put(ctx, key, auth.Session{Subject: "alice", CSRF: "c", Created: now, Expires: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if s, err := sb.Get(ctx, key); err != nil || s.Subject != "alice" {
		t.Fatalf("B: %+v %v", s, err)
	}
	if _, err := b.m.s.pool.Exec(ctx, `DELETE FROM folio_sessions WHERE key = $1`, key); err != nil {
		t.Fatal(err)
	}
	if s, err := sb.Get(ctx, key); err != nil || s.Subject != "alice" {
		t.Fatalf("B's cached session: %+v %v (is the cache used?)", s, err)
	}
	if err := sa.Put(ctx, key, auth.Session{Subject: "alice", CSRF: "c", Created: now, Expires: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := sa.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Get(ctx, key); !errors.Is(err, auth.ErrNoSession) {
		t.Fatalf("B after the sign-out on A: %v, want ErrNoSession", err)
	}
	select {
	case k := <-ended:
		if k != key {
			t.Fatalf("B's OnEnded heard %q", k)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("B's OnEnded never heard the sign-out")
	}

	// Expiry on a cached session.
	short := fmt.Sprintf("%064x", 2)
	if err := sa.Put(ctx, short, auth.Session{Subject: "bob", Created: now, Expires: time.Now().Add(300 * time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Get(ctx, short); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	if _, err := sb.Get(ctx, short); !errors.Is(err, auth.ErrNoSession) {
		t.Fatalf("an expired cached session: %v", err)
	}
}

// TestOwnerCacheAcrossReplicas: B caches an owner; a reassignment on A is
// B's answer as soon as SetOwner returned; a deleted conversation's owner
// is dropped; while B's listener is down its cache is not used.
func TestOwnerCacheAcrossReplicas(t *testing.T) {
	u := freshURL(t)
	a, b := newReplica(t, u), newReplica(t, u)
	a.listening(t)
	b.listening(t)
	ctx := context.Background()
	id := "c-cache01"
	if _, err := a.m.s.pool.Exec(ctx, `INSERT INTO folio_conversations (id) VALUES ($1)`, id); err != nil {
		t.Fatal(err)
	}
	if err := a.m.s.SetOwner(id, "alice"); err != nil {
		t.Fatal(err)
	}
	if o, err := b.m.s.Owner(id); err != nil || o != "alice" {
		t.Fatalf("B: %q %v", o, err)
	}
	// Behind the caches' back: B still answers from its cache.
	if _, err := a.m.s.pool.Exec(ctx, `UPDATE folio_conversations SET owner = 'mallory' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if o, _ := b.m.s.Owner(id); o != "alice" {
		t.Fatalf("B's cached owner: %q (is the cache used?)", o)
	}
	if err := a.m.s.SetOwner(id, "bob"); err != nil {
		t.Fatal(err)
	}
	if o, err := b.m.s.Owner(id); err != nil || o != "bob" {
		t.Fatalf("B after the reassignment on A: %q %v, want bob", o, err)
	}

	// B's listener goes down: its cache is cleared and bypassed.
	b.stop()
	if b.m.s.auth().on() {
		t.Fatal("B's caches still answer with no listener")
	}
	if b.m.s.auth().owners.Len() != 0 {
		t.Fatal("B's owner cache kept entries past its listener")
	}
}

// TestAuthCachesAreBounded: the caches keep at most their bounds.
func TestAuthCachesAreBounded(t *testing.T) {
	s := newTestStore(t)
	c := s.auth()
	c.listening.Add(1) // as if a listener were connected
	defer c.listening.Add(-1)
	for i := range maxCachedOwners + 10 {
		c.owners.Put(fmt.Sprint(i), "p", c.owners.Gen())
	}
	if n := c.owners.Len(); n != maxCachedOwners {
		t.Fatalf("owners cached: %d, bound %d", n, maxCachedOwners)
	}
	for i := range maxCachedSessions + 10 {
		c.sessions.Put(fmt.Sprint(i), auth.Session{}, c.sessions.Gen())
	}
	if n := c.sessions.Len(); n != maxCachedSessions {
		t.Fatalf("sessions cached: %d, bound %d", n, maxCachedSessions)
	}
}
