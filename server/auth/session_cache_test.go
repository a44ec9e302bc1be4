package auth

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestFileStoreCacheFollowsTheFolder: two stores over one folder stand for
// two processes sharing a data folder. Once b's recheck time has passed
// (here at once), a session a ended is refused though b had it cached;
// one a rewrote under the same key is read again; expiry needs no file
// change.
func TestFileStoreCacheFollowsTheFolder(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	a, _ := NewFileStore(dir)
	b, _ := NewFileStore(dir)
	b.recheck = time.Nanosecond
	now := time.Now()
	key := keyOf("cookie")
	if err := a.Put(ctx, key, Session{Subject: "alice", CSRF: "x", Created: now, Expires: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second answer comes from b's cache
		if s, err := b.Get(ctx, key); err != nil || s.Subject != "alice" {
			t.Fatalf("b reads alice: %+v %v", s, err)
		}
	}
	if b.sessions().Len() != 1 {
		t.Fatalf("b caches %d sessions, want 1", b.sessions().Len())
	}
	if err := a.Put(ctx, key, Session{Subject: "bob", CSRF: "y", Created: now, Expires: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if s, err := b.Get(ctx, key); err != nil || s.Subject != "bob" {
		t.Fatalf("after a rewrite b reads %+v %v, want bob", s, err)
	}
	if err := a.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, key); !errors.Is(err, ErrNoSession) {
		t.Fatalf("a session ended by a: b answers %v, want ErrNoSession", err)
	}

	// Expiry, by the clock alone, on a cached session.
	clock := now
	b.Now = func() time.Time { return clock }
	if err := a.Put(ctx, key, Session{Subject: "alice", Created: now, Expires: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, key); err != nil {
		t.Fatal(err)
	}
	clock = now.Add(2 * time.Minute)
	if _, err := b.Get(ctx, key); !errors.Is(err, ErrNoSession) {
		t.Fatalf("an expired cached session: %v", err)
	}
}

// TestFileStoreCacheIsBounded: however many sessions are read, the cache
// keeps at most its bound.
func TestFileStoreCacheIsBounded(t *testing.T) {
	defer func(n int) { maxCachedSessions = n }(maxCachedSessions)
	maxCachedSessions = 64
	dir := t.TempDir()
	ctx := context.Background()
	s, _ := NewFileStore(dir)
	w := &FileStore{Dir: dir}
	now := time.Now()
	n := maxCachedSessions + 100
	keys := make([]string, n)
	for i := range keys {
		keys[i] = keyOf(fmt.Sprint(i))
		if err := w.writeOnly(keys[i], Session{Subject: "p", Created: now, Expires: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range keys {
		if _, err := s.Get(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.sessions().Len(); got != maxCachedSessions {
		t.Fatalf("cache holds %d sessions, want the bound %d", got, maxCachedSessions)
	}
}

// TestFileStoreCacheRechecksOnceASecond: within fileRecheck a cached
// session is answered without looking at its file, so another process's
// sign-out is seen by the next lookup after it; this process's own
// sign-out at once.
func TestFileStoreCacheRechecksOnceASecond(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	a, _ := NewFileStore(dir)
	b, _ := NewFileStore(dir)
	now := time.Now()
	key := keyOf("cookie")
	if err := a.Put(ctx, key, Session{Subject: "alice", CSRF: "x", Created: now, Expires: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, key); err != nil {
		t.Fatal(err)
	}
	if err := a.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Get(ctx, key); !errors.Is(err, ErrNoSession) {
		t.Fatalf("a, which ended it, reads %v", err)
	}
	b.recheck = time.Hour
	if s, err := b.Get(ctx, key); err != nil || s.Subject != "alice" {
		t.Fatalf("b within its recheck time: %+v %v, want its cached alice", s, err)
	}
	b.recheck = time.Nanosecond
	if _, err := b.Get(ctx, key); !errors.Is(err, ErrNoSession) {
		t.Fatalf("b after its recheck time: %v, want no session", err)
	}
}
