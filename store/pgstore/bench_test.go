package pgstore

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// BenchmarkNotifyFanOut measures appends per second through one
// PostgreSQL with three replicas listening: each append is a transaction
// with its NOTIFY, and every replica reads it into its copy (Follow). The
// clock stops when all three copies hold every append. Eight writers append
// at once, each to its own conversation under its lease; replicas=0 is the
// same without listeners, for comparison.
//
//	eval "$(.ci/pg-start --export)"; go test -run '^$' -bench NotifyFanOut -benchtime 2000x ./store/pgstore
func BenchmarkNotifyFanOut(b *testing.B) {
	for _, n := range []int{0, 3} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) { benchFanOut(b, n) })
	}
}

func benchFanOut(b *testing.B, replicas int) {
	u := freshURL(b)
	const convs = 8
	st, err := Open(context.Background(), u)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var reps []*Mirror
	changes := make(chan string, 1<<16)
	for range replicas {
		s, err := Open(context.Background(), u)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		m := NewMirror(s, b.TempDir(), nil)
		m.OnChange(func(string) {
			select {
			case changes <- "":
			default:
			}
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { m.Run(ctx); close(done) }()
		defer func() { cancel(); <-done }()
		reps = append(reps, m)
	}
	var meds []*Medium
	for i := range convs {
		id := fmt.Sprintf("bench-%d", i)
		m, err := st.OpenMedium(id)
		if err != nil {
			b.Fatal(err)
		}
		defer m.Close()
		if err := m.Replace([]byte(`{"type":"conversation","version":3,"conversationId":"` + id + `"}` + "\n")); err != nil {
			b.Fatal(err)
		}
		for _, r := range reps {
			if err := r.Sync(context.Background(), id); err != nil {
				b.Fatal(err)
			}
		}
		meds = append(meds, m)
	}
	rec := []byte(`{"type":"meta","at":"2026-01-01T00:00:00.000Z","title":"a title of some length for the benchmark"}` + "\n")
	b.ResetTimer()
	start := time.Now()
	// One writer per conversation, at once, as replicas owning different
	// conversations write.
	errs := make(chan error, convs)
	for w, m := range meds {
		go func() {
			for i := w; i < b.N; i += convs {
				if err := m.Append(rec); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range convs {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	// Wait until every copy holds every append.
	for {
		behind := false
		for _, r := range reps {
			for _, m := range meds {
				p, _ := r.Path(m.id)
				fi, err := os.Stat(p)
				if err != nil || fi.Size() != m.size {
					behind = true
				}
			}
		}
		if !behind {
			break
		}
		select {
		case <-changes:
		case <-time.After(50 * time.Millisecond): // a copy may have caught up without a new notice
		}
	}
	el := time.Since(start)
	b.ReportMetric(float64(b.N)/el.Seconds(), "appends/s")
	b.ReportMetric(float64(b.N*replicas)/el.Seconds(), "deliveries/s")
}
