package bookkeeping

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// A workflow's steps are tasks stored in one transaction; a step with
// parents is inserted WAITING and only a settle makes it QUEUED (every
// parent ended, and each either succeeded or lets it run on failure) or
// CANCELLED (a parent that cancels it ended without success). A settle
// locks the waiting steps' rows, then reads their parents' statuses as
// committed last, and clears the steps' waiting flags with its decision,
// in one transaction: when two parents of a step end at once, the settle
// that runs second waits for the first's lock and then reads both
// parents ended, or finds the step decided, so the step is queued once.
// A worker settles the children of the tasks it ended, after their ends
// committed; one that dies in between leaves them to SettleStalled, which
// recovery runs.

// WorkflowBatch is a workflow to store: Tasks[i] is step Names[i], whose
// parents are the steps at Parents[i], each before i.
type WorkflowBatch struct {
	Name    string
	Tasks   []driver.NewTask
	Names   []string
	Parents [][]int
	// RunOnFailure[i][k] says parent Parents[i][k] of step i lets it run
	// when it ends without success; else it cancels it.
	RunOnFailure [][]bool
	// ParentTypes are task types of steps with children to record as
	// parent types (those the caller does not know recorded).
	ParentTypes []string
}

// InsertWorkflow stores b in one transaction of t (a caller's, when t
// runs in one) and returns the workflow's id and its steps' task ids in
// order.
func InsertWorkflow(ctx context.Context, t driver.Tables, b WorkflowBatch) (leasetype.WorkflowID, []leasetype.TaskID, error) {
	var wid leasetype.WorkflowID
	var ids []leasetype.TaskID
	err := t.InTx(ctx, func(tx driver.Tables) error {
		var err error
		if wid, err = tx.WorkflowInsert(ctx, b.Name); err != nil {
			return fmt.Errorf("store workflow %s: %w", b.Name, err)
		}
		if err := tx.ParentTypesAdd(ctx, b.ParentTypes); err != nil {
			return fmt.Errorf("record the parent types %v: %w", b.ParentTypes, err)
		}
		if ids, err = tx.TaskInsert(ctx, b.Tasks); err != nil {
			return err
		}
		var children []leasetype.TaskID
		for i, parents := range b.Parents {
			if len(parents) > 0 {
				children = append(children, ids[i])
			}
		}
		if len(children) > 0 {
			waiting, err := tx.StepTasksWait(ctx, children)
			if err != nil {
				return fmt.Errorf("make %d steps wait for their parents: %w", len(children), err)
			}
			if waiting != len(children) {
				return fmt.Errorf("%d of %d steps with parents were stored waiting", waiting, len(children))
			}
		}
		for i, id := range ids {
			step := driver.WorkflowStep{Workflow: wid, Task: id, Name: b.Names[i], Waiting: len(b.Parents[i]) > 0}
			if err := tx.WorkflowStepInsert(ctx, step); err != nil {
				return fmt.Errorf("store step %s: %w", b.Names[i], err)
			}
			for k, p := range b.Parents[i] {
				if err := tx.TaskDepInsert(ctx, driver.TaskDep{Parent: ids[p], Child: id, RunOnFailure: b.RunOnFailure[i][k]}); err != nil {
					return fmt.Errorf("store step %s's parent %s: %w", b.Names[i], b.Names[p], err)
				}
			}
		}
		return nil
	})
	return wid, ids, err
}

// ErrNotAStep reports a spawn from a task that is no workflow's step.
var ErrNotAStep = errors.New("not a workflow step")

