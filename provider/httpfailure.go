package provider

import (
	"bytes"
	"io"
	"net/http"
	"time"
)

// HTTPFailure captures a request's error response (status 400 and up)
// before an SDK interprets it. SDKs only understand their own vendor's error
// shape and drop the status when a compatible server answers differently
// (Ollama's {"error":"text"}); folio classifies from what was really sent.
// Use one per request; its Middleware method fits both SDKs' middleware
// option.
type HTTPFailure struct {
	Status int
	Header http.Header
	Body   []byte
}

// maxErrorBody bounds how much of an error body is kept.
const maxErrorBody = 64 << 10

// Middleware records an error response and gives the SDK an identical body.
func (f *HTTPFailure) Middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	resp, err := next(req)
	if err != nil || resp.StatusCode < 400 {
		return resp, err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	f.Status, f.Header, f.Body = resp.StatusCode, resp.Header, body
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// Err returns the classified error, or nil when no error response was seen.
func (f *HTTPFailure) Err(providerName string, now time.Time) *Error {
	if f.Status == 0 {
		return nil
	}
	code, typ, msg := ParseErrorBody(f.Body)
	return FromStatus(providerName, f.Status, f.Header, code, typ, msg, now)
}
