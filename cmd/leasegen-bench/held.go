package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leasegen/leasegen/runtime"
)

// heldName names a figure of the held-snapshot run.
func heldName(o options, what string) string {
	return fmt.Sprintf("held snapshot, %s at %d tasks/s: %s", o.held, o.heldRate, what)
}

// heldWindow is what one window of the held-snapshot run saw.
type heldWindow struct {
	started  float64 // tasks started a second
	p50, p99 float64 // pickup: enqueue to start, ms
	backlog  int64   // undo history (MySQL) or dead tuples (PostgreSQL); -1: unreadable
	scan     float64 // the claim scan probe, ms
	cpu      float64 // server CPU per started task, µs (0: not measured)
}

// heldSnapshot offers a steady load (o.heldRate tasks a second, enqueued
// in this process, one worker on the default Config) while another
// session holds a snapshot open, as a long report on the same primary
// would: purge (MySQL) or vacuum (PostgreSQL) cannot remove what the
// claims and completions leave behind. One window of load is measured
// before the snapshot; then o.held is cut into windows, each reporting
// the pickup delay of the tasks started in it, the rate they started at,
// the history or dead tuples, a timed probe of the claim's scan and the
// server's CPU per task. The window before, the first and the last
// become figures; every window is logged.
func heldSnapshot(ctx context.Context, o options, s *scratch, t *table) error {
	type start struct {
		at   time.Time
		wait time.Duration
	}
	var mu sync.Mutex
	var starts []start
	w, err := runtime.NewWorker(s.engine, runtime.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	err = w.Handle("ping", func(_ context.Context, task *runtime.Task) error {
		sent, _ := unstamp(task.Payload)
		now := time.Now()
		mu.Lock()
		starts = append(starts, start{now, now.Sub(sent)})
		mu.Unlock()
		return nil
	})
	if err != nil {
		return err
	}
	if err := w.Start(ctx); err != nil {
		return err
	}
	defer w.Stop(ctx) //nolint:errcheck // the run is over
	cpu, measureCPU, err := newCPUMeter(ctx, s)
	if err != nil {
		return err
	}

	window := o.held / heldWindows
	// Enough for a window past the end: the sending stops when the last
	// window ends, so that it too sees the offered rate throughout.
	count := int(float64(o.heldRate) * (2*window + o.held).Seconds())
	sendCtx, stopSending := context.WithCancel(ctx)
	defer stopSending()
	sent := make(chan error, 1)
	go func() { sent <- paced(sendCtx, s.client, "ping", o.heldRate, count, 0) }()
	time.Sleep(min(window/4, 10*time.Second)) // the worker settles into the load

	// measure sleeps one window and reports what it saw; window 0 is the
	// one before the snapshot.
	measure := func(i int) (hw heldWindow, err error) {
		from := time.Now()
		cpuFrom, _ := cpu.read()
		time.Sleep(window)
		to := time.Now()
		if measureCPU {
			cpuTo, err := cpu.read()
			if err != nil {
				return hw, err
			}
			hw.cpu = float64((cpuTo - cpuFrom).Microseconds())
		}
		mu.Lock()
		var waits []time.Duration
		for _, st := range starts {
			if !st.at.Before(from) && st.at.Before(to) {
				waits = append(waits, st.wait)
			}
		}
		mu.Unlock()
		if len(waits) == 0 {
			return hw, fmt.Errorf("held snapshot: no task started in window %d", i)
		}
		slices.Sort(waits)
		hw.started = float64(len(waits)) / to.Sub(from).Seconds()
		hw.p50, hw.p99 = millis(waits[len(waits)/2]), millis(waits[min(len(waits)-1, len(waits)*99/100)])
		hw.cpu /= float64(len(waits))
		if hw.backlog, err = backlog(ctx, s); err != nil {
			// MySQL needs the PROCESS privilege: the figure is left out.
			fmt.Fprintf(os.Stderr, "leasegen-bench: held snapshot: %s unreadable, left out: %v\n", backlogWhat(s), err)
			hw.backlog = -1
		}
		if hw.scan, err = probeClaimScan(ctx, s); err != nil {
			return hw, err
		}
		what := fmt.Sprintf("window %d of %d", i, heldWindows)
		if i == 0 {
			what = "before the snapshot"
		}
		fmt.Fprintf(os.Stderr, "leasegen-bench: held snapshot, %s (%s): %.0f started/s, pickup p50 %.1f ms, p99 %.1f ms, %s %d, claim scan %.2f ms, server CPU %.1f µs/task\n",
			what, window, hw.started, hw.p50, hw.p99, backlogWhat(s), hw.backlog, hw.scan, hw.cpu)
		return hw, nil
	}
	before, err := measure(0)
	if err != nil {
		return err
	}
	release, err := holdSnapshot(ctx, s)
	if err != nil {
		return err
	}
	defer release()
	var windows []heldWindow
	for i := range heldWindows {
		hw, err := measure(i + 1)
		if err != nil {
			return err
		}
		windows = append(windows, hw)
	}
	stopSending()
	// The sending is cut off at the end on purpose; any other error counts.
	if err := <-sent; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	for _, w := range []struct {
		name string
		hw   heldWindow
	}{{"before the snapshot", before}, {"first window", windows[0]}, {"last window", windows[len(windows)-1]}} {
		t.add(heldName(o, "pickup p50, "+w.name), "ms", w.hw.p50)
		t.add(heldName(o, "pickup p99, "+w.name), "ms", w.hw.p99)
		t.add(heldName(o, "tasks started a second, "+w.name), "tasks/s", w.hw.started)
		if w.hw.backlog >= 0 {
			t.add(heldName(o, backlogWhat(s)+", "+w.name), "rows", float64(w.hw.backlog))
		}
		t.add(heldName(o, "claim scan probe, "+w.name), "ms", w.hw.scan)
		if measureCPU {
			t.add(heldName(o, "server CPU per task, "+w.name), "µs/task", w.hw.cpu)
		}
	}
	return nil
}

// heldWindows is how many windows the held snapshot's run is cut into.
const heldWindows = 5

// holdSnapshot opens a transaction on a connection of its own that holds
// a snapshot of leasegen_tasks until release.
func holdSnapshot(ctx context.Context, s *scratch) (release func(), err error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	begin := "START TRANSACTION WITH CONSISTENT SNAPSHOT"
	if s.kind == kindPostgres {
		begin = "BEGIN ISOLATION LEVEL REPEATABLE READ"
	}
	var n int64
	if _, err = conn.ExecContext(ctx, begin); err == nil {
		err = conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM leasegen_tasks").Scan(&n)
	}
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("held snapshot: open it: %w", err)
	}
	return func() {
		conn.ExecContext(context.Background(), "ROLLBACK") //nolint:errcheck // the connection closes next
		conn.Close()
	}, nil
}

