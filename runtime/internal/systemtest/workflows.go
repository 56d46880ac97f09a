package systemtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime"
)

// stepLog records, for a workflow's handlers, the order steps started in
// and the parents each read.
type stepLog struct {
	mu      sync.Mutex
	started []string
	parents map[string][]runtime.ParentResult
	runs    map[string]int
}

func newStepLog() *stepLog {
	return &stepLog{parents: map[string][]runtime.ParentResult{}, runs: map[string]int{}}
}

// handler is a step's handler: it reads its parents, logs its start and
// sets its result to step+"-done".
func (l *stepLog) handler(step string) runtime.HandlerFunc {
	return func(ctx context.Context, task *runtime.Task) error {
		parents, err := task.Parents(ctx)
		if err != nil {
			return err
		}
		l.mu.Lock()
		l.started = append(l.started, step)
		l.parents[step] = parents
		l.runs[step]++
		l.mu.Unlock()
		task.SetResult(step + "-done")
		return nil
	}
}

func (l *stepLog) snapshot() ([]string, map[string][]runtime.ParentResult, map[string]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.started), l.parents, l.runs
}

// settleConfig is Config without recovery's passes after the first: the
// steps a case waits for are decided on the workers' own path, after
// their parents ended, or never.
func settleConfig() runtime.Config {
	cfg := Config()
	cfg.RecoveryInterval = time.Hour
	return cfg
}

// A diamond (a, then b and c, then d) runs each step once, in an order
// where each starts after its parents succeeded; a step reads its
// parents' statuses and results, and Client.Workflow shows the graph.
func testWorkflowDiamond(t *testing.T, b *Bundle) {
	log := newStepLog()
	b.StartWorker(t, settleConfig(), map[string]runtime.HandlerFunc{
		"wf-a": log.handler("a"), "wf-b": log.handler("b"), "wf-c": log.handler("c"), "wf-d": log.handler("d"),
	})
	run, err := b.Client.EnqueueWorkflow(bg, runtime.Workflow{Name: "diamond", Steps: []runtime.Step{
		{Name: "d", Request: runtime.Request{Type: "wf-d"}, After: []string{"b", "c"}}, // before its parents: the order given does not matter
		{Name: "a", Request: runtime.Request{Type: "wf-a"}},
		{Name: "b", Request: runtime.Request{Type: "wf-b"}, After: []string{"a"}},
		{Name: "c", Request: runtime.Request{Type: "wf-c"}, After: []string{"a"}},
	}})
	dbtest.Must(t, "enqueue the workflow", err)
	b.WaitStatus(t, run.Tasks["d"], runtime.StatusSuccess)

	started, parents, runs := log.snapshot()
	if len(started) != 4 || started[0] != "a" || started[3] != "d" {
		t.Errorf("steps started in order %v, want a first, d last, each once", started)
	}
	if diff := cmp.Diff(map[string]int{"a": 1, "b": 1, "c": 1, "d": 1}, runs); diff != "" {
		t.Errorf("runs per step (-want +got):\n%s", diff)
	}
	want := []runtime.ParentResult{
		{Step: "b", TaskID: run.Tasks["b"], Status: runtime.StatusSuccess, Result: "b-done"},
		{Step: "c", TaskID: run.Tasks["c"], Status: runtime.StatusSuccess, Result: "c-done"},
	}
	if diff := cmp.Diff(want, parents["d"]); diff != "" {
		t.Errorf("d's parents (-want +got):\n%s", diff)
	}
	if len(parents["a"]) != 0 {
		t.Errorf("a, a root, read parents %v", parents["a"])
	}

	info, err := b.Client.Workflow(bg, run.ID)
	dbtest.Must(t, "read the workflow", err)
	var got []string
	for _, s := range info.Steps {
		got = append(got, fmt.Sprintf("%s:%s:%d:waiting=%v:after=%s", s.Name, s.Status, s.TaskID, s.Waiting, strings.Join(s.After, "+")))
	}
	wantSteps := []string{
		fmt.Sprintf("a:SUCCESS:%d:waiting=false:after=", run.Tasks["a"]),
		fmt.Sprintf("b:SUCCESS:%d:waiting=false:after=a", run.Tasks["b"]),
		fmt.Sprintf("c:SUCCESS:%d:waiting=false:after=a", run.Tasks["c"]),
		fmt.Sprintf("d:SUCCESS:%d:waiting=false:after=b+c", run.Tasks["d"]),
	}
	if info.Name != "diamond" || info.ID != run.ID || info.CreatedAt.IsZero() {
		t.Errorf("workflow %d is %q created %v, want %d diamond", info.ID, info.Name, info.CreatedAt, run.ID)
	}
	if diff := cmp.Diff(wantSteps, got); diff != "" {
		t.Errorf("Client.Workflow's steps (-want +got):\n%s", diff)
	}
	if _, err := b.Client.Workflow(bg, run.ID+1000); !errors.Is(err, runtime.ErrWorkflowNotFound) {
		t.Errorf("an unknown workflow: %v, want ErrWorkflowNotFound", err)
	}
}

