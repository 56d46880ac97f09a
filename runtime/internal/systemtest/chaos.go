package systemtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"errors"
	"slices"
	"strings"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
)

// Environment of a chaos worker process.
const (
	envChaosWorker = "LEASEGEN_CHAOS_WORKER" // the worker id
	envChaosDSN    = "LEASEGEN_CHAOS_DSN"
	envChaosLedger = "LEASEGEN_CHAOS_LEDGER" // file the handlers append to
	envChaosLimit  = "LEASEGEN_CHAOS_LIMIT"  // the chaos type's concurrency limit, if set
)

// ledgerLine is one line of a chaos worker's Ledger file: a handler's start
// (End false) or end.
type ledgerLine struct {
	Task    runtime.TaskID `json:"task"`
	Type    string         `json:"type"`
	Attempt int            `json:"attempt"`
	Owner   string         `json:"owner"`
	Key     string         `json:"key,omitempty"`
	End     bool           `json:"end,omitempty"`
	UnixNS  int64          `json:"ns"`
	// ClaimedNS is the execution's Task.StartedAt (a start's line only).
	ClaimedNS int64 `json:"claimed_ns,omitempty"`
}

// chaosWorkerMain runs one worker process until SIGTERM (or SIGKILL): each
// task sleeps as its payload says, then commits its effect with a fenced
// completion (RunEffect). Every handler start and end is appended to the Ledger file
// with one write, so a kill leaves whole lines.
func chaosWorkerMain(h *drivertest.Harness) int {
	owner := os.Getenv(envChaosWorker)
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "chaos worker:", err); return 1 }
	db, err := h.Open(os.Getenv(envChaosDSN))
	if err != nil {
		return fail(err)
	}
	out, err := os.OpenFile(os.Getenv(envChaosLedger), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fail(err)
	}
	write := func(l ledgerLine) {
		l.UnixNS = time.Now().UnixNano()
		b, _ := json.Marshal(l)
		_, _ = out.Write(append(b, '\n'))
	}
	cfg := ShortLeases()
	cfg.WorkerID = owner
	cfg.MaxConcurrency = 8
	w, err := runtime.NewWorker(engine(h, db), cfg)
	if err != nil {
		return fail(err)
	}
	opts := []runtime.HandlerOption{runtime.WithBackoff(FastBackoff)}
	if limit, err := strconv.Atoi(os.Getenv(envChaosLimit)); err == nil {
		opts = append(opts, runtime.WithConcurrency(limit))
	}
	err = w.Handle("chaos", func(ctx context.Context, task *runtime.Task) error {
		line := ledgerLine{Task: task.ID, Type: task.Type, Attempt: task.Attempt, Owner: owner, Key: task.ConcurrencyKey,
			ClaimedNS: task.StartedAt.UnixNano()}
		write(line)
		end := func() { line.End, line.ClaimedNS = true, 0; write(line) }
		// Spawn > 0 makes the task a workflow step that spawns that many
		// chaos steps (Task.Spawn) instead of committing an effect.
		var p struct{ SleepMS, Spawn int }
		if err := json.Unmarshal(task.Payload, &p); err != nil {
			end()
			return runtime.Permanent(err)
		}
		select {
		case <-time.After(time.Duration(p.SleepMS) * time.Millisecond):
		case <-ctx.Done():
			end()
			return ctx.Err()
		}
		if p.Spawn > 0 {
			reqs := make([]runtime.Request, p.Spawn)
			for i := range reqs {
				reqs[i] = runtime.Request{Type: "chaos", Payload: fmt.Appendf(nil, `{"SleepMS":%d}`, p.SleepMS), Options: []runtime.EnqueueOption{runtime.WithMaxAttempts(50)}}
			}
			err := task.Spawn(ctx, reqs)
			end()
			return err
		}
		err := RunEffect(ctx, h, task, owner, end)
		if !line.End { // failed before the commit
			end()
		}
		return err
	}, opts...)
	if err != nil {
		return fail(err)
	}
	if err := w.Start(context.Background()); err != nil {
		return fail(err)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	<-stop
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = w.Stop(ctx)
	return 0
}

