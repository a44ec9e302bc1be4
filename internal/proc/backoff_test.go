package proc

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b Backoff
		waited := func(ctx context.Context) (time.Duration, error) {
			start := time.Now()
			err := b.Wait(ctx)
			return time.Since(start), err
		}
		if d, err := waited(t.Context()); d != 0 || err != nil {
			t.Fatalf("no crash: waited %v, %v", d, err)
		}
		b.Crashed()
		if d, _ := waited(t.Context()); d != restartBase {
			t.Fatalf("after one crash: waited %v, want %v", d, restartBase)
		}
		b.Crashed()
		b.Crashed()
		// Time since the latest crash counts toward the delay.
		time.Sleep(150 * time.Millisecond)
		if d, _ := waited(t.Context()); d != 4*restartBase-150*time.Millisecond {
			t.Fatalf("after three crashes and 150ms: waited %v", d)
		}
		b.Crashed()
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		if d, err := waited(ctx); d != 50*time.Millisecond || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("canceled wait: %v, %v", d, err)
		}
		b.Succeeded()
		if d, _ := waited(t.Context()); d != 0 {
			t.Fatalf("after a good call: waited %v", d)
		}
	})
}
