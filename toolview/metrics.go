package toolview

import (
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// counters are the host's metrics. They hold counts, byte sizes and fixed
// classifications only: never payloads, fragments, paths, invocation IDs or
// anything copied from arguments.
type counters struct {
	opened, closed        atomic.Int64
	accepted, published   atomic.Int64
	coalesced             atomic.Int64
	acceptedBytes         atomic.Int64
	maxPayload            atomic.Int64
	rejected              [numReasons]atomic.Int64
	draftBytes            atomic.Int64
	draftCheckpoints      atomic.Int64
	artifactReads         atomic.Int64
	artifactReadBytes     atomic.Int64
	artifactRangeRejected atomic.Int64
	ephemeralRemoved      atomic.Int64
	retainedCheckpoints   atomic.Int64
}

func (c *counters) noteAccepted(size int64) {
	c.accepted.Add(1)
	c.acceptedBytes.Add(size)
	for {
		m := c.maxPayload.Load()
		if size <= m || c.maxPayload.CompareAndSwap(m, size) {
			return
		}
	}
}

// Metrics is a point-in-time copy of the host's counters.
type Metrics struct {
	Opened, Closed, Open int64
	// Accepted counts updates that became an item's current value;
	// Published counts those delivered live; Coalesced counts accepted
	// values superseded before their cadence window opened.
	Accepted, Published, Coalesced int64
	AcceptedBytes                  int64
	MaxPayloadBytes                int64
	Rejected                       map[string]int64 // by Reason name
	DraftBytes, DraftCheckpoints   int64
	ArtifactReads                  int64
	ArtifactReadBytes              int64
	ArtifactRangeRejected          int64
	EphemeralRemoved               int64
	RetainedCheckpoints            int64
	PayloadLimit                   int64
	Cadence                        time.Duration
}

// Metrics returns a copy of the host's counters.
func (h *Host) Metrics() Metrics {
	c := &h.m
	m := Metrics{
		Opened:                c.opened.Load(),
		Closed:                c.closed.Load(),
		Accepted:              c.accepted.Load(),
		Published:             c.published.Load(),
		Coalesced:             c.coalesced.Load(),
		AcceptedBytes:         c.acceptedBytes.Load(),
		MaxPayloadBytes:       c.maxPayload.Load(),
		Rejected:              make(map[string]int64, numReasons),
		DraftBytes:            c.draftBytes.Load(),
		DraftCheckpoints:      c.draftCheckpoints.Load(),
		ArtifactReads:         c.artifactReads.Load(),
		ArtifactReadBytes:     c.artifactReadBytes.Load(),
		ArtifactRangeRejected: c.artifactRangeRejected.Load(),
		EphemeralRemoved:      c.ephemeralRemoved.Load(),
		RetainedCheckpoints:   c.retainedCheckpoints.Load(),
		PayloadLimit:          h.limit,
		Cadence:               h.cadence,
	}
	m.Open = m.Opened - m.Closed
	for r := Reason(0); r < numReasons; r++ {
		m.Rejected[r.String()] = c.rejected[r].Load()
	}
	return m
}

// WriteText writes the metrics in the Prometheus text exposition format. The
// only label is the rejection reason, a closed set.
func (m Metrics) WriteText(w io.Writer) error {
	p := func(name string, v int64) {
		fmt.Fprintf(w, "folio_toolview_%s %d\n", name, v)
	}
	p("invocations_opened_total", m.Opened)
	p("invocations_closed_total", m.Closed)
	p("invocations_open", m.Open)
	p("updates_accepted_total", m.Accepted)
	p("updates_published_total", m.Published)
	p("updates_coalesced_total", m.Coalesced)
	p("accepted_payload_bytes_total", m.AcceptedBytes)
	p("accepted_payload_bytes_max", m.MaxPayloadBytes)
	for r := Reason(0); r < numReasons; r++ {
		fmt.Fprintf(w, "folio_toolview_updates_rejected_total{reason=%q} %d\n", r.String(), m.Rejected[r.String()])
	}
	p("draft_bytes_total", m.DraftBytes)
	p("draft_checkpoints_total", m.DraftCheckpoints)
	p("artifact_reads_total", m.ArtifactReads)
	p("artifact_read_bytes_total", m.ArtifactReadBytes)
	p("artifact_range_rejected_total", m.ArtifactRangeRejected)
	p("ephemeral_items_removed_total", m.EphemeralRemoved)
	p("retained_checkpoints_total", m.RetainedCheckpoints)
	p("payload_limit_bytes", m.PayloadLimit)
	_, err := fmt.Fprintf(w, "folio_toolview_cadence_seconds %g\n", m.Cadence.Seconds())
	return err
}

// Diagnostic summarizes the rejections of one reason within one invocation.
// It is bounded: one per reason, with counts and sizes only.
type Diagnostic struct {
	Reason   Reason
	Count    int64
	Limit    int64 // the bound involved, when there is one
	LastSize int64 // the size (or offered revision) of the latest rejection
}

// String is the line folio shows for the diagnostic.
func (d Diagnostic) String() string {
	n := "1 update"
	if d.Count != 1 {
		n = fmt.Sprintf("%d updates", d.Count)
	}
	switch d.Reason {
	case ReasonOversized:
		return fmt.Sprintf("presentation: %s rejected as oversized (latest %s, bound %s); publish less detail or an artifact checkpoint", n, sizeText(d.LastSize), sizeText(d.Limit))
	case ReasonStale:
		return fmt.Sprintf("presentation: %s rejected as stale (revision %d not above %d)", n, d.LastSize, d.Limit)
	case ReasonClosed:
		return fmt.Sprintf("presentation: %s arrived after the invocation closed and were ignored", n)
	case ReasonSchema:
		return fmt.Sprintf("presentation: %s rejected: schema/version not declared in the producer's manifest", n)
	case ReasonMalformed:
		return fmt.Sprintf("presentation: %s rejected as malformed JSON", n)
	case ReasonArtifact:
		return fmt.Sprintf("presentation: %s rejected: artifact checkpoint does not match its artifact", n)
	case ReasonDraftGap:
		return fmt.Sprintf("presentation: %s of the argument draft rejected after a gap; waiting for a checkpoint", n)
	case ReasonDraftTruncated:
		return fmt.Sprintf("presentation: %s of the argument draft rejected after truncation; waiting for a checkpoint", n)
	case ReasonPlugin:
		return fmt.Sprintf("plugin: %s of protocol misbehaviour ignored", n)
	}
	return fmt.Sprintf("presentation: %s rejected (%s)", n, d.Reason)
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
