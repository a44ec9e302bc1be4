package toolview

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foliodev/folio/transcript"
)

// Defaults for a host built without options.
const (
	DefaultPayloadLimit = 256 << 10
	DefaultCadence      = 50 * time.Millisecond
	DefaultRangeLimit   = 64 << 10
	defaultKeepClosed   = 1024
	defaultArtifactMax  = 1 << 30
	maxSupplementals    = 32
)

// Host runs tool invocations and keeps their presentation items. Build one
// with New; it is ready to use. Close tears it down, closing every open
// invocation.
type Host struct {
	clock       clock
	limit       int64
	cadence     time.Duration
	rangeLimit  int64
	artifactDir string
	artifactMax int64
	kept        func(ref, path string)
	gen         Generation
	log         *slog.Logger
	keepClosed  int
	ids         *transcript.IDSource

	mu         sync.Mutex
	open       map[string]*Invocation
	closed     map[string]*Record
	closedFIFO []string
	shut       bool

	subMu sync.Mutex
	subs  atomic.Pointer[[]*subscriber]

	m counters
}

type subscriber struct{ fn func(Change) }

// Option configures a Host.
type Option func(*Host)

// WithPayloadLimit sets the encoded payload bound in bytes.
func WithPayloadLimit(n int64) Option { return func(h *Host) { h.limit = n } }

// WithCadence sets the minimum spacing of live deliveries per item. Zero
// disables the cadence: every accepted update is delivered at once.
func WithCadence(d time.Duration) Option { return func(h *Host) { h.cadence = d } }

// WithArtifactDir gives the host the folder where artifacts live (the data
// folder next to the conversation log). Without it, artifacts are refused.
func WithArtifactDir(dir string) Option { return func(h *Host) { h.artifactDir = dir } }

// WithArtifactKept has the host call fn with each artifact an invocation
// keeps at closure (the one its retained checkpoint refers to), once the
// file is synced and closed and before the closure is published: a server
// whose replicas share a database copies the file there, so the artifact is
// readable wherever the entry that refers to it is. fn runs under the
// invocation's lock and must not call back into the host.
func WithArtifactKept(fn func(ref, path string)) Option { return func(h *Host) { h.kept = fn } }

// WithLogger sets where bounded diagnostics are logged. The default discards.
func WithLogger(l *slog.Logger) Option { return func(h *Host) { h.log = l } }

// New returns a ready host.
func New(opts ...Option) *Host {
	h := &Host{
		clock:       realClock{},
		limit:       DefaultPayloadLimit,
		cadence:     DefaultCadence,
		rangeLimit:  DefaultRangeLimit,
		artifactMax: defaultArtifactMax,
		gen:         1,
		log:         slog.New(slog.DiscardHandler),
		keepClosed:  defaultKeepClosed,
		ids:         transcript.NewIDSource(),
		open:        map[string]*Invocation{},
		closed:      map[string]*Record{},
	}
	for _, o := range opts {
		o(h)
	}
	return h
}

// Spec describes an invocation to open.
type Spec struct {
	// ID is the invocation ID (the engine uses the tool call ID). Empty asks
	// the host to mint one.
	ID string
	// Tool is the tool's name, shown in fallbacks and receipts.
	Tool string
	// Producer is the manifest of the plugin or built-in that implements the
	// tool. Updates are validated against its adapters and arguments against
	// its tool schema. Nil means a producer that declares nothing: every
	// presentation update is refused as undeclared.
	Producer *Manifest
	// Retention applies to the primary item.
	Retention Retention
}

