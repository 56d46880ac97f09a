package metrics

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime"
)

// endBell is Metrics with a bell rung at each workflow's end.
type endBell struct {
	*Metrics
	bell testwait.Bell
}

func (o *endBell) WorkflowEnded(name string, status runtime.Status, took time.Duration) {
	o.Metrics.WorkflowEnded(name, status, took)
	o.bell.Ring()
}

// Workflows are counted by name as they start and as they end, once each,
// with their status and duration: one succeeds, one has a step that fails,
// one is cancelled before it runs, on every engine. A retried step makes
// its workflow end again once it succeeds.
func TestWorkflowMetrics(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"mysql", "postgres", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			reg := prometheus.NewRegistry()
			m, err := New(reg)
			dbtest.Must(t, "new", err)
			o := &endBell{Metrics: m}
			engine, _ := openEngine(t, kind, o)
			client, err := runtime.NewClient(engine, runtime.ClientConfig{})
			dbtest.Must(t, "client", err)
			pair := func(second string) runtime.Workflow {
				return runtime.Workflow{Name: "pair", Steps: []runtime.Step{
					{Name: "first", Request: runtime.Request{Type: "ok"}},
					{Name: "second", Request: runtime.Request{Type: second}, After: []string{"first"}},
				}}
			}
			cancelled, err := client.EnqueueWorkflow(ctx, pair("ok"))
			dbtest.Must(t, "enqueue", err)
			_, err = client.CancelWorkflow(ctx, cancelled.ID)
			dbtest.Must(t, "cancel", err)
			_, err = client.EnqueueWorkflow(ctx, pair("ok"))
			dbtest.Must(t, "enqueue", err)
			failing, err := client.EnqueueWorkflow(ctx, pair("fails"))
			dbtest.Must(t, "enqueue", err)

			w, err := runtime.NewWorker(engine, runtime.Config{RecoveryInterval: 100 * time.Millisecond, PollInterval: 50 * time.Millisecond})
			dbtest.Must(t, "worker", err)
			dbtest.Must(t, "handle", w.Handle("ok", func(context.Context, *runtime.Task) error { return nil }))
			var fixed atomic.Bool
			dbtest.Must(t, "handle", w.Handle("fails", func(context.Context, *runtime.Task) error {
				if !fixed.Load() {
					return runtime.Permanent(fmt.Errorf("fails"))
				}
				return nil
			}))
			dbtest.Must(t, "start", w.Start(ctx))
			defer w.Stop(ctx) //nolint:errcheck // the test is over
			ended := func(status string) float64 {
				return value(t, reg, "async_task_workflows_ended_total", map[string]string{"workflow": "pair", "status": status})
			}
			counts := func() string {
				return fmt.Sprintf("ended: %v succeeded, %v failed, %v cancelled", ended("succeeded"), ended("failed"), ended("cancelled"))
			}
			o.bell.Await(t, testwait.Bound, func() bool { return ended("succeeded")+ended("failed")+ended("cancelled") >= 3 }, counts)
			if ended("succeeded") != 1 || ended("failed") != 1 || ended("cancelled") != 1 {
				t.Errorf("%s, want one each", counts())
			}
			if got := value(t, reg, "async_task_workflows_started_total", map[string]string{"workflow": "pair"}); got != 3 {
				t.Errorf("started %v, want 3", got)
			}
			for _, status := range []string{"succeeded", "failed", "cancelled"} {
				if got := value(t, reg, "async_task_workflow_duration_seconds", map[string]string{"workflow": "pair", "status": status}); got != 1 {
					t.Errorf("%v durations observed of %s workflows, want 1", got, status)
				}
			}

			if sum := durationSum(t, reg, "succeeded"); sum <= 0 || sum > testwait.Bound.Seconds() {
				t.Errorf("the succeeded workflow took %v s, want a moment", sum)
			}

			// A retry of the failed step reopens its workflow, which ends
			// again, successfully, once the step succeeds.
			info, err := client.Workflow(ctx, failing.ID)
			dbtest.Must(t, "workflow", err)
			fixed.Store(true)
			for _, s := range info.Steps {
				if s.Name == "second" {
					dbtest.Must(t, "retry", client.Retry(ctx, s.TaskID))
				}
			}
			o.bell.Await(t, testwait.Bound, func() bool { return ended("succeeded") >= 2 }, counts)
			if ended("failed") != 1 || ended("cancelled") != 1 {
				t.Errorf("after the retry, %s, want 2 succeeded and the others unchanged", counts())
			}
		})
	}
}

// durationSum is the sum of the pair workflows' durations of status.
func durationSum(t *testing.T, reg *prometheus.Registry, status string) float64 {
	t.Helper()
	families, err := reg.Gather()
	dbtest.Must(t, "gather", err)
	for _, f := range families {
		if f.GetName() != "async_task_workflow_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			if hasLabel(m, "workflow", "pair") && hasLabel(m, "status", status) {
				return m.GetHistogram().GetSampleSum()
			}
		}
	}
	return 0
}
