package toolview

import (
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
)

type adapterKey struct {
	schema  string
	version int64
}

// registry maps a payload schema and version to a renderer adapter. Each
// view (terminal, web bridge) keeps its own registry of its own adapter type.
// Generic code looks adapters up; it never inspects payloads. It is safe for
// concurrent use.
type registry[A any] struct {
	mu sync.RWMutex
	m  map[adapterKey]A
}

// Register adds (or replaces) the adapter for schema@version.
func (r *registry[A]) Register(schema string, version int64, a A) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[adapterKey]A{}
	}
	r.m[adapterKey{schema, version}] = a
}

// Lookup returns the adapter for the value's schema and version.
func (r *registry[A]) Lookup(schema string, version int64) (A, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	a, ok := r.m[adapterKey{schema, version}]
	return a, ok
}

// meta is the host metadata a view shows when it has no adapter for a value:
// never the payload itself.
type meta struct {
	Tool    string
	Status  string // "running", or a terminal status
	Elapsed time.Duration
	Size    int64 // encoded payload bytes, or committed artifact bytes
}

// metaOf builds the fallback metadata for one item of a state. now is the
// viewer's clock; it is used only while the invocation is open, so a closed
// invocation's time never moves.
func metaOf(s invState, key string, now time.Time) meta {
	m := meta{Tool: s.Tool, Status: "running", Elapsed: now.Sub(s.Start)}
	if !s.Open {
		m.Status = string(s.Outcome.Status)
		m.Elapsed = s.Duration
	}
	if it, ok := s.Item(key); ok && it.Value != nil {
		m.Size = it.Value.Size()
		if a := it.Value.Artifact; a != nil {
			m.Size += a.CommittedBytes
		}
	}
	return m
}

const maxFallbackTool = 48

// fallback is the bounded line shown for a value no adapter knows:
// "shell · running · 1.2s · 3.4 KiB". It never includes payload JSON.
func fallback(m meta) string {
	tool := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, m.Tool)
	if r := []rune(tool); len(r) > maxFallbackTool {
		tool = string(r[:maxFallbackTool-1]) + "…"
	}
	if tool == "" {
		tool = "tool"
	}
	parts := []string{tool, m.Status, elapsedText(m.Elapsed)}
	if m.Size > 0 {
		parts = append(parts, sizeText(m.Size))
	}
	return strings.Join(parts, " · ")
}

func elapsedText(d time.Duration) string {
	switch {
	case d < 0:
		d = 0
		fallthrough
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}