// Open starts an invocation scope. The engine opens it when the model starts
// a tool call, so argument drafts can be shown before the arguments are
// complete. Its elapsed time runs from Invoke, when the tool starts running,
// until closure; a scope closed without being invoked times from Open.
func (h *Host) Open(spec Spec) (*Invocation, error) {
	if spec.ID == "" {
		spec.ID = h.ids.Next()
	}
	if err := checkName(spec.Tool); err != nil {
		return nil, fmt.Errorf("toolview: tool name %v", err)
	}
	inv := &Invocation{
		host:     h,
		id:       spec.ID,
		tool:     spec.Tool,
		producer: spec.Producer,
		start:    h.clock.Now(),
		items:    map[string]*item{},
	}
	inv.cond = sync.NewCond(&inv.mu)
	inv.primary = inv.newItem("", spec.Retention)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.shut {
		return nil, ErrHostClosed
	}
	if _, dup := h.open[spec.ID]; dup {
		return nil, fmt.Errorf("%w: %q", ErrDuplicateInvocation, spec.ID)
	}
	if _, dup := h.closed[spec.ID]; dup {
		return nil, fmt.Errorf("%w: %q", ErrDuplicateInvocation, spec.ID)
	}
	h.open[spec.ID] = inv
	h.m.opened.Add(1)
	return inv, nil
}

// ToolFunc is a tool's body. It receives only the complete, validated
// arguments; argument drafts never reach it.
type ToolFunc func(ctx context.Context, inv *Invocation, args []byte) (Result, error)

// Run opens an invocation, runs fn and closes the scope when fn returns.
func (h *Host) Run(ctx context.Context, spec Spec, args []byte, fn ToolFunc) (Record, error) {
	inv, err := h.Open(spec)
	if err != nil {
		return Record{}, err
	}
	return inv.Invoke(ctx, args, fn), nil
}

// Release forgets a closed invocation once the engine has written its record
// to the transcript; its ID may then be opened again.
func (h *Host) Release(id string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.closed[id]; !ok {
		return fmt.Errorf("%w: %q", ErrUnknownInvocation, id)
	}
	delete(h.closed, id)
	return nil
}

// Subscribe registers fn for every change of every invocation and returns a
// function that removes it. fn must not block for long and must not call
// Flush, Close or Invoke on the invocation it is told about.
func (h *Host) Subscribe(fn func(Change)) (cancel func()) {
	s := &subscriber{fn: fn}
	h.subMu.Lock()
	var next []*subscriber
	if cur := h.subs.Load(); cur != nil {
		next = append(next, *cur...)
	}
	next = append(next, s)
	h.subs.Store(&next)
	h.subMu.Unlock()
	return func() {
		h.subMu.Lock()
		defer h.subMu.Unlock()
		cur := h.subs.Load()
		if cur == nil {
			return
		}
		var next []*subscriber
		for _, x := range *cur {
			if x != s {
				next = append(next, x)
			}
		}
		h.subs.Store(&next)
	}
}

func (h *Host) publish(c Change) {
	if subs := h.subs.Load(); subs != nil {
		for _, s := range *subs {
			s.fn(c)
		}
	}
}

// Close tears the host down: every open invocation is closed as failed with
// reason "host_shutdown", and Open is refused from now on.
func (h *Host) Close() error {
	h.mu.Lock()
	h.shut = true
	invs := make([]*Invocation, 0, len(h.open))
	for _, inv := range h.open {
		invs = append(invs, inv)
	}
	h.mu.Unlock()
	for _, inv := range invs {
		inv.Close(Outcome{Status: transcript.ToolFailed, Reason: "host_shutdown"},
			Result{Text: "the tool was interrupted because folio shut down", IsError: true})
	}
	return nil
}

// retire moves a closed invocation from the open set to the closed set,
// forgetting the oldest closed ones beyond the keep limit.
func (h *Host) retire(inv *Invocation, rec *Record) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.open, inv.id)
	h.closed[inv.id] = rec
	h.closedFIFO = append(h.closedFIFO, inv.id)
	for len(h.closedFIFO) > h.keepClosed {
		old := h.closedFIFO[0]
		h.closedFIFO = h.closedFIFO[1:]
		delete(h.closed, old)
	}
	h.m.closed.Add(1)
}

// removeFile deletes an artifact file. Failures are logged without the path.
func (h *Host) removeFile(path string) {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		h.log.Warn("toolview: could not remove an artifact", "error_kind", fmt.Sprintf("%T", err))
	}
}
