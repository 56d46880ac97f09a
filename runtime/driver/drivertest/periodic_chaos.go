package drivertest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
)

// envChaosMode set to chaosModePeriodic makes a chaos worker process run
// the periodic worker instead of the task one.
const (
	envChaosMode      = "LEASEGEN_CHAOS_MODE"
	chaosModePeriodic = "periodic"
)

// periodicSchedule is what every periodic chaos worker registers: a tick
// a second, every misfired tick of the last five minutes backfilled.
var periodicSchedule = runtime.Periodic{Name: "heartbeat", Every: time.Second, Misfire: "backfill:300"}

// periodicWorkerMain runs one worker process that registers
// periodicSchedule and completes its ticks, until SIGTERM (or SIGKILL).
func periodicWorkerMain(h *Harness) int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "periodic worker:", err); return 1 }
	db, err := h.Open(os.Getenv(envChaosDSN))
	if err != nil {
		return fail(err)
	}
	cfg := Config()
	cfg.WorkerID = os.Getenv(envChaosWorker)
	cfg.PollInterval = 200 * time.Millisecond
	w, err := runtime.NewWorker(h.engine(db), cfg)
	if err != nil {
		return fail(err)
	}
	err = w.Handle("tick", func(context.Context, *runtime.Task) error { return nil }, runtime.WithSchedule(periodicSchedule))
	if err != nil {
		return fail(err)
	}
	for {
		// A restart of the database while this process starts fails
		// Start: try again, as a supervisor would.
		if err = w.Start(context.Background()); err == nil {
			break
		}
		if !errors.Is(err, runtime.ErrUnavailable) {
			return fail(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	<-stop
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = w.Stop(ctx)
	return 0
}

// Three worker processes register one every-second schedule for more than
// 60 ticks while random ones are killed with SIGKILL and restarted and,
// where the harness owns a server, the database is killed and restarted
// once: every tick from the first to the last is enqueued exactly once (one
// task per tick key, no gap, as many as the schedule counted), none is
// missed, and every tick task succeeds.
func testPeriodicKill9AndRestart(t *testing.T, h *Harness) {
	if testing.Short() {
		t.Skip("periodic kill -9 run skipped in -short mode")
	}
	var b *Bundle
	var server Server
	if h.PrivateServer != nil {
		b, server = privateServer(t, h)
	} else {
		b = Setup(t, h)
	}
	const (
		processes = 3
		runFor    = 66 * time.Second
	)
	generation := 0
	spawn := func(slot int) *exec.Cmd {
		generation++
		cmd := exec.Command(os.Args[0], "-test.run=^"+h.root+"$")
		cmd.Env = append(os.Environ(), envChaosMode+"="+chaosModePeriodic,
			envChaosWorker+"="+fmt.Sprintf("tick%d-g%d", slot, generation), envChaosDSN+"="+b.DB.DSN)
		cmd.Stderr = os.Stderr
		dbtest.Must(t, "start worker process", cmd.Start())
		return cmd
	}
	procs := make([]*exec.Cmd, processes)
	for i := range procs {
		procs[i] = spawn(i)
	}
	t.Cleanup(func() {
		for _, p := range procs {
			_ = p.Process.Kill()
			_ = p.Wait()
		}
	})

	start := time.Now()
	restarted := server == nil
	kills := 0
	for time.Since(start) < runFor {
		time.Sleep(time.Duration(3000+rand.IntN(4000)) * time.Millisecond)
		if !restarted && time.Since(start) > runFor/2 {
			server.Kill()
			time.Sleep(3 * time.Second)
			server.Start()
			restarted = true
			continue
		}
		slot := rand.IntN(processes)
		dbtest.Must(t, "kill -9", procs[slot].Process.Signal(syscall.SIGKILL))
		_ = procs[slot].Wait()
		kills++
		procs[slot] = spawn(slot)
	}
	stopAt := time.Now()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if b.DB.Int(t, "SELECT COUNT(*) FROM leasegen_tasks WHERE task_type = 'tick' AND status <> 'SUCCESS'") == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("tick tasks still unfinished 30 s after the run")
		}
	}
	for _, p := range procs {
		_ = p.Process.Signal(syscall.SIGTERM)
		_ = p.Wait()
	}

	ticks := storedTicks(t, b)
	s := scheduleNamed(t, b, "heartbeat")
	if len(ticks) < 60 {
		t.Fatalf("%d ticks in %s, want at least 60", len(ticks), runFor)
	}
	for i := 1; i < len(ticks); i++ {
		if d := ticks[i].Sub(ticks[i-1]); d != time.Second {
			t.Errorf("ticks %s and %s are %s apart: %d missing", ticks[i-1].Format(time.TimeOnly), ticks[i].Format(time.TimeOnly), d, int(d/time.Second)-1)
		}
	}
	if s.Ticks != int64(len(ticks)) || s.Missed != 0 {
		t.Errorf("the schedule counts %d ticks and %d missed; %d tasks stored, want as many and none missed", s.Ticks, s.Missed, len(ticks))
	}
	if last := ticks[len(ticks)-1]; stopAt.Sub(last) > 3*time.Second {
		t.Errorf("the last tick is %s, %s before the run ended", last.Format(time.TimeOnly), stopAt.Sub(last).Round(time.Millisecond))
	}
	t.Logf("%d ticks from %s to %s, %d processes, %d kills, database restarted: %v; 0 missing, 0 doubled",
		len(ticks), ticks[0].Format(time.TimeOnly), ticks[len(ticks)-1].Format(time.TimeOnly), processes, kills, server != nil)
}

// storedTicks reads the ticks of the heartbeat schedule's tasks from their
// keys, in order, failing on a key stored twice.
func storedTicks(t *testing.T, b *Bundle) []time.Time {
	t.Helper()
	tasks, err := b.Client.List(bg, runtime.Filter{Type: "tick", Limit: 1000})
	dbtest.Must(t, "list tick tasks", err)
	seen := map[string]bool{}
	var ticks []time.Time
	for _, task := range tasks {
		k := task.IdempotencyKey
		if seen[k] {
			t.Errorf("tick key %s stored twice", k)
		}
		seen[k] = true
		tick, err := time.Parse(time.RFC3339Nano, strings.TrimPrefix(k, "periodic:heartbeat:"))
		dbtest.Must(t, "tick key "+k, err)
		if k != bookkeeping.TickKey("heartbeat", tick) {
			t.Errorf("task %d has key %q, not a tick key", task.ID, k)
		}
		ticks = append(ticks, tick)
	}
	slices.SortFunc(ticks, func(a, b time.Time) int { return a.Compare(b) })
	return ticks
}
