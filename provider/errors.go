package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Sentinel errors.
var (
	// ErrUnknownProvider is returned by Load and Resolve when the configured
	// provider name is not one folio knows.
	ErrUnknownProvider = errors.New("unknown provider")
	// ErrNotLinked is returned by Load when the provider is known but its
	// package was not linked in (import provider/builtin).
	ErrNotLinked = errors.New("provider not linked in")
	// ErrConfig is wrapped by every configuration error Load and Resolve
	// return: a bad config.json, a missing model or key, a bad value.
	ErrConfig = errors.New("provider configuration")
	// ErrBadRequest is the cause behind the *Error a client returns when a
	// Request cannot be sent at all (a message with an unknown role, a tool
	// schema that is not a JSON object). Retrying cannot help.
	ErrBadRequest = errors.New("request cannot be sent")
	// ErrIdleTimeout is the cause behind a timeout-class *Error when a
	// stream received no bytes for the configured idle timeout.
	ErrIdleTimeout = errors.New("stream idle timeout")
)

// Class is the kind of a provider failure; it decides retrying and what the
// user is told.
type Class string

// The error classes.
const (
	ClassRateLimit Class = "rate_limit" // too many requests; RetryAfter may say when to try again
	ClassAuth      Class = "auth"       // missing or wrong credentials
	ClassAuthz     Class = "authz"      // credentials valid but not allowed (permission, quota, billing)
	ClassContext   Class = "context"    // the prompt does not fit the model's context window
	ClassPolicy    Class = "policy"     // refused by a content policy or filter
	ClassProvider  Class = "provider"   // the provider failed or rejected the request
	ClassTransport Class = "transport"  // the connection failed or the stream broke off
	ClassTimeout   Class = "timeout"    // no answer in time (idle stream, deadline)
	ClassCancelled Class = "cancelled"  // the caller cancelled the request
)

// Classes lists every class, for validation and documentation.
var Classes = []Class{ClassRateLimit, ClassAuth, ClassAuthz, ClassContext, ClassPolicy, ClassProvider, ClassTransport, ClassTimeout, ClassCancelled}

// ParseClass accepts a class name with either '-' or '_' ("rate-limit").
func ParseClass(s string) (Class, bool) {
	c := Class(strings.ReplaceAll(strings.ToLower(s), "-", "_"))
	for _, k := range Classes {
		if c == k {
			return c, true
		}
	}
	return "", false
}

// Error is a classified provider failure. Msg is safe to show a user: it
// never holds keys, request bodies or tool arguments.
type Error struct {
	Class    Class
	Provider string
	// Status is the HTTP status when the failure came with one, else 0.
	Status int
	// RetryAfter is how long the provider asked us to wait, or 0.
	RetryAfter time.Duration
	Msg        string
	// Err is the underlying cause, for errors.Is and logs.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	b.WriteString(": ")
	b.WriteString(string(e.Class))
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether sending the same request again may succeed.
// Rate limits, broken connections, timeouts and server-side failures are
// retryable; a rejected request (4xx other than 408, 409 and 429) is not.
func (e *Error) Retryable() bool {
	switch e.Class {
	case ClassRateLimit, ClassTransport, ClassTimeout:
		return true
	case ClassProvider:
		return e.Status == 0 || e.Status >= 500 || e.Status == http.StatusRequestTimeout || e.Status == http.StatusConflict
	}
	return false
}

// BadRequest builds the non-retryable error for a Request a client cannot
// send; see ErrBadRequest.
func BadRequest(providerName, format string, args ...any) *Error {
	return &Error{Class: ClassProvider, Provider: providerName, Status: http.StatusBadRequest, Msg: fmt.Sprintf(format, args...), Err: ErrBadRequest}
}

// AsError returns err as an *Error, or nil when it is not one.
func AsError(err error) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	return nil
}

// FromStatus classifies an HTTP error response. code and typ are the
// provider's machine-readable error code and type (either may be empty), msg
// its human message. The Retry-After header (seconds or an HTTP date) and
// OpenAI's retry-after-ms are honoured; now is used for the date form.
func FromStatus(providerName string, status int, header http.Header, code, typ, msg string, now time.Time) *Error {
	e := &Error{Provider: providerName, Status: status, Msg: msg}
	if e.Msg == "" {
		e.Msg = http.StatusText(status)
	}
	if e.Msg == "" {
		e.Msg = fmt.Sprintf("HTTP status %d", status)
	}
	e.Class = classify(status, code, typ, msg)
	if header != nil {
		e.RetryAfter = retryAfter(header, now)
	}
	return e
}

// FromEvent classifies an error a provider sent inside a stream (an
// OpenAI-style {"error":{...}} chunk or an Anthropic error event). The HTTP
// status was 200, so the class comes from the code and type alone.
func FromEvent(providerName, code, typ, msg string) *Error {
	e := &Error{Provider: providerName, Msg: msg, Class: classify(0, code, typ, msg)}
	// A stream that was accepted and then failed on the server side is worth
	// retrying, unless the error says the request itself was bad: mark those
	// as 400 so Retryable says no.
	if e.Class == ClassProvider && (strings.Contains(typ, "invalid_request") || strings.Contains(code, "invalid_request")) {
		e.Status = http.StatusBadRequest
	}
	if e.Msg == "" {
		e.Msg = "the provider reported an error in the stream"
	}
	return e
}