// A parent that fails for good cancels the steps after it (and theirs in
// turn), which never run, and lets a step marked RunOnParentFailure run,
// which reads the failure. Per edge: of two steps after the failing parent
// and a succeeding one, the one whose rule lets the failing parent's
// failure through runs, the other is cancelled. Retrying the parent makes
// the steps it cancelled wait for it again; they run after it, and the
// steps that ran already do not run again.
func testWorkflowParentFailure(t *testing.T, b *Bundle) {
	log := newStepLog()
	var failing atomic.Bool
	failing.Store(true)
	b.StartWorker(t, settleConfig(), map[string]runtime.HandlerFunc{
		"wf-fails": func(context.Context, *runtime.Task) error {
			if failing.Load() {
				return runtime.Permanent(fmt.Errorf("disk full"))
			}
			return nil
		},
		"wf-b": log.handler("b"), "wf-e": log.handler("e"), "wf-c": log.handler("c"),
		"wf-x": log.handler("x"), "wf-g": log.handler("g"), "wf-h": log.handler("h"),
	})
	run, err := b.Client.EnqueueWorkflow(bg, runtime.Workflow{Name: "failing", Steps: []runtime.Step{
		{Name: "a", Request: runtime.Request{Type: "wf-fails"}},
		{Name: "b", Request: runtime.Request{Type: "wf-b"}, After: []string{"a"}},
		{Name: "e", Request: runtime.Request{Type: "wf-e"}, After: []string{"b"}},
		{Name: "c", Request: runtime.Request{Type: "wf-c"}, After: []string{"a"}, RunOnParentFailure: true},
		{Name: "x", Request: runtime.Request{Type: "wf-x"}},
		{Name: "g", Request: runtime.Request{Type: "wf-g"}, After: []string{"a", "x"}, RunOnFailureOf: []string{"a"}},
		{Name: "h", Request: runtime.Request{Type: "wf-h"}, After: []string{"a", "x"}, RunOnFailureOf: []string{"x"}},
	}})
	dbtest.Must(t, "enqueue the workflow", err)
	b.WaitStatus(t, run.Tasks["a"], runtime.StatusFailed)
	for _, step := range []string{"b", "e"} {
		if info := b.WaitStatus(t, run.Tasks[step], runtime.StatusCancelled); !strings.Contains(info.LastError, "parent") {
			t.Errorf("step %s cancelled with last error %q, want one naming its parent", step, info.LastError)
		}
	}
	b.WaitStatus(t, run.Tasks["c"], runtime.StatusSuccess)
	b.WaitStatus(t, run.Tasks["g"], runtime.StatusSuccess)
	b.WaitStatus(t, run.Tasks["h"], runtime.StatusCancelled)
	_, parents, runs := log.snapshot()
	if runs["b"]+runs["e"]+runs["h"] != 0 || runs["c"] != 1 || runs["g"] != 1 {
		t.Errorf("runs per step %v, want c and g once and no b, e or h", runs)
	}
	if p := parents["c"]; len(p) != 1 || p[0].Step != "a" || p[0].Status != runtime.StatusFailed {
		t.Errorf("c read its parents as %+v, want a FAILED", p)
	}

	failing.Store(false)
	dbtest.Must(t, "retry a", b.Client.Retry(bg, run.Tasks["a"]))
	b.WaitStatus(t, run.Tasks["e"], runtime.StatusSuccess)
	b.WaitStatus(t, run.Tasks["h"], runtime.StatusSuccess)
	started, _, runs := log.snapshot()
	if diff := cmp.Diff(map[string]int{"b": 1, "c": 1, "e": 1, "x": 1, "g": 1, "h": 1}, runs); diff != "" {
		t.Errorf("runs per step after the retry (-want +got):\n%s", diff)
	}
	if i := slices.Index(started, "b"); i < 0 || slices.Index(started, "e") < i {
		t.Errorf("steps started in order %v, want b before e", started)
	}
}