// SpawnSteps stores tasks as steps of parent's workflow, in t's
// transaction (the one that completes parent): the i-th named after name
// (parent's step's when empty) and i ("split/3"), each after parent and
// before the steps parent is before, which then wait for every spawned
// step too; newTypes are the spawned tasks' types to record as parent
// types (they get parent's children). It returns their ids in order.
func SpawnSteps(ctx context.Context, t driver.Tables, parent leasetype.TaskID, name string, tasks []driver.NewTask, newTypes []string) ([]leasetype.TaskID, error) {
	step, ok, err := t.StepOf(ctx, parent)
	switch {
	case err != nil:
		return nil, fmt.Errorf("read the step of task %d: %w", parent, err)
	case !ok:
		return nil, fmt.Errorf("task %d: %w", parent, ErrNotAStep)
	}
	if name == "" {
		name = step.Name
	}
	if err := t.ParentTypesAdd(ctx, newTypes); err != nil {
		return nil, fmt.Errorf("record the parent types %v: %w", newTypes, err)
	}
	ids, err := t.TaskInsert(ctx, tasks)
	if err != nil {
		return nil, err
	}
	for i, id := range ids {
		spawned := fmt.Sprintf("%s/%d", name, i)
		if err := t.WorkflowStepInsert(ctx, driver.WorkflowStep{Workflow: step.Workflow, Task: id, Name: spawned}); err != nil {
			return nil, fmt.Errorf("store spawned step %s: %w", spawned, err)
		}
		if err := t.TaskDepsCopy(ctx, parent, id); err != nil {
			return nil, fmt.Errorf("give spawned step %s its parent's dependants: %w", spawned, err)
		}
	}
	// The edges from parent to the spawned steps come last: the copies
	// above take parent's edges as they stand.
	for _, id := range ids {
		if err := t.TaskDepInsert(ctx, driver.TaskDep{Parent: parent, Child: id}); err != nil {
			return nil, fmt.Errorf("store the parent of spawned task %d: %w", id, err)
		}
	}
	return ids, nil
}

// Settled is what a settle decided: the steps it queued, with their task
// types, and those it cancelled.
type Settled struct {
	Queued      []leasetype.TaskID
	QueuedTypes []string // distinct, in the order first queued
	Cancelled   []leasetype.TaskID
}

// SettleChildren decides the waiting children of parents, tasks that
// ended, and then, in the same transaction, the children of the steps it
// cancelled.
func SettleChildren(ctx context.Context, t driver.Tables, parents []leasetype.TaskID) (Settled, error) {
	if len(parents) == 0 {
		return Settled{}, nil
	}
	children, err := t.StepsWaitingChildren(ctx, parents)
	if err != nil || len(children) == 0 {
		return Settled{}, err
	}
	return settle(ctx, t, children)
}

// SettleStalled reads up to limit waiting steps with ids above after, and
// decides those a settle would decide now: whose last parent's worker died
// before it settled them, or whose task an operator cancelled or
// discarded. It returns what it decided and the last id it read (0 when
// it read the last waiting step: the next pass starts from the first).
// Reading is plain; only the steps found decidable are locked, read again
// and decided, so a pass over steps that wait for running parents writes
// nothing.
func SettleStalled(ctx context.Context, t driver.Tables, after leasetype.TaskID, limit int) (Settled, leasetype.TaskID, error) {
	steps, err := t.StepsWaitingAfter(ctx, after, limit)
	if err != nil {
		return Settled{}, after, err
	}
	next := leasetype.TaskID(0)
	if len(steps) == limit {
		next = steps[len(steps)-1]
	}
	if len(steps) == 0 {
		return Settled{}, next, nil
	}
	states, err := t.StepParentStates(ctx, steps)
	if err != nil {
		return Settled{}, after, err
	}
	d := decide(states)
	due := slices.Concat(d.queue, d.cancel, d.ended, withoutStates(steps, states))
	if len(due) == 0 {
		return Settled{}, next, nil
	}
	slices.Sort(due)
	s, err := settle(ctx, t, due)
	return s, next, err
}

// maxCascade bounds the generations of dependants one settle cancels:
// the rest are left to the next settle of the steps it cancelled, which
// SettleStalled finds.
const maxCascade = 64

// parentCancelled is the last error of a step a parent cancelled.
const parentCancelled = "a parent step ended without success"

