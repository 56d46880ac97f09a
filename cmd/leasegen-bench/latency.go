package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/leasegen/leasegen/runtime"
)

// latency enqueues at a steady rate for a while and returns the
// enqueue-to-start times. With local true the enqueues go through the
// worker's own engine (a local enqueue wakes the worker); otherwise through a
// second engine on another pool, as another process would.
func latency(ctx context.Context, o options, s *scratch, local bool) ([]time.Duration, error) {
	var mu sync.Mutex
	var waits []time.Duration
	w, err := runtime.NewWorker(s.engine, runtime.Config{
		LeaseTimeout: 30 * time.Second, HeartbeatInterval: 5 * time.Second,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return nil, err
	}
	err = w.Handle("ping", func(_ context.Context, t *runtime.Task) error {
		sent := time.Unix(0, int64(binary.BigEndian.Uint64(t.Payload)))
		mu.Lock()
		waits = append(waits, time.Since(sent))
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := w.Start(ctx); err != nil {
		return nil, err
	}
	defer w.Stop(ctx) //nolint:errcheck // the run is over
	client := s.client
	if !local {
		other, err := s.reopen(ctx)
		if err != nil {
			return nil, err
		}
		defer other.close()
		client = other.client
	}
	time.Sleep(2 * time.Second) // let the idle back-off settle
	ticker := time.NewTicker(time.Second / time.Duration(o.rate))
	defer ticker.Stop()
	sent := 0
	for end := time.Now().Add(o.latencyFor); time.Now().Before(end); sent++ {
		<-ticker.C
		payload := binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixNano()))
		if _, err := client.Enqueue(ctx, "ping", payload); err != nil {
			return nil, err
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		mu.Lock()
		n := len(waits)
		mu.Unlock()
		if n == sent {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("latency: %d of %d tasks started", n, sent)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return waits, nil
}

// percentiles returns p50, p90 and p99 of ds.
func percentiles(ds []time.Duration) (p50, p90, p99 time.Duration) {
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	return at(.50), at(.90), at(.99)
}

func printLatency(ctx context.Context, o options) error {
	fmt.Printf("\n%-52s %8s %8s %8s\n", fmt.Sprintf("enqueue -> start at %d tasks/s for %s", o.rate, o.latencyFor), "p50", "p90", "p99")
	for _, local := range []bool{true, false} {
		s, err := newScratch(ctx, o)
		if err != nil {
			return err
		}
		waits, err := latency(ctx, o, s, local)
		s.close()
		if err != nil {
			return err
		}
		name := "enqueued in the worker's process"
		if !local {
			name = "enqueued from another process (engine)"
		}
		p50, p90, p99 := percentiles(waits)
		fmt.Printf("%-52s %8s %8s %8s\n", name, ms(p50), ms(p90), ms(p99))
	}
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000) }