// Two parents of each of many joins, handled by two workers on engines of
// their own, end at once: each join starts exactly once, after both. The
// second worker's engine learns of the workflows from the database.
func testWorkflowParentsEndTogether(t *testing.T, b *Bundle) {
	const workflows = 30
	var mu sync.Mutex
	arrived := map[int]int{}
	both := map[int]chan struct{}{}
	joins := map[int]int{}
	for k := range workflows {
		both[k] = make(chan struct{})
	}
	parent := func(ctx context.Context, task *runtime.Task) error {
		var p struct{ K int }
		if err := json.Unmarshal(task.Payload, &p); err != nil {
			return err
		}
		mu.Lock()
		if arrived[p.K]++; arrived[p.K] == 2 {
			close(both[p.K])
		}
		mu.Unlock()
		select {
		case <-both[p.K]:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	join := func(ctx context.Context, task *runtime.Task) error {
		var p struct{ K int }
		if err := json.Unmarshal(task.Payload, &p); err != nil {
			return err
		}
		parents, err := task.Parents(ctx)
		if err != nil {
			return err
		}
		for _, pr := range parents {
			if pr.Status != runtime.StatusSuccess {
				return runtime.Permanent(fmt.Errorf("join %d started with parent %s %s", p.K, pr.Step, pr.Status))
			}
		}
		mu.Lock()
		joins[p.K]++
		mu.Unlock()
		return nil
	}
	cfg := settleConfig()
	cfg.MaxConcurrency = workflows
	// Recovery does not run: a join left waiting shows what the settles
	// logged and where its parents are.
	var book LogBook
	cfg.Logger = book.Logger()
	var runs []runtime.WorkflowRun
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, run := range runs {
			var states []string
			for _, step := range []string{"left", "right", "join"} {
				info, err := b.Client.Get(bg, run.Tasks[step])
				states = append(states, fmt.Sprintf("%s %d %s %v", step, run.Tasks[step], info.Status, err))
			}
			t.Logf("workflow %d: %s", run.ID, strings.Join(states, ", "))
		}
		t.Logf("the workers' log:\n%s", book.String())
	})
	b.StartWorker(t, cfg, map[string]runtime.HandlerFunc{"wf-left": parent, "wf-join": join})
	other := b.EngineOn(b.DB.Open(t))
	w, err := runtime.NewWorker(other, cfg)
	dbtest.Must(t, "second worker", err)
	dbtest.Must(t, "handle", w.Handle("wf-right", parent))
	dbtest.Must(t, "handle", w.Handle("wf-join", join))
	dbtest.Must(t, "start", w.Start(bg))
	t.Cleanup(func() { _ = w.Stop(bg) })

	var ends []runtime.TaskID
	for k := range workflows {
		payload := fmt.Appendf(nil, `{"K":%d}`, k)
		run, err := b.Client.EnqueueWorkflow(bg, runtime.Workflow{Name: "join", Steps: []runtime.Step{
			{Name: "left", Request: runtime.Request{Type: "wf-left", Payload: payload}},
			{Name: "right", Request: runtime.Request{Type: "wf-right", Payload: payload}},
			{Name: "join", Request: runtime.Request{Type: "wf-join", Payload: payload}, After: []string{"left", "right"}},
		}})
		dbtest.Must(t, "enqueue", err)
		ends = append(ends, run.Tasks["join"])
		runs = append(runs, run)
	}
	for _, id := range ends {
		b.WaitStatus(t, id, runtime.StatusSuccess)
	}
	mu.Lock()
	defer mu.Unlock()
	for k := range workflows {
		if joins[k] != 1 {
			t.Errorf("join %d ran %d times, want once", k, joins[k])
		}
	}
}