// classify maps what a provider said to a Class. Codes and types are checked
// before the status because providers overload 400 and 429.
func classify(status int, code, typ, msg string) Class {
	lc, lt, lm := strings.ToLower(code), strings.ToLower(typ), strings.ToLower(msg)
	has := func(s string, subs ...string) bool {
		for _, sub := range subs {
			if strings.Contains(s, sub) {
				return true
			}
		}
		return false
	}
	switch {
	case has(lc, "context_length", "context_window") || has(lt, "request_too_large") ||
		has(lm, "context length", "context window", "maximum context", "prompt is too long", "too many tokens", "exceeds the context", "context limit", "input tokens exceed"):
		return ClassContext
	case has(lc, "insufficient_quota", "billing") || has(lt, "billing_error", "insufficient_quota"):
		return ClassAuthz
	case has(lc, "content_policy", "content_filter", "safety") || has(lt, "content_policy", "content_filter"):
		return ClassPolicy
	case has(lc, "rate_limit") || has(lt, "rate_limit"):
		return ClassRateLimit
	case has(lc, "invalid_api_key") || has(lt, "authentication"):
		return ClassAuth
	case has(lt, "permission"):
		return ClassAuthz
	case has(lt, "timeout") || has(lc, "timeout"):
		return ClassTimeout
	}
	switch {
	case status == http.StatusTooManyRequests:
		return ClassRateLimit
	case status == http.StatusUnauthorized:
		return ClassAuth
	case status == http.StatusForbidden || status == http.StatusPaymentRequired:
		return ClassAuthz
	case status == http.StatusRequestEntityTooLarge:
		return ClassContext
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		return ClassTimeout
	}
	return ClassProvider
}

// retryAfter reads the wait a response asks for: retry-after-ms, then
// Retry-After in seconds or as an HTTP date. It returns 0 when there is none
// or it cannot be read.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// Classify turns a failure that is not an HTTP error response (context
// cancellation, idle timeout, network error, truncated stream) into an
// *Error. An *Error passes through unchanged. ctx is the request's context:
// when it was cancelled, the failure is ClassCancelled whatever the
// transport said.
func Classify(ctx context.Context, providerName string, err error) *Error {
	if err == nil {
		return nil
	}
	if pe := AsError(err); pe != nil {
		return pe
	}
	e := &Error{Provider: providerName, Err: err}
	switch {
	case errors.Is(err, ErrIdleTimeout):
		e.Class, e.Msg = ClassTimeout, "the stream sent nothing for too long"
	case ctx != nil && ctx.Err() != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		e.Class, e.Msg = ClassTimeout, "the request deadline passed"
	case ctx != nil && ctx.Err() != nil, errors.Is(err, context.Canceled):
		e.Class, e.Msg = ClassCancelled, "the request was cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		e.Class, e.Msg = ClassTimeout, "the request deadline passed"
	case isNetTimeout(err):
		e.Class, e.Msg = ClassTimeout, "the connection timed out"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		e.Class, e.Msg = ClassTransport, "the connection closed in the middle of the stream"
	default:
		var ne net.Error
		var oe *net.OpError
		if errors.As(err, &ne) || errors.As(err, &oe) {
			e.Class, e.Msg = ClassTransport, "connection failed: "+safeNetMsg(err)
		} else {
			e.Class, e.Msg = ClassTransport, err.Error()
		}
	}
	return e
}

func isNetTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// safeNetMsg keeps the innermost network error text (say, "connection
// refused"), which names no URL and so no query-string secrets.
func safeNetMsg(err error) string {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err.Error()
	}
	return err.Error()
}

// ParseErrorBody reads an HTTP error body in the shapes servers use:
// {"error":{"message","type","code"}} (OpenAI, Anthropic, OpenRouter),
// {"error":"text"} (Ollama), {"message","type","code"} (vLLM) and
// {"detail":"text"}. code may be a string or a number. Anything else yields
// empty strings; a long message is cut to keep error texts bounded.
func ParseErrorBody(body []byte) (code, typ, msg string) {
	var top map[string]jsontext.Value
	if json.Unmarshal(body, &top) != nil {
		return "", "", ""
	}
	read := func(obj map[string]jsontext.Value) {
		code, typ, msg = scalar(obj["code"]), scalar(obj["type"]), scalar(obj["message"])
	}
	if inner, ok := top["error"]; ok {
		var obj map[string]jsontext.Value
		if json.Unmarshal(inner, &obj) == nil {
			read(obj)
		} else {
			msg = scalar(inner)
		}
	} else {
		read(top)
		if msg == "" {
			msg = scalar(top["detail"])
		}
	}
	if typ == "error" { // vLLM's {"object":"error"} style puts nothing useful here
		typ = ""
	}
	const limit = 500
	if len(msg) > limit {
		msg = msg[:limit] + "…"
	}
	return code, typ, msg
}

// scalar returns a JSON string's value, a number's text, or "".
func scalar(v jsontext.Value) string {
	switch v.Kind() {
	case '"':
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
	case '0':
		return string(v)
	}
	return ""
}