// enqueueChaos creates the effects table and enqueues n chaos tasks of 20
// to 80 ms, for worker processes of chaosWorkerMain.
func enqueueChaos(t *testing.T, b *Bundle, n int) {
	t.Helper()
	b.DB.MustExec(t, EffectsTable)
	reqs := make([]runtime.Request, n)
	for i := range reqs {
		reqs[i] = runtime.Request{Type: "chaos", Payload: fmt.Appendf(nil, `{"SleepMS":%d}`, 20+rand.IntN(60)),
			Options: []runtime.EnqueueOption{runtime.WithMaxAttempts(50)}}
	}
	_, err := b.Client.EnqueueMany(bg, reqs)
	dbtest.Must(t, "enqueue", err)
}

// chaosProc is one running worker process.
type chaosProc struct {
	id  string
	cmd *exec.Cmd
}

// Three worker processes over 2,000 tasks while random workers are killed
// with SIGKILL and restarted: every task ends SUCCESS with one committed
// effect, and no two executions of a task overlap (a killed execution ends
// at its kill).
func testKill9WorkerProcesses(t *testing.T, b *Bundle) {
	if testing.Short() {
		t.Skip("kill -9 run skipped in -short mode")
	}
	const tasks = 2000
	enqueueChaos(t, b, tasks)
	run := killWorkers(t, b, tasks)
	t.Logf("%d tasks, %s: %d executions, %d tasks ran again, %d lost, %d duplicate effects",
		tasks, run, len(run.rows), run.reran, run.lost, run.dups)
}

// killRun is what a kill -9 run of chaos worker processes saw.
type killRun struct {
	rows           []Interval
	kills          int
	inFlightAtKill int
	elapsed        time.Duration
	reran          int // tasks that ran more than once
	lost           int // tasks that did not succeed
	dups           int // tasks with more than one effect
}

func (r killRun) String() string {
	return fmt.Sprintf("3 processes, %d kills (%d tasks running in the killed workers), %s", r.kills, r.inFlightAtKill, r.elapsed.Round(time.Millisecond))
}

// killWorkers runs three chaos worker processes until the tasks enqueued
// (tasks of them) ended, killing random ones with SIGKILL and restarting
// them, and checks the ledger: no two executions of a task overlap, each
// task's effect committed once, none lost, and kills hit running tasks.
func killWorkers(t *testing.T, b *Bundle, tasks int) killRun {
	const (
		processes = 3
		maxKills  = 8
	)
	dir := t.TempDir()
	killedAt := map[string]time.Time{}
	generation := 0
	spawn := func(slot int) *chaosProc {
		generation++
		id := fmt.Sprintf("p%d-g%d", slot, generation)
		// The test binary again, which Exercise turns into a worker.
		cmd := exec.Command(os.Args[0], "-test.run=^"+root+"$")
		cmd.Env = append(os.Environ(), envChaosWorker+"="+id, envChaosDSN+"="+b.DB.DSN,
			envChaosLedger+"="+filepath.Join(dir, id+".jsonl"))
		cmd.Stderr = os.Stderr
		dbtest.Must(t, "start worker process", cmd.Start())
		return &chaosProc{id: id, cmd: cmd}
	}
	procs := make([]*chaosProc, processes)
	for i := range procs {
		procs[i] = spawn(i)
	}
	t.Cleanup(func() {
		for _, p := range procs {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})

	start := time.Now()
	var run killRun
	// The workers' progress decides, not the machine's speed: the run
	// fails when no task finished for a minute (a lease and a recovery pass
	// after a kill take about a second).
	least, progressed := tasks+1, start
	for {
		time.Sleep(time.Duration(300+rand.IntN(400)) * time.Millisecond)
		left := b.Unfinished(t)
		if left == 0 {
			break
		}
		if left < least {
			least, progressed = left, time.Now()
		}
		if time.Since(progressed) > time.Minute {
			t.Fatalf("no task finished for a minute, %d unfinished after %s", left, time.Since(start))
		}
		if run.kills == maxKills || left < tasks/10 {
			continue
		}
		slot := rand.IntN(processes)
		victim := procs[slot]
		run.inFlightAtKill += b.RunningOf(t, victim.id)
		dbtest.Must(t, "kill -9", victim.cmd.Process.Signal(syscall.SIGKILL))
		_ = victim.cmd.Wait()
		killedAt[victim.id] = time.Now()
		run.kills++
		procs[slot] = spawn(slot)
	}
	run.elapsed = time.Since(start)
	for _, p := range procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		_ = p.cmd.Wait()
	}

	run.rows = readChaosLedgers(t, dir, killedAt)
	run.reran = CheckLedger(t, run.rows)
	run.dups = CheckEffects(t, b.DB, tasks)
	run.lost = b.Unfinished(t)
	if run.kills < 3 {
		t.Errorf("only %d kills happened; the run proves little", run.kills)
	}
	if run.inFlightAtKill == 0 {
		t.Error("no kill hit a running task")
	}
	return run
}

