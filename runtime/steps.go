package runtime

import (
	"context"
	"time"

	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
)

// settleWait bounds one settle of ended tasks' children.
const settleWait = 10 * time.Second

// maxSettle bounds the ended tasks whose children one settle decides.
const maxSettle = 500

// settleChildren hands the tasks of ended executions whose types may be
// workflow parents to the settle loop, or settles their children here once
// the loop has stopped. A plain task's type is dropped here, without a
// read, between two reads of the parent types.
func (x *executor) settleChildren(ended ...*execution) {
	tasks := make([]endedTask, len(ended))
	for i, e := range ended {
		tasks[i] = endedTask{id: e.task.ID, typ: e.task.Type}
	}
	tasks = x.parents.worthALook(tasks)
	if len(tasks) > 0 && !x.settles.push(tasks...) {
		x.settle(tasks)
	}
}

// settle decides the waiting children of tasks that ended, those of
// parent types, and wakes the workers of the steps it queued. A failure
// is logged and left to recovery's pass over stalled steps.
func (x *executor) settle(ended []endedTask) {
	if len(ended) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(x.runCtx, settleWait)
	defer cancel()
	ids, err := x.parents.filter(ctx, x.tables, ended)
	if err != nil {
		x.logger.Warn("leasegen: reading the workflow parent types failed", "worker", x.workerID, "err", err)
	}
	if len(ids) == 0 {
		return
	}
	s, err := bookkeeping.SettleChildren(ctx, x.tables, ids)
	if err != nil {
		x.logger.Warn("leasegen: deciding the steps after ended tasks failed; recovery will", "worker", x.workerID, "err", err)
		return
	}
	for _, t := range s.QueuedTypes {
		x.driver.Notify(t)
	}
	x.observer.StepsSettled(len(s.Queued), len(s.Cancelled))
}

// settleLoop is the service that settles the children of ended tasks off
// the executions' and the completion loop's paths: the tasks that end
// while a settle runs go together in the next one. At stop it settles
// what is left; a task that ends later is settled where it ended.
func (x *executor) settleLoop(_ context.Context, stop <-chan struct{}) {
	x.settles.serve(stop, maxSettle, x.settle)
}

// stalledStepBatch bounds the waiting steps one recovery pass reads: a
// pass reads the next page of them (recoverer.stepsCursor), so every
// waiting step is read within a few passes however many wait.
const stalledStepBatch = 100

// settleStalledSteps decides the waiting steps whose parents ended without
// a settle (their worker died in between, did not know the parent's type
// as one yet, or recovery ended them), when a step waits.
func (r *recoverer) settleStalledSteps(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, max(r.interval, workflowPassWait))
	defer cancel()
	waiting, err := r.tables.StepsWaitingAny(ctx)
	if err != nil {
		r.logger.Error("leasegen: reading whether workflow steps wait failed", "worker", r.workerID, "err", err)
		return
	}
	if !waiting {
		return
	}
	s, next, err := bookkeeping.SettleStalled(ctx, r.tables, r.stepsCursor, stalledStepBatch)
	r.stepsCursor = next
	if err != nil {
		r.logger.Error("leasegen: deciding stalled workflow steps failed", "worker", r.workerID, "err", err)
		return
	}
	if len(s.Queued)+len(s.Cancelled) > 0 {
		r.observer.StepsSettled(len(s.Queued), len(s.Cancelled))
		r.logger.Info("leasegen: decided stalled workflow steps", "worker", r.workerID, "queued", len(s.Queued), "cancelled", len(s.Cancelled))
		for _, t := range s.QueuedTypes {
			r.driver.Notify(t)
		}
	}
}

// workflowPassWait is the least time a recovery pass gives its workflow
// work (the stalled steps, the ends), however short the interval: a pass
// that gave up on a loaded server would end no workflow at all.
const workflowPassWait = 5 * time.Second

// openWorkflowBatch bounds the open workflows one recovery pass reads.
const openWorkflowBatch = 100

// endWorkflows ends the next page of open workflows whose every step has
// ended (bookkeeping.EndWorkflows), and reports those this process ended.
func (r *recoverer) endWorkflows(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, max(r.interval, workflowPassWait))
	defer cancel()
	ended, next, err := bookkeeping.EndWorkflows(ctx, r.tables, r.workflowsCursor, openWorkflowBatch)
	r.workflowsCursor = next
	for _, w := range ended {
		r.observer.WorkflowEnded(w.Name, w.Status, w.Took)
	}
	if err != nil {
		r.logger.Error("leasegen: ending finished workflows failed", "worker", r.workerID, "err", err)
	}
}
