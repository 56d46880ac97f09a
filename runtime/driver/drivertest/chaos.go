package drivertest

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

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
)

// Environment of a chaos worker process.
const (
	envChaosWorker = "LEASEGEN_CHAOS_WORKER" // the worker id
	envChaosDSN    = "LEASEGEN_CHAOS_DSN"
	envChaosLedger = "LEASEGEN_CHAOS_LEDGER" // file the handlers append to
)

// ledgerLine is one line of a chaos worker's Ledger file: a handler's start
// (End false) or end.
type ledgerLine struct {
	Task    runtime.TaskID `json:"task"`
	Type    string         `json:"type"`
	Attempt int            `json:"attempt"`
	Owner   string         `json:"owner"`
	End     bool           `json:"end,omitempty"`
	UnixNS  int64          `json:"ns"`
}

// chaosWorkerMain runs one worker process until SIGTERM (or SIGKILL): each
// task sleeps as its payload says, then commits its effect with a fenced
// completion. Every handler start and end is appended to the Ledger file
// with one write, so a kill leaves whole lines.
func chaosWorkerMain(h *Harness) int {
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
	cfg := Config()
	cfg.WorkerID = owner
	cfg.MaxConcurrency = 8
	w, err := runtime.NewWorker(h.engine(db), cfg)
	if err != nil {
		return fail(err)
	}
	err = w.Handle("chaos", func(ctx context.Context, task *runtime.Task) error {
		line := ledgerLine{Task: task.ID, Type: task.Type, Attempt: task.Attempt, Owner: owner}
		write(line)
		end := func() { line.End = true; write(line) }
		var p struct{ SleepMS int }
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
		err := h.CommitEffect(ctx, db, task, owner, end)
		if !line.End { // failed before the commit
			end()
		}
		return err
	})
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
	const (
		tasks     = 2000
		processes = 3
		maxKills  = 8
	)
	b.DB.MustExec(t, EffectsTable)
	reqs := make([]runtime.Request, tasks)
	for i := range reqs {
		reqs[i] = runtime.Request{Type: "chaos", Payload: fmt.Appendf(nil, `{"SleepMS":%d}`, 20+rand.IntN(60)),
			Options: []runtime.EnqueueOption{runtime.WithMaxAttempts(50)}}
	}
	_, err := b.Client.EnqueueMany(bg, reqs)
	dbtest.Must(t, "enqueue", err)

	dir := t.TempDir()
	killedAt := map[string]time.Time{}
	generation := 0
	spawn := func(slot int) *chaosProc {
		generation++
		id := fmt.Sprintf("p%d-g%d", slot, generation)
		// The test binary again, which Exercise turns into a worker.
		cmd := exec.Command(os.Args[0], "-test.run=^"+b.H.root+"$")
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
	deadline := start.Add(3 * time.Minute)
	inFlightAtKill := 0
	for kills := 0; ; {
		time.Sleep(time.Duration(300+rand.IntN(400)) * time.Millisecond)
		left := b.DB.Int(t, "SELECT COUNT(*) FROM leasegen_tasks WHERE status <> 'SUCCESS'")
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d tasks unfinished after %s", left, time.Since(start))
		}
		if kills == maxKills || left < tasks/10 {
			continue
		}
		slot := rand.IntN(processes)
		victim := procs[slot]
		inFlightAtKill += b.DB.Int(t, "SELECT COUNT(*) FROM leasegen_tasks WHERE status = 'RUNNING' AND lease_owner = ?", victim.id)
		dbtest.Must(t, "kill -9", victim.cmd.Process.Signal(syscall.SIGKILL))
		_ = victim.cmd.Wait()
		killedAt[victim.id] = time.Now()
		kills++
		procs[slot] = spawn(slot)
	}
	elapsed := time.Since(start)
	for _, p := range procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		_ = p.cmd.Wait()
	}

	rows := readChaosLedgers(t, dir, killedAt)
	reran := CheckLedger(t, rows)
	dups := CheckEffects(t, b.DB, tasks)
	lost := b.DB.Int(t, "SELECT COUNT(*) FROM leasegen_tasks WHERE status <> 'SUCCESS'")
	if len(killedAt) < 3 {
		t.Errorf("only %d kills happened; the run proves little", len(killedAt))
	}
	if inFlightAtKill == 0 {
		t.Error("no kill hit a running task")
	}
	t.Logf("%d tasks, %d processes, %d kills (%d tasks running in the killed workers), %s: %d executions, %d tasks ran again, %d lost, %d duplicate effects",
		tasks, processes, len(killedAt), inFlightAtKill, elapsed.Round(time.Millisecond), len(rows), reran, lost, dups)
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
			rows = append(rows, Interval{Task: l.Task, Type: l.Type, Attempt: l.Attempt, Owner: l.Owner, Start: at})
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
