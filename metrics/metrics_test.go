package metrics

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	_ "modernc.org/sqlite"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/dbtest/pgtest"
	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/leasemysql"
	"github.com/leasegen/leasegen/runtime/driver/leasepostgres"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite"
)

// openEngine returns a migrated engine of kind observed by m.
func openEngine(t *testing.T, kind string, m runtime.Observer) (*runtime.Engine, *sql.DB) {
	t.Helper()
	switch kind {
	case "mysql":
		db := dbtest.New(t).DB
		e := runtime.NewEngine(leasemysql.New(db), runtime.WithObserver(m))
		dbtest.Must(t, "migrate", e.Migrate(context.Background()))
		return e, db
	case "postgres":
		db, err := leasepostgres.Open(pgtest.New(t))
		dbtest.Must(t, "open", err)
		t.Cleanup(func() { db.Close() })
		e := runtime.NewEngine(leasepostgres.New(db), runtime.WithObserver(m))
		dbtest.Must(t, "migrate", e.Migrate(context.Background()))
		return e, db
	}
	db, err := leasesqlite.Open(filepath.Join(t.TempDir(), "m.db"))
	dbtest.Must(t, "open", err)
	t.Cleanup(func() { db.Close() })
	e := runtime.NewEngine(leasesqlite.New(db), runtime.WithObserver(m))
	dbtest.Must(t, "migrate", e.Migrate(context.Background()))
	return e, db
}

// value reads one sample of the registry: a counter or gauge value, or a
// histogram's count.
// seriesOf counts the series of name.
func seriesOf(t *testing.T, reg *prometheus.Registry, name string) int {
	t.Helper()
	families, err := reg.Gather()
	dbtest.Must(t, "gather", err)
	for _, f := range families {
		if f.GetName() == name {
			return len(f.GetMetric())
		}
	}
	return 0
}