// A step whose parent ended without a settle (its worker died in
// between) is found by recovery's pass, queued and run; so is a waiting
// step that was discarded, and the step after it cancelled; cancelling a
// waiting step cancels the steps after it at once; CancelWorkflow cancels
// the steps that have not ended.
func testWorkflowStalledAndCancelled(t *testing.T, b *Bundle) {
	run, err := b.Client.EnqueueWorkflow(bg, runtime.Workflow{Name: "stalled", Steps: []runtime.Step{
		{Name: "a", Request: runtime.Request{Type: "wf-nobody"}},
		{Name: "b", Request: runtime.Request{Type: "wf-b"}, After: []string{"a"}},
		{Name: "x", Request: runtime.Request{Type: "wf-nobody"}},
		{Name: "y", Request: runtime.Request{Type: "wf-y"}, After: []string{"x"}},
		{Name: "z", Request: runtime.Request{Type: "wf-z"}, After: []string{"y"}},
		{Name: "m", Request: runtime.Request{Type: "wf-nobody"}},
		{Name: "n", Request: runtime.Request{Type: "wf-y"}, After: []string{"m"}},
		{Name: "o", Request: runtime.Request{Type: "wf-z"}, After: []string{"n"}},
	}})
	dbtest.Must(t, "enqueue the workflow", err)
	// A waiting step discarded: recovery's pass decides it (its task is
	// gone), and cancels the step after it, whose parent no longer exists.
	dbtest.Must(t, "discard n", b.Client.Discard(bg, run.Tasks["n"]))
	for _, step := range []string{"b", "y", "z"} {
		if info, err := b.Client.Get(bg, run.Tasks[step]); err != nil || info.Status != runtime.StatusWaiting {
			t.Errorf("step %s is %s (%v), want WAITING for its parents", step, info.Status, err)
		}
	}
	dbtest.Must(t, "cancel y", b.Client.Cancel(bg, run.Tasks["y"]))
	if info, err := b.Client.Get(bg, run.Tasks["z"]); err != nil || info.Status != runtime.StatusCancelled {
		t.Errorf("after its parent's cancel, z is %s (%v), want CANCELLED", info.Status, err)
	}

	// a ends as a worker that died before settling would leave it.
	b.DB.MustExec(t, b.H.SQL("UPDATE leasegen_tasks SET status = 'SUCCESS', result = 'a-done' WHERE id = ?"), run.Tasks["a"])
	log := newStepLog()
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{"wf-b": log.handler("b"), "wf-y": log.handler("y"), "wf-z": log.handler("z")})
	b.WaitStatus(t, run.Tasks["b"], runtime.StatusSuccess)
	b.WaitStatus(t, run.Tasks["o"], runtime.StatusCancelled)
	_, parents, runs := log.snapshot()
	if p := parents["b"]; len(p) != 1 || p[0].Result != "a-done" {
		t.Errorf("b read its parents as %+v, want a's result", p)
	}
	if runs["y"]+runs["z"] != 0 {
		t.Errorf("cancelled steps ran: %v", runs)
	}

	// CancelWorkflow cancels what has not ended: x (queued) here.
	n, err := b.Client.CancelWorkflow(bg, run.ID)
	dbtest.Must(t, "cancel the workflow", err)
	info, err := b.Client.Workflow(bg, run.ID)
	dbtest.Must(t, "read the workflow", err)
	statuses := map[string]runtime.Status{}
	for _, s := range info.Steps {
		statuses[s.Name] = s.Status
	}
	want := map[string]runtime.Status{"a": runtime.StatusSuccess, "b": runtime.StatusSuccess, "x": runtime.StatusCancelled,
		"y": runtime.StatusCancelled, "z": runtime.StatusCancelled, "m": runtime.StatusCancelled, "n": "", "o": runtime.StatusCancelled}
	if diff := cmp.Diff(want, statuses); n != 2 || diff != "" {
		t.Errorf("CancelWorkflow cancelled %d steps, want 2 (x and m); statuses (-want +got):\n%s", n, diff)
	}
}

