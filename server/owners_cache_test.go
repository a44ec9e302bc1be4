package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/foliodev/folio/internal/lru"
)

// TestFileOwnersCacheFollowsTheFolder: two owner stores over one folder
// stand for two processes sharing a data folder; once the other's recheck
// time passed, a reassignment by one is what the other answers, though it
// had the old owner cached (and within it, the cached owner); the cache
// keeps at most its bound.
func TestFileOwnersCacheFollowsTheFolder(t *testing.T) {
	dir := t.TempDir()
	a, b := newFileOwners(dir), newFileOwners(dir)
	b.recheck = time.Nanosecond // b's recheck time passes at once
	id := "c-owners01"
	if err := a.SetOwner(id, "alice"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if o, err := b.Owner(id); err != nil || o != "alice" {
			t.Fatalf("b: %q %v, want alice", o, err)
		}
	}
	if err := a.SetOwner(id, "bob"); err != nil {
		t.Fatal(err)
	}
	b.recheck = time.Hour
	if o, err := b.Owner(id); err != nil || o != "alice" {
		t.Fatalf("b within its recheck time answers %q %v, want its cached alice", o, err)
	}
	if o, err := a.Owner(id); err != nil || o != "bob" {
		t.Fatalf("a, which reassigned it, answers %q %v", o, err)
	}
	b.recheck = time.Nanosecond
	if o, err := b.Owner(id); err != nil || o != "bob" {
		t.Fatalf("after a's reassignment b answers %q %v, want bob", o, err)
	}
	if err := a.SetOwner(id, ""); err != nil {
		t.Fatal(err)
	}
	if o, err := b.Owner(id); err != nil || o != "" {
		t.Fatalf("after a made it nobody's b answers %q %v", o, err)
	}

	small := &fileOwners{dir: dir, cache: lru.New[fileOwner](8)}
	for i := range 20 {
		id := fmt.Sprintf("c-bound%03d", i)
		if err := a.SetOwner(id, "p"); err != nil {
			t.Fatal(err)
		}
		if _, err := small.Owner(id); err != nil {
			t.Fatal(err)
		}
	}
	if n := small.cache.Len(); n != 8 {
		t.Fatalf("owner cache holds %d, want its bound 8", n)
	}
}
