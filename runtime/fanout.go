package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
)

// FanOut marks a field of a //leasegen:workflow struct as a fan-out step:
// one step with payload T per element of the list that the step it runs
// after (its only parent) returns, spawned as that parent completes
// (Task.SpawnNamed). The steps after a fan-out wait for every spawned step
// and read their results as a slice. It holds nothing: set no value.
type FanOut[T any] struct{}

// Spawn completes the running workflow step t and stores, in the same
// transaction, one step per request: the i-th named after t's step and i
// ("split/3"), after t and before the steps after t, which then wait for
// every spawned step as well as for t: a fan-out, and the join that reads
// all their results (Task.Parents). Call it as the handler's last act:
// after it committed, the handler's return value is ignored. A task that
// is no workflow's step, a request that Enqueue would refuse, or more than
// MaxWorkflowSteps requests fail the task for good; ErrLeaseLost means
// nothing was stored. The requests take the client defaults (1 MiB
// payloads, 5 attempts) and no concurrency or idempotency key.
func (t *Task) Spawn(ctx context.Context, reqs []Request) error {
	return t.SpawnNamed(ctx, "", reqs)
}

// SpawnNamed is Spawn with the spawned steps named after name instead of
// t's step ("fetch/0", "fetch/1", ...): what the generated handler of a
// step before a FanOut field calls, with the field's name. name follows
// the rules of a step name; "" is t's step's.
func (t *Task) SpawnNamed(ctx context.Context, name string, reqs []Request) (err error) {
	defer func() { err = withCause(ctx, err) }()
	if t.exec == nil {
		return fmt.Errorf("%w: Spawn called outside a worker", ErrInvalidTask)
	}
	if problem := taskTypeProblem(name); name != "" && problem != "" {
		return Permanent(fmt.Errorf("%w: task %d spawns steps named %q: %s", ErrInvalidTask, t.ID, name, problem))
	}
	if len(reqs) > MaxWorkflowSteps {
		return Permanent(fmt.Errorf("%w: task %d spawns %d steps, the limit is %d", ErrInvalidTask, t.ID, len(reqs), MaxWorkflowSteps))
	}
	x := t.exec.x
	tasks := make([]driver.NewTask, len(reqs))
	for i, r := range reqs {
		task, err := x.spawner.stepTask(r)
		if err != nil {
			return Permanent(fmt.Errorf("task %d spawns step %d: %w", t.ID, i, err))
		}
		tasks[i] = task
	}
	if err := x.spawner.checkBeforeInsert(ctx, tasks); err != nil {
		return err
	}
	tx, done, err := x.driver.BeginExecutionTx(ctx, t.exec.lease)
	if err != nil {
		return err
	}
	defer done()
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	// The spawned steps get t's children: their types are parent types.
	types := make([]string, len(tasks))
	for i, task := range tasks {
		types[i] = task.Type
	}
	newTypes := x.parents.unknown(types)
	if _, err := bookkeeping.SpawnSteps(ctx, x.driver.TablesIn(tx), t.ID, name, tasks, newTypes); err != nil {
		if errors.Is(err, bookkeeping.ErrNotAStep) {
			return Permanent(fmt.Errorf("%w: Spawn: %w", ErrInvalidTask, err))
		}
		return x.failed(err, "spawn %d steps of task %d", len(tasks), t.ID)
	}
	if err := t.CompleteTx(ctx, tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	x.parents.add(newTypes...)
	notified := map[string]bool{}
	for _, task := range tasks {
		if !notified[task.Type] {
			notified[task.Type] = true
			x.driver.Notify(task.Type)
		}
	}
	return nil
}