// readChaosLedgers merges the Ledger files; an execution without an end
// ended when its process was killed.
func readChaosLedgers(t *testing.T, dir string, killedAt map[string]time.Time) []Interval {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	dbtest.Must(t, "ledgers", err)
	type key struct {
		task    runtime.TaskID
		attempt int
	}
	open := map[key]int{}
	var rows []Interval
	for _, name := range files {
		f, err := os.Open(name)
		dbtest.Must(t, "open Ledger", err)
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var l ledgerLine
			dbtest.Must(t, "Ledger line "+strconv.Quote(sc.Text()), json.Unmarshal(sc.Bytes(), &l))
			at := time.Unix(0, l.UnixNS)
			k := key{l.Task, l.Attempt}
			if l.End {
				rows[open[k]].End = at
				continue
			}
			open[k] = len(rows)
			rows = append(rows, Interval{Task: l.Task, Type: l.Type, Attempt: l.Attempt, Owner: l.Owner, Key: l.Key, Start: at,
				Claimed: time.Unix(0, l.ClaimedNS)})
		}
		f.Close()
	}
	for i, r := range rows {
		if k, killed := killedAt[r.Owner]; killed && r.End.IsZero() {
			rows[i].End = k
		}
	}
	return rows
}

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
func periodicWorkerMain(h *drivertest.Harness) int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "periodic worker:", err); return 1 }
	db, err := h.Open(os.Getenv(envChaosDSN))
	if err != nil {
		return fail(err)
	}
	cfg := ShortLeases()
	cfg.WorkerID = os.Getenv(envChaosWorker)
	cfg.PollInterval = 200 * time.Millisecond
	w, err := runtime.NewWorker(engine(h, db), cfg)
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
func testPeriodicKill9AndRestart(t *testing.T, h *drivertest.Harness) {
	if testing.Short() {
		t.Skip("periodic kill -9 run skipped in -short mode")
	}
	var b *Bundle
	var server drivertest.Server
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
		cmd := exec.Command(os.Args[0], "-test.run=^"+root+"$")
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
	unfinished := func() int {
		return len(slices.DeleteFunc(b.Tasks(t, runtime.Filter{Type: "tick"}), func(i runtime.TaskInfo) bool { return i.Status == runtime.StatusSuccess }))
	}
	testwait.Until(t, func() bool { return unfinished() == 0 }, func() string {
		return fmt.Sprintf("%d tick tasks unfinished after the run", unfinished())
	})
	for _, p := range procs {
		_ = p.Process.Signal(syscall.SIGTERM)
		_ = p.Wait()
	}

	ticks := storedTicks(t, b)
	s := scheduleNamed(t, b.Client, "heartbeat")
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
