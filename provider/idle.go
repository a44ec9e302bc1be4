package provider

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"
)

// idleTimeoutClient returns an HTTP client whose requests fail with
// ErrIdleTimeout (as the cause of their context) when no response bytes
// arrive for idle: neither the headers after the request was sent, nor the
// next body bytes of a stream. A model that stalls mid-stream therefore ends
// in a timeout-class error instead of hanging the turn. base may be nil for
// http.DefaultTransport; clock may be nil for the system clock.
func idleTimeoutClient(base http.RoundTripper, idle time.Duration, clock Clock) *http.Client {
	if base == nil {
		base = http.DefaultTransport
	}
	if clock == nil {
		clock = SystemClock{}
	}
	return &http.Client{Transport: &idleTransport{base: base, idle: idle, clock: clock}}
}

type idleTransport struct {
	base  http.RoundTripper
	idle  time.Duration
	clock Clock
}

func (t *idleTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.idle <= 0 {
		return t.base.RoundTrip(req)
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	timer := t.clock.AfterFunc(t.idle, func() { cancel(ErrIdleTimeout) })
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		timer.Stop()
		cancel(nil)
		if context.Cause(ctx) == ErrIdleTimeout {
			return nil, ErrIdleTimeout
		}
		return nil, err
	}
	resp.Body = &idleBody{rc: resp.Body, ctx: ctx, cancel: cancel, timer: timer, idle: t.idle}
	timer.Reset(t.idle)
	return resp, nil
}

// idleBody restarts the watchdog on every read that returns bytes. Reads
// happen once per network read, not per event, so this costs little.
type idleBody struct {
	rc     io.ReadCloser
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  Timer
	idle   time.Duration
	once   sync.Once
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.timer.Reset(b.idle)
	}
	if err != nil && err != io.EOF && context.Cause(b.ctx) == ErrIdleTimeout {
		return n, ErrIdleTimeout
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.once.Do(func() {
		b.timer.Stop()
		b.cancel(nil)
	})
	return b.rc.Close()
}
