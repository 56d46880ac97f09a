package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/leasegen/leasegen/runtime"
)

// The workflows group's shape: five steps, a diamond and a tail (a; b and
// c after a; d after both; e after d), every step a no-op task.
var benchShape = []struct {
	name  string
	after []string
}{{"a", nil}, {"b", []string{"a"}}, {"c", []string{"a"}}, {"d", []string{"b", "c"}}, {"e", []string{"d"}}}

// workflowName is a figure of the workflows group.
func workflowName(o options, what string) string {
	return fmt.Sprintf("%d workflows of 5 steps (diamond and tail), 1 worker, default Config: %s", o.workflows, what)
}

// stepTimes are, by task, when a no-op handler ran (it returns as it
// starts), on this process's clock.
type stepTimes struct {
	mu sync.Mutex
	at map[runtime.TaskID]time.Time
}

func newStepTimes() *stepTimes {
	return &stepTimes{at: map[runtime.TaskID]time.Time{}}
}

func (s *stepTimes) handler() runtime.HandlerFunc {
	return func(_ context.Context, t *runtime.Task) error {
		now := time.Now()
		s.mu.Lock()
		s.at[t.ID] = now
		s.mu.Unlock()
		return nil
	}
}

// pickupWorkflows is how many workflows, run one after the other, measure
// a step's pickup after its parents.
const pickupWorkflows = 50

// workflowsBench enqueues o.workflows workflows of benchShape, one at a
// time, and times one worker on the default Config running every step,
// from its start to the last step's start; then runs pickupWorkflows
// workflows one after the other, so that a step's pickup (its start less
// its last parent's return: the parent's completion, the settle that
// queues the step, the claim that starts it) waits for no other task;
// then the same number of plain tasks as steps, enqueued in batches, for
// contrast.
func workflowsBench(ctx context.Context, o options, s *scratch, t *table) error {
	enqueued := time.Now()
	for range o.workflows {
		if _, err := s.client.EnqueueWorkflow(ctx, benchWorkflow()); err != nil {
			return err
		}
	}
	t.add(workflowName(o, "enqueue, one workflow at a time"), "workflows/s", float64(o.workflows)/time.Since(enqueued).Seconds())
	steps := o.workflows * len(benchShape)
	times := newStepTimes()
	took, err := runAll(ctx, s, "step", times.handler(), steps)
	if err != nil {
		return err
	}
	t.add(workflowName(o, "run, workflows"), "workflows/s", float64(o.workflows)/took.Seconds())
	t.add(workflowName(o, "run, steps"), "steps/s", float64(steps)/took.Seconds())

	pickups, err := stepPickups(ctx, s)
	if err != nil {
		return err
	}
	for _, q := range []float64{.50, .90, .99} {
		p := pickups[min(len(pickups)-1, int(q*float64(len(pickups))))]
		t.add(fmt.Sprintf("workflows of 5 steps run one at a time: a step's start after its last parent returned, p%.0f", q*100), "ms", millis(p))
	}

	if err := queueKeyed(ctx, s, "plain", steps, nil); err != nil {
		return err
	}
	tookPlain, err := runAll(ctx, s, "plain", newStepTimes().handler(), steps)
	if err != nil {
		return err
	}
	t.add(workflowName(o, fmt.Sprintf("the same %s steps as plain tasks, enqueued in batches", number(float64(steps)))), "tasks/s", float64(steps)/tookPlain.Seconds())
	t.add(workflowName(o, "time a step takes over a plain task's"), "x", took.Seconds()/tookPlain.Seconds())

	// What plain tasks pay in a service with workflows: while a step
	// waits, each completion batch reads whether its tasks have waiting
	// children.
	parked, err := s.client.EnqueueWorkflow(ctx, runtime.Workflow{Name: "parked", Steps: []runtime.Step{
		{Name: "root", Request: runtime.Request{Type: "no-worker"}},
		{Name: "child", Request: runtime.Request{Type: "no-worker"}, After: []string{"root"}},
	}})
	if err != nil {
		return err
	}
	if err := queueKeyed(ctx, s, "plain", steps, nil); err != nil {
		return err
	}
	tookMixed, err := runAll(ctx, s, "plain", newStepTimes().handler(), steps)
	if err != nil {
		return err
	}
	if _, err := s.client.CancelWorkflow(ctx, parked.ID); err != nil {
		return err
	}
	t.add(workflowName(o, "the same plain tasks while a workflow step waits"), "tasks/s", float64(steps)/tookMixed.Seconds())
	t.add(workflowName(o, "plain tasks' time while a step waits over without"), "x", tookMixed.Seconds()/tookPlain.Seconds())
	return nil
}

// benchWorkflow is a workflow of benchShape, every step a "step" task.
func benchWorkflow() runtime.Workflow {
	w := runtime.Workflow{Name: "bench"}
	for _, st := range benchShape {
		w.Steps = append(w.Steps, runtime.Step{Name: st.name, After: st.after, Request: runtime.Request{Type: "step"}})
	}
	return w
}

// stepPickups runs pickupWorkflows workflows one after the other under a
// worker on the default Config and returns, sorted, each step's start
// less its last parent's return.
func stepPickups(ctx context.Context, s *scratch) ([]time.Duration, error) {
	times := newStepTimes()
	w, err := runtime.NewWorker(s.engine, runtime.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, err
	}
	if err := w.Handle("step", times.handler()); err != nil {
		return nil, err
	}
	if err := w.Start(ctx); err != nil {
		return nil, err
	}
	defer w.Stop(ctx) //nolint:errcheck // the run is over
	var pickups []time.Duration
	for range pickupWorkflows {
		run, err := s.client.EnqueueWorkflow(ctx, benchWorkflow())
		if err != nil {
			return nil, err
		}
		if err := s.client.WaitWorkflow(ctx, run.ID); err != nil {
			return nil, err
		}
		times.mu.Lock()
		for _, st := range benchShape {
			var last time.Time
			for _, p := range st.after {
				if done := times.at[run.Tasks[p]]; done.After(last) {
					last = done
				}
			}
			if !last.IsZero() {
				pickups = append(pickups, times.at[run.Tasks[st.name]].Sub(last))
			}
		}
		times.mu.Unlock()
	}
	slices.Sort(pickups)
	return pickups, nil
}

// runAll starts one worker on the default Config with fn for taskType and
// returns how long it took, from its start, until n tasks had started.
func runAll(ctx context.Context, s *scratch, taskType string, fn runtime.HandlerFunc, n int) (time.Duration, error) {
	var mu sync.Mutex
	started := 0
	all := make(chan struct{})
	w, err := runtime.NewWorker(s.engine, runtime.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return 0, err
	}
	err = w.Handle(taskType, func(ctx context.Context, t *runtime.Task) error {
		err := fn(ctx, t)
		mu.Lock()
		if started++; started == n {
			close(all)
		}
		mu.Unlock()
		return err
	})
	if err != nil {
		return 0, err
	}
	begin := time.Now()
	if err := w.Start(ctx); err != nil {
		return 0, err
	}
	defer w.Stop(ctx) //nolint:errcheck // the run is over
	select {
	case <-all:
		return time.Since(begin), nil
	case <-time.After(10 * time.Minute):
		mu.Lock()
		defer mu.Unlock()
		return 0, fmt.Errorf("%d of %d %s tasks started in 10 minutes", started, n, taskType)
	}
}