// settle decides steps in one transaction, cascading to the children of
// the steps it cancels (and of those an operator cancelled).
func settle(ctx context.Context, t driver.Tables, steps []leasetype.TaskID) (Settled, error) {
	var s Settled
	err := t.InTx(ctx, func(tx driver.Tables) error {
		s = Settled{}
		pending := steps
		for round := 0; len(pending) > 0 && round < maxCascade; round++ {
			if _, err := tx.StepsLock(ctx, pending); err != nil {
				return fmt.Errorf("lock %d waiting steps: %w", len(pending), err)
			}
			states, err := tx.StepParentStates(ctx, pending)
			if err != nil {
				return fmt.Errorf("read the parents of %d waiting steps: %w", len(pending), err)
			}
			d := decide(states)
			d.ended = append(d.ended, withoutStates(pending, states)...)
			if len(d.queue) > 0 {
				if _, err := tx.StepTasksQueue(ctx, d.queue); err != nil {
					return fmt.Errorf("queue %d steps: %w", len(d.queue), err)
				}
			}
			if len(d.cancel) > 0 {
				if _, err := tx.StepTasksCancel(ctx, d.cancel, parentCancelled); err != nil {
					return fmt.Errorf("cancel %d steps: %w", len(d.cancel), err)
				}
			}
			decided := slices.Concat(d.queue, d.cancel, d.ended)
			if len(decided) == 0 {
				return nil
			}
			if err := tx.StepsSettle(ctx, decided); err != nil {
				return fmt.Errorf("settle %d steps: %w", len(decided), err)
			}
			s.Queued = append(s.Queued, d.queue...)
			for _, typ := range d.queueTypes {
				if !slices.Contains(s.QueuedTypes, typ) {
					s.QueuedTypes = append(s.QueuedTypes, typ)
				}
			}
			s.Cancelled = append(s.Cancelled, d.cancel...)
			ended := slices.Concat(d.cancel, d.ended)
			if len(ended) == 0 {
				return nil
			}
			if pending, err = tx.StepsWaitingChildren(ctx, ended); err != nil {
				return fmt.Errorf("read the waiting children of %d cancelled steps: %w", len(ended), err)
			}
		}
		return nil
	})
	return s, err
}

// withoutStates returns the steps that have no row in states: no edge is
// stored for them (a step that lost its edges with its task), so nothing
// can decide them but ending them.
func withoutStates(steps []leasetype.TaskID, states []driver.StepParentState) []leasetype.TaskID {
	seen := make(map[leasetype.TaskID]bool, len(states))
	for _, st := range states {
		seen[st.Child] = true
	}
	var out []leasetype.TaskID
	for _, id := range steps {
		if !seen[id] {
			out = append(out, id)
		}
	}
	return out
}

// decision is a settle's verdict on the steps it read: queue them, cancel
// them, or mark them decided because their task no longer waits (an
// operator cancelled or discarded it; its children are settled next).
// A step in none of them keeps waiting.
type decision struct {
	queue, cancel, ended []leasetype.TaskID
	queueTypes           []string // of queue, in order
}

// decide reads states, grouped by step, into a decision.
func decide(states []driver.StepParentState) decision {
	var d decision
	for i := 0; i < len(states); {
		j := i
		for j < len(states) && states[j].Child == states[i].Child {
			j++
		}
		switch step := states[i].Child; verdict(states[i:j]) {
		case stepQueue:
			d.queue = append(d.queue, step)
			d.queueTypes = append(d.queueTypes, states[i].ChildType)
		case stepCancel:
			d.cancel = append(d.cancel, step)
		case stepEnded:
			d.ended = append(d.ended, step)
		}
		i = j
	}
	return d
}

type stepVerdict int

const (
	stepWait stepVerdict = iota
	stepQueue
	stepCancel
	stepEnded
)

// verdict decides one step from its parents' states.
func verdict(parents []driver.StepParentState) stepVerdict {
	if parents[0].ChildStatus != leasetype.StatusWaiting {
		return stepEnded
	}
	unfinished := false
	for _, p := range parents {
		switch {
		case p.ParentStatus == leasetype.StatusSuccess:
		case p.ParentStatus == "" || p.ParentStatus.Terminal():
			if !p.RunOnFailure {
				return stepCancel
			}
		default:
			unfinished = true
		}
	}
	if unfinished {
		return stepWait
	}
	return stepQueue
}

