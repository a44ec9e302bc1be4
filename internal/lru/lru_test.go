package lru

import (
	"fmt"
	"testing"
)

func TestBoundAndOrder(t *testing.T) {
	c := New[int](3)
	for i := range 10 {
		c.Put(fmt.Sprint(i), i, c.Gen())
		c.Get("0") // kept in use, so never the least recent
	}
	if c.Len() != 3 {
		t.Fatalf("len %d, want the bound 3", c.Len())
	}
	for _, k := range []string{"0", "8", "9"} {
		if _, ok := c.Get(k); !ok {
			t.Fatalf("%s evicted", k)
		}
	}
	if _, ok := c.Get("7"); ok {
		t.Fatal("7 kept past the bound")
	}
}

func TestFillFencedByInvalidation(t *testing.T) {
	c := New[string](10)
	g := c.Gen()
	c.Drop("a") // the source changed while the reader was reading
	if c.Put("a", "stale", g) {
		t.Fatal("a value read before an invalidation was stored")
	}
	if _, ok := c.Get("a"); ok {
		t.Fatal("stale value served")
	}
	g = c.Gen()
	c.Clear()
	if c.Put("b", "stale", g) {
		t.Fatal("stored across a Clear")
	}
	if !c.Put("b", "fresh", c.Gen()) {
		t.Fatal("a fresh fill refused")
	}
}