// Retention keeps a finished parent while a step after it waits, and
// deletes a finished workflow's tasks, steps, edges and row.
func testWorkflowRetention(t *testing.T, b *Bundle) {
	held, err := b.Client.EnqueueWorkflow(bg, runtime.Workflow{Name: "held", Steps: []runtime.Step{
		{Name: "done", Request: runtime.Request{Type: "wf-done"}},
		{Name: "never", Request: runtime.Request{Type: "wf-nobody"}},
		{Name: "join", Request: runtime.Request{Type: "wf-nobody"}, After: []string{"done", "never"}},
	}})
	dbtest.Must(t, "enqueue the held workflow", err)
	gone, err := b.Client.EnqueueWorkflow(bg, runtime.Workflow{Name: "gone", Steps: []runtime.Step{
		{Name: "first", Request: runtime.Request{Type: "wf-done"}},
		{Name: "second", Request: runtime.Request{Type: "wf-done"}, After: []string{"first"}},
	}})
	dbtest.Must(t, "enqueue the finished workflow", err)
	cfg := Config()
	cfg.Retention, cfg.RetentionInterval = 200*time.Millisecond, 300*time.Millisecond
	w := b.StartWorker(t, cfg, map[string]runtime.HandlerFunc{"wf-done": func(context.Context, *runtime.Task) error { return nil }})
	edges := func() int {
		return b.DB.Int(t, b.H.SQL("SELECT COUNT(*) FROM leasegen_task_deps WHERE child_id = ?"), gone.Tasks["second"])
	}
	b.Signals.Await(t, testwait.Bound, func() bool {
		_, err := b.Client.Workflow(bg, gone.ID)
		return w.Stats().Pruned == 2 && errors.Is(err, runtime.ErrWorkflowNotFound) && edges() == 0
	}, func() string {
		_, err := b.Client.Workflow(bg, gone.ID)
		return fmt.Sprintf("pruned %d tasks, the finished workflow reads %v, %d edges left; want 2, ErrWorkflowNotFound, none", w.Stats().Pruned, err, edges())
	})
	info, err := b.Client.Workflow(bg, held.ID)
	dbtest.Must(t, "read the held workflow", err)
	for _, s := range info.Steps {
		if s.Status == "" {
			t.Errorf("retention deleted step %s's task while a step after it waits", s.Name)
		}
	}
}

// killWorkflows is how many workflows testKill9Workflows runs:
// LEASEGEN_KILL_WORKFLOWS, or 240 (about 10 s an engine here).
func killWorkflows(t *testing.T) int {
	s := os.Getenv("LEASEGEN_KILL_WORKFLOWS")
	if s == "" {
		return 240
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("LEASEGEN_KILL_WORKFLOWS=%q: want a count of workflows", s)
	}
	return n
}

// Workflows of five steps with a diamond and a fan-out (a; b and c after
// a; d after both; e after d; c spawns three steps, which d waits for
// too), every step a chaos task, run by worker processes killed with
// SIGKILL at random: every task succeeds, each effect committed once
// (killWorkers' ledger checks; c commits its spawn instead of an effect),
// and every step's first execution starts after the last execution of
// each of its parents started, so no step ran before its parents ended
// and each join was released once, after all of them.
func testKill9Workflows(t *testing.T, b *Bundle) {
	if testing.Short() {
		t.Skip("kill -9 run skipped in -short mode")
	}
	b.DB.MustExec(t, EffectsTable)
	const spawned = 3 // by step c
	shape := []struct {
		name  string
		after []string
		spawn int
	}{{"a", nil, 0}, {"b", []string{"a"}, 0}, {"c", []string{"a"}, spawned}, {"d", []string{"b", "c"}, 0}, {"e", []string{"d"}, 0}}
	workflows := killWorkflows(t)
	var runs []runtime.WorkflowID
	for range workflows {
		w := runtime.Workflow{Name: "chaos-diamond"}
		for _, s := range shape {
			w.Steps = append(w.Steps, runtime.Step{Name: s.name, After: s.after, Request: runtime.Request{Type: "chaos",
				Payload: fmt.Appendf(nil, `{"SleepMS":%d,"Spawn":%d}`, 5+rand.IntN(25), s.spawn), Options: []runtime.EnqueueOption{runtime.WithMaxAttempts(50)}}})
		}
		run, err := b.Client.EnqueueWorkflow(bg, w)
		dbtest.Must(t, "enqueue a workflow", err)
		runs = append(runs, run.ID)
	}
	// Every task commits an effect but the spawning c.
	run := killWorkers(t, b, workflows*(len(shape)-1+spawned))
	parentsOf := map[runtime.TaskID][]runtime.TaskID{}
	for _, id := range runs {
		w, err := b.Client.Workflow(bg, id)
		dbtest.Must(t, "read a workflow", err)
		if len(w.Steps) != len(shape)+spawned {
			t.Fatalf("workflow %d has %d steps, want %d", id, len(w.Steps), len(shape)+spawned)
		}
		byName := map[string]runtime.TaskID{}
		for _, s := range w.Steps {
			byName[s.Name] = s.TaskID
		}
		for _, s := range w.Steps {
			for _, p := range s.After {
				parentsOf[s.TaskID] = append(parentsOf[s.TaskID], byName[p])
			}
		}
	}
	first, last := map[runtime.TaskID]time.Time{}, map[runtime.TaskID]time.Time{}
	for _, r := range run.rows {
		if f, ok := first[r.Task]; !ok || r.Start.Before(f) {
			first[r.Task] = r.Start
		}
		if r.Start.After(last[r.Task]) {
			last[r.Task] = r.Start
		}
	}
	early := 0
	for child, parents := range parentsOf {
		for _, p := range parents {
			if !first[child].After(last[p]) {
				early++
				if early <= 5 {
					t.Errorf("step %d started at %s, before its parent %d's last execution started at %s",
						child, first[child].Format(time.StampMicro), p, last[p].Format(time.StampMicro))
				}
			}
		}
	}
	// Every workflow ended SUCCESS: what the killed workers' recovery
	// passes did not end yet, a last pass here does.
	endAllWorkflows(t, b)
	notSucceeded := 0
	for _, id := range runs {
		if w, err := b.Client.Workflow(bg, id); err != nil || w.Status != runtime.StatusSuccess {
			notSucceeded++
			if notSucceeded <= 5 {
				t.Errorf("workflow %d ended %q (%v), want SUCCESS", id, w.Status, err)
			}
		}
	}
	t.Logf("%d workflows of %d steps and %d spawned, %s: %d executions, %d tasks ran again, %d lost, %d duplicate effects, %d steps started before a parent, %d workflows not ended SUCCESS",
		workflows, len(shape), spawned, run, len(run.rows), run.reran, run.lost, run.dups, early, notSucceeded)
}

