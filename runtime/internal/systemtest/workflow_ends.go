package systemtest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// A workflow whose every step ended is ended once, however many processes
// look at once: four passes on four pools of their own race over 60
// finished workflows (40 succeeded, 10 with a failed step, 10 cancelled,
// which the worker's first recovery pass may end as it starts), and each
// workflow is ended by exactly one of them, with the status its
// steps give and an end after its start. A workflow with a step left is
// not ended.
func testWorkflowEndsOnce(t *testing.T, b *Bundle) {
	const ok, failing, cancelled = 40, 10, 10
	pair := func(second string) runtime.Workflow {
		return runtime.Workflow{Name: "pair-" + second, Steps: []runtime.Step{
			{Name: "first", Request: runtime.Request{Type: "wf-ok"}},
			{Name: "second", Request: runtime.Request{Type: second}, After: []string{"first"}},
		}}
	}
	want := map[runtime.WorkflowID]leasetype.Status{}
	seconds := map[runtime.WorkflowID]runtime.TaskID{}
	for i := range ok + failing + cancelled {
		second, status := "wf-ok", leasetype.StatusSuccess
		if i >= ok {
			second, status = "wf-fails", leasetype.StatusFailed
		}
		run, err := b.Client.EnqueueWorkflow(bg, pair(second))
		dbtest.Must(t, "enqueue a workflow", err)
		if i >= ok+failing {
			_, err := b.Client.CancelWorkflow(bg, run.ID)
			dbtest.Must(t, "cancel a workflow", err)
			status = leasetype.StatusCancelled
		}
		want[run.ID], seconds[run.ID] = status, run.Tasks["second"]
	}
	open, err := b.Client.EnqueueWorkflow(bg, runtime.Workflow{Name: "open", Steps: []runtime.Step{
		{Name: "never", Request: runtime.Request{Type: "wf-no-worker"}},
	}})
	dbtest.Must(t, "enqueue a workflow no worker runs", err)
	b.StartWorker(t, settleConfig(), map[string]runtime.HandlerFunc{
		"wf-ok":    func(context.Context, *runtime.Task) error { return nil },
		"wf-fails": func(context.Context, *runtime.Task) error { return runtime.Permanent(errors.New("fails")) },
	})
	for id, status := range want {
		b.WaitStatus(t, seconds[id], status) // a step's end comes after its parent's
	}

	var mu sync.Mutex
	endedBy := map[string]int{} // workflow name and status, summed over passes
	var wg sync.WaitGroup
	for range 4 {
		tables := b.H.New(b.DB.Open(t)).Tables()
		wg.Go(func() {
			for after := runtime.WorkflowID(0); ; {
				ended, next, err := bookkeeping.EndWorkflows(bg, tables, after, 7)
				if err != nil {
					t.Errorf("end workflows: %v", err)
					return
				}
				mu.Lock()
				for _, w := range ended {
					endedBy[w.Name+" "+string(w.Status)]++
					if w.Took <= 0 || w.Took > time.Minute {
						t.Errorf("workflow %s took %v", w.Name, w.Took)
					}
				}
				mu.Unlock()
				if next == 0 {
					return
				}
				after = next
			}
		})
	}
	wg.Wait()
	// The worker's recovery runs a pass as it starts: it ends the
	// workflows cancelled before, and reports them.
	for k, n := range b.Signals.WorkflowsEnded() {
		endedBy[k] += n
	}
	wantEnded := map[string]int{"pair-wf-ok SUCCESS": ok, "pair-wf-fails FAILED": failing, "pair-wf-fails CANCELLED": cancelled}
	for k, n := range wantEnded {
		if endedBy[k] != n {
			t.Errorf("%d workflows ended as %q, want %d (all: %v)", endedBy[k], k, n, endedBy)
		}
	}
	for id, status := range want {
		info, err := b.Client.Workflow(bg, id)
		dbtest.Must(t, "read a workflow", err)
		if info.Status != status || info.EndedAt.Before(info.CreatedAt) {
			t.Errorf("workflow %d: %s, created %v, ended %v; want %s after its start", id, info.Status, info.CreatedAt, info.EndedAt, status)
		}
	}
	if info, err := b.Client.Workflow(bg, open.ID); err != nil || info.Status != "" || !info.EndedAt.IsZero() {
		t.Errorf("a workflow with a queued step: %s ended %v (%v), want not ended", info.Status, info.EndedAt, err)
	}
}

// endAllWorkflows runs recovery's end of workflows over every open
// workflow once.
func endAllWorkflows(t *testing.T, b *Bundle) {
	t.Helper()
	tables := b.Driver.Tables()
	for after := runtime.WorkflowID(0); ; {
		_, next, err := bookkeeping.EndWorkflows(bg, tables, after, 100)
		dbtest.Must(t, "end workflows", err)
		if next == 0 {
			return
		}
		after = next
	}
}