func value(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	dbtest.Must(t, "gather", err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metric:
		for _, m := range f.GetMetric() {
			for k, v := range labels {
				if !hasLabel(m, k, v) {
					continue metric
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return 0
}

// renewedTwice returns when reg counts two successful lease renewals, or
// an error when ctx ends or testwait.Bound passes first.
func renewedTwice(ctx context.Context, reg *prometheus.Registry) error {
	ctx, cancel := context.WithTimeout(ctx, testwait.Bound)
	defer cancel()
	for {
		families, err := reg.Gather()
		if err != nil {
			return err
		}
		for _, f := range families {
			if f.GetName() == "async_task_lease_renewal_success_total" && f.GetMetric()[0].GetCounter().GetValue() >= 2 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the lease was not renewed twice: %w", ctx.Err())
		case <-time.After(testwait.Poll):
		}
	}
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

// After real work the metrics say what happened: enqueues, outcomes,
// renewals, an expired lease recovered, queue depth.
func TestMetricsAfterRealWork(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"mysql", "postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			reg := prometheus.NewRegistry()
			m, err := New(reg)
			dbtest.Must(t, "new", err)
			engine, db := openEngine(t, kind, m)
			client, err := runtime.NewClient(engine, runtime.ClientConfig{})
			dbtest.Must(t, "client", err)

			// A lease a dead worker left behind.
			dead, err := client.Enqueue(ctx, "ok", nil)
			dbtest.Must(t, "enqueue", err)
			expired := map[string]string{
				"mysql":    "UPDATE leasegen_tasks SET status = 'RUNNING', attempt = 1, lease_owner = 'dead', due_at = NOW(3) - INTERVAL 1 SECOND WHERE id = ?",
				"postgres": "UPDATE leasegen_tasks SET status = 'RUNNING', attempt = 1, lease_owner = 'dead', lease_until = now() - interval '1 second' WHERE id = $1",
				"sqlite":   "UPDATE leasegen_tasks SET status = 'RUNNING', attempt = 1, lease_owner = 'dead', due_at = CAST(unixepoch('subsec') * 1000 AS INTEGER) - 1000 WHERE id = ?",
			}[kind]
			_, err = db.Exec(expired, dead)
			dbtest.Must(t, "abandon a lease", err)

			var flaky atomic.Int32
			// Leases of 5 s renewed every second: a stall of the loaded
			// machine does not end one; the expired lease is the dead
			// worker's, set above.
			w, err := runtime.NewWorker(engine, runtime.Config{
				LeaseTimeout: 5 * time.Second, HeartbeatInterval: time.Second,
				RecoveryInterval: 300 * time.Millisecond, PollInterval: 50 * time.Millisecond,
			})
			dbtest.Must(t, "worker", err)
			dbtest.Must(t, "handle", w.Handle("ok", func(context.Context, *runtime.Task) error { return nil }))
			dbtest.Must(t, "handle", w.Handle("flaky", func(context.Context, *runtime.Task) error {
				if flaky.Add(1) <= 2 {
					return errors.New("first attempt fails")
				}
				return nil
			}, runtime.WithBackoff(func(int) time.Duration { return 10 * time.Millisecond })))
			dbtest.Must(t, "handle", w.Handle("slow", func(ctx context.Context, _ *runtime.Task) error {
				return renewedTwice(ctx, reg) // runs until its lease was renewed twice
			}))
			var ids []runtime.TaskID
			for _, typ := range []string{"ok", "ok", "ok", "ok", "flaky", "flaky", "slow"} {
				id, err := client.Enqueue(ctx, typ, nil)
				dbtest.Must(t, "enqueue", err)
				ids = append(ids, id)
			}
			dbtest.Must(t, "start", w.Start(ctx))
			for _, id := range append(ids, dead) {
				waitSuccess(t, client, id)
			}
			dbtest.Must(t, "stop", w.Stop(ctx))
			dbtest.Must(t, "pause", client.Pause(ctx, "slow"))
			dbtest.Must(t, "refresh", m.RefreshQueue(ctx, client))
			if got := value(t, reg, "async_task_paused_seconds", map[string]string{"type": "slow"}); got < 0 || got > 60 {
				t.Errorf("async_task_paused_seconds{type=slow} = %v just after Pause, want about 0", got)
			}
			if n := seriesOf(t, reg, "async_task_paused_seconds"); n != 1 {
				t.Errorf("%d async_task_paused_seconds series, want 1 (slow)", n)
			}
			dbtest.Must(t, "resume", client.Resume(ctx, "slow"))
			dbtest.Must(t, "refresh", m.RefreshQueue(ctx, client))
			if n := seriesOf(t, reg, "async_task_paused_seconds"); n != 0 {
				t.Errorf("%d async_task_paused_seconds series after Resume, want none", n)
			}

			checks := []struct {
				name   string
				labels map[string]string
				want   float64
			}{
				{"async_task_enqueued_total", map[string]string{"type": "ok"}, 5},
				{"async_task_enqueued_total", map[string]string{"type": "flaky"}, 2},
				{"async_task_finished_total", map[string]string{"type": "ok", "outcome": "success"}, 5},
				{"async_task_finished_total", map[string]string{"type": "flaky", "outcome": "retry"}, 2},
				{"async_task_finished_total", map[string]string{"type": "flaky", "outcome": "success"}, 2},
				{"async_task_duration_seconds", map[string]string{"type": "slow", "outcome": "success"}, 1},
				{"async_task_claim_latency_seconds", map[string]string{"type": "ok"}, 5},
				{"async_task_running", map[string]string{"type": "ok"}, 0},
				{"async_task_lease_expired_total", nil, 1},
				{"async_task_recovery_total", map[string]string{"outcome": "requeued"}, 1},
				{"async_task_recovery_delay_seconds", nil, 1},
				{"async_task_queue_depth", map[string]string{"type": "ok", "status": "SUCCESS"}, 5},
				{"async_task_queue_depth", map[string]string{"type": "flaky", "status": "SUCCESS"}, 2},
			}
			for _, c := range checks {
				if got := value(t, reg, c.name, c.labels); got != c.want {
					t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
				}
			}
			renewals := value(t, reg, "async_task_lease_renewal_total", nil)
			if renewals < 2 || value(t, reg, "async_task_lease_renewal_success_total", nil) != renewals {
				t.Errorf("renewals %v, successes %v: want a few, all successful", renewals, value(t, reg, "async_task_lease_renewal_success_total", nil))
			}
		})
	}
}

func waitSuccess(t *testing.T, c *runtime.Client, id runtime.TaskID) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := c.Get(context.Background(), id)
		dbtest.Must(t, "get", err)
		if info.Status == runtime.StatusSuccess {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %d: %s (%s)", id, info.Status, info.LastError)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A schedule's ticks, lag and misses reach the metrics; once no worker
// fires it, WatchQueue's overdue gauge grows; a paused one has no series.
func TestScheduleMetrics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	dbtest.Must(t, "new", err)
	engine, _ := openEngine(t, "sqlite", m)
	client, err := runtime.NewClient(engine, runtime.ClientConfig{})
	dbtest.Must(t, "client", err)
	w, err := runtime.NewWorker(engine, runtime.Config{LeaseTimeout: time.Second, HeartbeatInterval: 200 * time.Millisecond, PollInterval: 50 * time.Millisecond})
	dbtest.Must(t, "worker", err)
	release := make(chan struct{})
	dbtest.Must(t, "handle", w.Handle("slow", func(context.Context, *runtime.Task) error { <-release; return nil },
		runtime.WithSchedule(runtime.Periodic{Every: time.Second, SkipOverlap: true})))
	dbtest.Must(t, "start", w.Start(ctx))
	time.Sleep(3500 * time.Millisecond) // the first tick's task blocks; the next two overlap it
	close(release)
	dbtest.Must(t, "stop", w.Stop(ctx))
	ticks := value(t, reg, "async_task_schedule_ticks_total", map[string]string{"schedule": "slow"})
	if ticks < 1 || value(t, reg, "async_task_schedule_lag_seconds", map[string]string{"schedule": "slow"}) != ticks {
		t.Errorf("ticks %v, lag samples %v: want one sample per tick", ticks, value(t, reg, "async_task_schedule_lag_seconds", map[string]string{"schedule": "slow"}))
	}
	if got := value(t, reg, "async_task_schedule_missed_total", map[string]string{"schedule": "slow", "reason": "overlap"}); got < 2 {
		t.Errorf("overlap misses = %v, want 2 or more", got)
	}
	time.Sleep(1500 * time.Millisecond) // no worker: the next tick passes
	dbtest.Must(t, "refresh", m.RefreshQueue(ctx, client))
	if got := value(t, reg, "async_task_schedule_overdue_seconds", map[string]string{"schedule": "slow"}); got <= 0 || got > 3 {
		t.Errorf("overdue = %v s with no worker, want a second or two", got)
	}
	dbtest.Must(t, "pause", client.PauseSchedule(ctx, "slow"))
	dbtest.Must(t, "refresh", m.RefreshQueue(ctx, client))
	if n := seriesOf(t, reg, "async_task_schedule_overdue_seconds"); n != 0 {
		t.Errorf("%d overdue series for a paused schedule, want none", n)
	}
}