// backlogWhat names what backlog reads on s's engine.
func backlogWhat(s *scratch) string {
	if s.kind == kindPostgres {
		return "dead tuples of leasegen_tasks"
	}
	return "InnoDB history list length"
}

// backlog reads what the held snapshot keeps from being cleaned up: the
// undo history InnoDB cannot purge, or the dead tuples of leasegen_tasks
// vacuum cannot remove (as the statistics last counted them).
func backlog(ctx context.Context, s *scratch) (int64, error) {
	var n int64
	if s.kind == kindPostgres {
		err := s.db.QueryRowContext(ctx, "SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'leasegen_tasks'").Scan(&n)
		return n, err
	}
	var typ, name, status string
	if err := s.db.QueryRowContext(ctx, "SHOW ENGINE INNODB STATUS").Scan(&typ, &name, &status); err != nil {
		return 0, err
	}
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, "History list length "); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("held snapshot: SHOW ENGINE INNODB STATUS has no history list length")
}

// probeClaimScan times a read of the claim's first step: the next queued
// tasks in claim order, over the index entries claims and completions
// left at the head of the queue.
func probeClaimScan(ctx context.Context, s *scratch) (float64, error) {
	query := "SELECT id FROM leasegen_tasks WHERE status = 'QUEUED' AND task_type IN ('ping') AND due_at <= NOW(3) ORDER BY due_priority DESC, due_at, id LIMIT 100"
	if s.kind == kindPostgres {
		query = "SELECT id FROM leasegen_tasks WHERE status = 'QUEUED' AND task_type = 'ping' AND available_at <= now() ORDER BY priority DESC, available_at, id LIMIT 100"
	}
	began := time.Now()
	rows, err := s.db.QueryContext(ctx, query)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	return millis(time.Since(began)), nil
}