// ReviveDependants makes the steps that a settle cancelled because step
// ended without success (and theirs in turn) wait again, and step's
// workflow not ended, in one transaction of t (the retry's, which queues
// step again), and returns how many steps it revived. Each is then settled as its parents end.
func ReviveDependants(ctx context.Context, t driver.Tables, step leasetype.TaskID) (int, error) {
	revived := 0
	err := t.InTx(ctx, func(tx driver.Tables) error {
		revived = 0
		if err := tx.WorkflowReopen(ctx, step); err != nil {
			return err
		}
		frontier := []leasetype.TaskID{step}
		for round := 0; len(frontier) > 0 && round < maxCascade; round++ {
			children, err := tx.StepsCancelledChildren(ctx, frontier, parentCancelled)
			if err != nil || len(children) == 0 {
				return err
			}
			n, err := tx.StepTasksRevive(ctx, children)
			if err != nil {
				return err
			}
			if err := tx.StepsUnsettle(ctx, children); err != nil {
				return err
			}
			revived += n
			frontier = children
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("leasegen: make the steps after task %d wait again: %w", step, err)
	}
	return revived, nil
}

// EndedWorkflow is a workflow that EndWorkflows ended.
type EndedWorkflow struct {
	Name   string
	Status leasetype.Status // SUCCESS, FAILED or CANCELLED
	Took   time.Duration    // from its enqueue to its last step's end
}

// EndWorkflows reads up to limit workflows not yet ended with ids above
// after, and ends each whose every step has ended: SUCCESS when all
// succeeded, FAILED when one failed, else CANCELLED. A workflow's end is
// written once, by a conditional write that checks again that no step is
// left (a retry may have queued one since the read), so the process that
// ended it alone returns it. It also returns the last id it read (0 when
// it read the last open workflow: the next pass starts from the first).
func EndWorkflows(ctx context.Context, t driver.Tables, after leasetype.WorkflowID, limit int) ([]EndedWorkflow, leasetype.WorkflowID, error) {
	open, err := t.WorkflowsOpen(ctx, after, limit)
	if err != nil {
		return nil, after, fmt.Errorf("read the workflows not yet ended: %w", err)
	}
	next := leasetype.WorkflowID(0)
	if len(open) == limit {
		next = open[len(open)-1].ID
	}
	var ended []EndedWorkflow
	for _, w := range open {
		if w.Unfinished > 0 || w.Steps == 0 {
			continue // a workflow without steps is retention's to delete
		}
		status := leasetype.StatusCancelled
		switch {
		case w.Failed > 0:
			status = leasetype.StatusFailed
		case w.Succeeded == w.Steps:
			status = leasetype.StatusSuccess
		}
		won, err := t.WorkflowEnd(ctx, w.ID, status, w.Took)
		if err != nil {
			return ended, after, fmt.Errorf("end workflow %d: %w", w.ID, err)
		}
		if won {
			ended = append(ended, EndedWorkflow{Name: w.Name, Status: status, Took: w.Took})
		}
	}
	return ended, next, nil
}

// PurgeWorkflows deletes the steps and edges of up to batch tasks that
// retention deleted, in one transaction, then up to batch workflows left
// without steps; it returns how many steps it deleted. A parent stays as
// long as a step after it waits (TaskPurge keeps it), so a purge never
// decides a step.
func PurgeWorkflows(ctx context.Context, t driver.Tables, batch int) (int, error) {
	ids, err := t.StepOrphans(ctx, batch)
	if err != nil {
		return 0, fmt.Errorf("leasegen: purge the steps of deleted tasks: %w", err)
	}
	n := 0
	if len(ids) > 0 {
		err = t.InTx(ctx, func(tx driver.Tables) error {
			if err := tx.TaskDepDeleteChildren(ctx, ids); err != nil {
				return err
			}
			n, err = tx.StepDeleteTasks(ctx, ids)
			return err
		})
		if err != nil {
			return 0, fmt.Errorf("leasegen: purge the steps of deleted tasks: %w", err)
		}
	}
	if _, err := t.WorkflowDeleteEmpty(ctx, batch); err != nil {
		return n, fmt.Errorf("leasegen: purge workflows without steps: %w", err)
	}
	return n, nil
}