// A step that spawns 1,000 steps (a fan-out) completes with them in one
// transaction; the step after it (the join) runs once, after all of them,
// and reads every result. A task outside a workflow cannot spawn.
func testWorkflowFanOut(t *testing.T, b *Bundle) {
	const parts = 1000
	var mu sync.Mutex
	joins := 0
	var joined []runtime.ParentResult
	b.StartWorker(t, settleConfig(), map[string]runtime.HandlerFunc{
		"wf-split": func(ctx context.Context, task *runtime.Task) error {
			reqs := make([]runtime.Request, parts)
			for i := range reqs {
				reqs[i] = runtime.Request{Type: "wf-part", Payload: fmt.Appendf(nil, `{"I":%d}`, i)}
			}
			task.SetResult("split")
			return task.Spawn(ctx, reqs)
		},
		"wf-part": func(_ context.Context, task *runtime.Task) error {
			var p struct{ I int }
			if err := json.Unmarshal(task.Payload, &p); err != nil {
				return err
			}
			task.SetResult(strconv.Itoa(2 * p.I))
			return nil
		},
		"wf-join": func(ctx context.Context, task *runtime.Task) error {
			parents, err := task.Parents(ctx)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			joins++
			joined = parents
			return nil
		},
		"wf-loner": func(ctx context.Context, task *runtime.Task) error {
			return task.Spawn(ctx, []runtime.Request{{Type: "wf-part"}})
		},
	})
	run, err := b.Client.EnqueueWorkflow(bg, runtime.Workflow{Name: "fan", Steps: []runtime.Step{
		{Name: "split", Request: runtime.Request{Type: "wf-split"}},
		{Name: "join", Request: runtime.Request{Type: "wf-join"}, After: []string{"split"}},
	}})
	dbtest.Must(t, "enqueue the workflow", err)
	b.WaitStatus(t, run.Tasks["join"], runtime.StatusSuccess)
	mu.Lock()
	if joins != 1 || len(joined) != parts+1 {
		t.Errorf("the join ran %d times and read %d parents, want once and %d", joins, len(joined), parts+1)
	}
	results := map[string]string{}
	for _, p := range joined {
		if p.Status != runtime.StatusSuccess {
			t.Errorf("the join read parent %s %s", p.Step, p.Status)
		}
		results[p.Step] = p.Result
	}
	mu.Unlock()
	if results["split"] != "split" || results["split/0"] != "0" || results["split/999"] != "1998" || len(results) != parts+1 {
		t.Errorf("the join read %d results, split %q, split/0 %q, split/999 %q", len(results), results["split"], results["split/0"], results["split/999"])
	}
	info, err := b.Client.Workflow(bg, run.ID)
	dbtest.Must(t, "read the workflow", err)
	if len(info.Steps) != parts+2 {
		t.Errorf("the workflow has %d steps, want %d", len(info.Steps), parts+2)
	}

	loner := b.Enqueue(t, "wf-loner")
	if info := b.WaitStatus(t, loner, runtime.StatusFailed); !strings.Contains(info.LastError, "not a workflow step") {
		t.Errorf("a task outside a workflow that spawns: last error %q, want it to say it is not a workflow step", info.LastError)
	}
}
